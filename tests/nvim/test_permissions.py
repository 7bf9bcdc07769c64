"""Permission modes in a real Neovim: set in the config file, read and switched with mode() and
the keymap, shown by status(); in `sandboxed` mode a command runs in the sandbox unasked."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from codecompanion.sandbox.probe import detect
from tests.support.nvim import Editor, ProjectNvim, wait_for

StartNvim = Callable[..., Editor]
MODE = "return require('codecompanion').mode()"


def test_the_mode_is_read_switched_and_shown(
    start_nvim: StartNvim, config_file: Callable[[str], Path]
) -> None:
    ed = start_nvim(config_file=config_file("permissions = {'mode': 'edits'}\n"))
    ed.open_chat()
    assert wait_for(lambda: ed.lua(MODE)) == "edits"
    # The sandbox's kind joins once the host's probe (off its event loop) has answered.
    kind = wait_for(lambda: ed.lua("return (require('codecompanion').status_info() or {}).sandbox"))
    assert kind in ("landlock", "none")
    # status() shows the new mode at once, in the same call as the switch.
    switched = ed.lua(
        "local cc = require('codecompanion') return { cc.mode('sandboxed'), cc.status() }"
    )
    assert switched[0] == "sandboxed" and switched[1].startswith(f"sandboxed ({kind})")
    assert ed.lua("local cc = require('codecompanion') cc.mode('next') return cc.mode()") == "yolo"
    ed.lua("require('codecompanion').mode('sandboxed')")
    wait_for(lambda: ed.lua(MODE) == "sandboxed")
    ed.nvim.input("gtm")  # the keymap cycles: ask, edits, sandboxed, yolo
    wait_for(lambda: ed.lua(MODE) == "yolo")
    assert ed.lua("return vim.b.codecompanion_yolo") is True
    ed.nvim.input("gtm")
    wait_for(lambda: ed.lua(MODE) == "ask")


@pytest.mark.skipif(detect().kind != "landlock", reason="no Landlock sandbox here")
def test_sandboxed_mode_runs_a_command_confined_without_asking(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, tmp_path: Path
) -> None:
    cmd = "echo made > made.txt && echo x > ../escaped.txt"
    provider_server.enqueue(
        openai_tool_calls([("c1", "run_command", {"cmd": cmd})]), openai_text("done")
    )
    ed = project_nvim(setup={"permissions": {"mode": "sandboxed"}})
    ed.open_chat()
    assert wait_for(lambda: ed.lua(MODE)) == "sandboxed"  # setup()'s permissions table
    ed.send("@{run_command} go")
    ed.wait_event("CodeCompanionChatDone", timeout=20)
    assert "ToolApprovalRequested" not in " ".join(ed.event_names())
    result = json.dumps(provider_server.wait_for_requests(2)[1].body)
    assert "sandbox: landlock sandbox" in result
    assert "Permission denied" in result and "unconfined" in result  # the way out is named
    assert (project / "made.txt").read_text() == "made\n"
    assert not (tmp_path / "escaped.txt").exists()
