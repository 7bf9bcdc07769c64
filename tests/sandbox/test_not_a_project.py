# ruff: noqa: E501 - the table of attacks reads best one line per attack

"""A project is a project: a chat opened in `~`, `/` or a configuration folder lets commands
read but not write it; the user's configuration, the plugin's folders and the files the host
runs (its config file, present or not, what that file imports, plugins' modules) are read-only
wherever they are. Real commands in the real sandbox, in `sandboxed` and `yolo` modes."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

from codecompanion.messages import ToolCall
from codecompanion.sandbox.commands import CommandSandbox
from codecompanion.sandbox.probe import detect
from codecompanion.sandbox.user_places import UserPlaces
from codecompanion.tools.runtime.system import ToolSystem
from codecompanion.workspace import HostOptions, Workspace
from tests.support.fakes import ScriptedApprover
from tests.support.tools import builtin_system

FOUND = detect()
needs_sandbox = pytest.mark.skipif(
    FOUND.kind != "landlock", reason=f"no Landlock sandbox here: {FOUND.reason}"
)
MODES = ["sandboxed", "yolo"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway HOME (the commands' `~` too), with the files an attacker wants."""
    found, env = home_like(tmp_path)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "CODECOMPANION_LOG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", env["HOME"])
    return found


def home_like(base: Path) -> tuple[Path, dict[str, str]]:
    """A throwaway HOME with the files an attacker wants, and the environment naming it."""
    home = base / "home"
    for folder in (".config/nvim", ".local/share/nvim/codecompanion/checkpoints", "code/app"):
        (home / folder).mkdir(parents=True)
    (home / ".bashrc").write_text("# bashrc\n")
    (home / ".config/nvim/init.lua").write_text("-- init\n")
    env = {**os.environ, "HOME": str(home)}
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "CODECOMPANION_LOG"):
        env.pop(name, None)
    return home, env


def workspace(
    home: Path, env: dict[str, str], config: Path | None = None, **perm: object
) -> Workspace:
    options = HostOptions(
        config_file=str(config or home / ".config/nvim/codecompanion.py"),
        data_dir=str(home / ".local/share/nvim/codecompanion"),
        permissions=dict(perm),
    )
    return Workspace(options, env)


def system(ws: Workspace, project: Path, mode: str) -> tuple[ToolSystem, CommandSandbox]:
    box = ws.command_sandbox(project)
    tools, _chat = builtin_system(
        project,
        "run_command",
        approver=ScriptedApprover(default="reject"),
        sandbox=box,
        mode=mode,
    )
    return tools, box


async def run(tools: ToolSystem, cmd: str) -> tuple[str, str]:
    call_id = f"c{uuid.uuid4().hex[:6]}"
    outcome = await tools.run([ToolCall(call_id, "run_command", {"cmd": cmd})])
    assert tools.approver.requests == []  # type: ignore[attr-defined]
    return outcome.statuses[call_id], tools.chat.result(call_id).for_llm  # type: ignore[attr-defined]


def attacks(home: Path) -> dict[str, tuple[str, Path]]:
    """Each attack: the command line, and the file it must not change or make."""
    config = home / ".config/nvim/codecompanion.py"
    store = home / ".local/share/nvim/codecompanion/checkpoints"
    return {
        "bashrc": ("echo pwned >> ~/.bashrc", home / ".bashrc"),
        "init.lua": ("echo 'os.execute(1)' >> ~/.config/nvim/init.lua", home / ".config/nvim/init.lua"),
        "new profile": ("echo pwned > ~/.profile", home / ".profile"),
        "config file made": (f"echo 'import os' > {config}", config),
        "checkpoint store": (f"echo x > {store}/planted", store / "planted"),
        "a project inside": ("echo x > ~/code/app/planted.txt", home / "code/app/planted.txt"),
    }  # fmt: skip


def snapshot(paths: list[Path]) -> dict[Path, bytes | None]:
    return {p: p.read_bytes() if p.exists() else None for p in paths}


def test_which_folders_are_no_project(tmp_path: Path) -> None:
    home, env = home_like(tmp_path)
    places = UserPlaces.find(env, None, [str(home / ".local/share/nvim/codecompanion")])
    assert places.not_a_project(str(home)) == "~ is your home folder, not a project"
    assert places.not_a_project("/") == "/ is the whole system, not a project"
    assert "holding" in (places.not_a_project(str(home.parent)) or "")
    assert places.not_a_project(str(home / ".config/nvim")) == "~/.config/nvim is inside ~/.config"
    assert places.not_a_project(str(home / ".local")) == (
        "~/.local holds ~/.local/share/nvim/codecompanion"
    )
    assert places.not_a_project(str(home / "code/app")) is None
    assert places.not_a_project(str(tmp_path / "elsewhere")) is None


