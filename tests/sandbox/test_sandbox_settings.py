"""The `permissions` table (config file and setup()), and the macOS Seatbelt profile's text (it
cannot run here: only what it says is checked)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codecompanion.config import load_config
from codecompanion.sandbox.seatbelt import command, profile
from codecompanion.sandbox.settings import DEFAULT_DENY_READ, read_permissions
from codecompanion.workspace import HostOptions, Workspace


def test_defaults_and_additions() -> None:
    permissions = read_permissions({})
    assert (permissions.mode, permissions.sandbox, permissions.network) == ("ask", True, False)
    extended = read_permissions({"deny_read": ["~/secrets"], "mode": "sandboxed"})
    assert extended.deny_read == (*DEFAULT_DENY_READ, "~/secrets") and extended.mode == "sandboxed"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"mode": "fast"}, "permissions.mode must be one of ask, edits, sandboxed, yolo"),
        ({"sandbox": "yes"}, "permissions.sandbox must be true or false"),
        ({"deny_read": "~/.ssh"}, "permissions.deny_read must be a list of strings"),
        ({"max_processes": 0}, "permissions.max_processes must be a positive whole number"),
        ({"netwrok": True}, "unknown permissions key(s): netwrok"),
    ],
)
def test_a_bad_value_is_one_clear_line(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_permissions(raw)


def test_the_config_file_and_setup_set_it(tmp_path: Path) -> None:
    path = tmp_path / "codecompanion.py"
    path.write_text("permissions = {'mode': 'edits', 'network': True}\n")
    workspace = Workspace(HostOptions(config_file=str(path), data_dir=str(tmp_path / "data")))
    assert workspace.permissions().mode == "edits" and workspace.permissions().network
    workspace.options.permissions = {"mode": "sandboxed"}  # setup()'s keys win
    assert workspace.permissions().mode == "sandboxed" and workspace.permissions().network
    path.write_text("permissions = {'mode': 'fast'}\n")
    broken = load_config(path)
    assert broken.error is not None and "permissions.mode must be one of" in broken.error


def test_the_seatbelt_profile_says_what_the_linux_sandbox_does() -> None:
    text = profile("/p", "/t", ["/p/codecompanion.py"], ["/home/u/.ssh"], network=False)
    assert text.startswith("(version 1)\n(deny default)\n")
    assert '(allow file-write* (subpath "/p") (subpath "/t"))' in text
    assert '(deny file-write* (subpath "/p/.git"))' in text
    assert '(deny file-read* (subpath "/home/u/.ssh"))' in text
    assert "network" not in text
    assert "(allow network*)" in profile("/p", "/t", [], [], network=True)
    assert 'subpath "/a\\"b"' in profile('/a"b', "/t", [], [], network=False)
    assert command(["ls"], text)[:2] == ["sandbox-exec", "-p"]