@needs_sandbox
@pytest.mark.parametrize("mode", MODES)
async def test_a_chat_opened_in_home_cannot_write_home(
    tmp_path: Path, home: Path, mode: str
) -> None:
    env = dict(os.environ)
    tools, box = system(workspace(home, env), home, mode)
    assert box.narrowed == "~ is your home folder, not a project"
    assert "not this folder: ~ is your home folder" in box.describe()
    found = attacks(home)
    before = snapshot([path for _cmd, path in found.values()])
    for name, (cmd, _path) in found.items():
        status, text = await run(tools, cmd)
        assert status == "error", (name, text)
        assert "not this folder" in text and "~ is your home folder" in text, text
    assert snapshot(list(before)) == before
    status, text = await run(tools, "cat ~/.bashrc && echo t > $TMPDIR/t && cat $TMPDIR/t")
    assert status == "success" and "# bashrc" in text, text  # reading and its temp still work


@needs_sandbox
@pytest.mark.parametrize("mode", MODES)
async def test_a_chat_opened_in_root_cannot_write_anything(
    tmp_path: Path, home: Path, mode: str
) -> None:
    env = dict(os.environ)
    tools, box = system(workspace(home, env), Path("/"), mode)
    assert box.narrowed == "/ is the whole system, not a project"
    outside = tmp_path / "outside.txt"
    status, text = await run(tools, f"echo x > {outside}")
    assert status == "error" and not outside.exists(), text


@needs_sandbox
async def test_a_configuration_folder_is_no_project(tmp_path: Path, home: Path) -> None:
    env = dict(os.environ)
    tools, box = system(workspace(home, env), home / ".config/nvim", "sandboxed")
    assert box.narrowed == "~/.config/nvim is inside ~/.config"
    status, text = await run(tools, "echo x >> init.lua")
    assert status == "error", text
    assert (home / ".config/nvim/init.lua").read_text() == "-- init\n"


@needs_sandbox
@pytest.mark.parametrize("mode", MODES)
async def test_in_a_real_project_the_same_places_stay_read_only(
    tmp_path: Path, home: Path, mode: str
) -> None:
    env = dict(os.environ)
    ws = workspace(home, env, writable=[str(home / ".local"), str(home / ".config")])
    tools, box = system(ws, home / "code/app", mode)
    assert box.narrowed is None
    found = attacks(home)
    del found["a project inside"]
    before = snapshot([path for _cmd, path in found.values()])
    for name, (cmd, _path) in found.items():
        status, text = await run(tools, cmd)
        assert status == "error", (name, text)
    assert snapshot(list(before)) == before
    status, text = await run(tools, "echo ok > made.txt && echo ok > ~/.local/ok.txt")
    assert status == "success", text  # the project and the writable folders themselves


@needs_sandbox
@pytest.mark.parametrize("mode", MODES)
async def test_a_config_file_a_command_makes_is_set_aside(
    tmp_path: Path, home: Path, mode: str
) -> None:
    env = dict(os.environ)
    project = home / "code/app"
    config = project / "codecompanion.py"  # named there by $CODECOMPANION_CONFIG, say
    tools, _box = system(workspace(home, env, config), project, mode)
    status, text = await run(tools, f'echo \'open("/tmp/ran", "w")\' > {config.name}')
    assert status == "success", text
    assert not config.exists()
    assert "a file the plugin itself runs; it was renamed" in text
    (aside,) = [p for p in project.iterdir() if p.name.startswith("codecompanion.py-held")]
    assert "ran" in aside.read_text()


@needs_sandbox
async def test_what_the_config_imports_and_plugins_modules_are_read_only(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = dict(os.environ)
    project = home / "code/app"
    helpers = project / "cc_helpers_x1.py"
    helpers.write_text("VALUE = 1\n")
    config = project / "codecompanion.py"
    config.write_text(
        "import sys\nsys.path.insert(0, __file__.rsplit('/', 1)[0])\nimport cc_helpers_x1\n"
    )
    site = tmp_path / "site"
    (site / "ccplug_x1-0.1.dist-info").mkdir(parents=True)
    (site / "ccplug_x1.py").write_text("TOOL = {'name': 'ccplug_x1', 'cmds': [], 'schema': {}}\n")
    (site / "ccplug_x1-0.1.dist-info/METADATA").write_text("Name: ccplug-x1\nVersion: 0.1\n")
    (site / "ccplug_x1-0.1.dist-info/entry_points.txt").write_text(
        "[codecompanion.tools]\nccplug_x1 = ccplug_x1:TOOL\n"
    )
    monkeypatch.syspath_prepend(str(site))
    try:
        ws = workspace(home, env, config, writable=[str(site)])
        assert str(helpers) in ws.config.imports
        assert str(site / "ccplug_x1.py") in ws.plugins.files, ws.plugins.errors
        tools, _box = system(ws, project, "sandboxed")
        for target in (helpers, site / "ccplug_x1.py"):
            status, text = await run(tools, f"echo 'import os' >> {target}")
            assert status == "error", text
        status, text = await run(tools, f"echo ok > {site}/other.txt")
        assert status == "success", text
    finally:
        for name in ("cc_helpers_x1", "ccplug_x1"):
            sys.modules.pop(name, None)
