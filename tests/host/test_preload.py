"""The host's preload: after it, a chat's first tool round (read_file calls, then a command in
the kernel sandbox where there is one) imports nothing of the tool machinery; without it the
same round imports the runner, the builtins' helpers and more. Neither imports the schema
library (jsonschema): the calls' arguments are plainly valid. Each
case runs in a fresh interpreter, through the real chat, tool system and adapter, against the
loopback server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "rplugin" / "python3"
REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import asyncio, json, sys
from pathlib import Path
from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings
from codecompanion.chat.chat import Chat
from codecompanion.loopback.server import LoopbackServer, openai_text
from codecompanion.loopback.turns import openai_tool_calls
from codecompanion.nvim.preload import preload
from codecompanion.tools import tool_registry
from tests.support.builder import built_tool_system
from tests.support.chat import RecordingView
from tests.support.fakes import RecordingEvents, ScriptedApprover

project = Path(sys.argv[1])
for n in range(3):
    (project / f"f{n}.py").write_text(f"def f{n}():\\n    return {n}\\n")
registry = tool_registry({}, {}, tool_opts={"run_command": {"allow": ["true"]}})


async def main():
    if sys.argv[2] == "preload":  # as the host does: a mention looks the tool up, then preload
        assert registry.get("read_file") is not None
        await preload()
    with LoopbackServer() as server:
        reads = [(f"c{n}", "read_file", {"filepath": f"f{n}.py", "start_line_number_base_zero": 0,
                  "end_line_number_base_zero": -1}) for n in range(3)]
        server.enqueue(openai_tool_calls(reads), openai_tool_calls([("c9", "run_command",
                       {"cmd": "true"})]), openai_text("done"))
        adapter = create_adapter(AdapterSettings(name="openai_compatible",
                                                 url=server.url + "/v1", model="m"))
        tools = lambda chat: built_tool_system(chat=chat, registry=registry,
            approver=ScriptedApprover(), events=RecordingEvents(), cwd=project,
            permissions={"sandbox": True})
        chat = Chat(chat_id="p", adapter=adapter, view=RecordingView(), tool_factory=tools)
        before = set(sys.modules)
        assert chat.submit("@{read_file} @{run_command} read them, then run true")
        await asyncio.wait_for(asyncio.shield(chat._task), 30)
        await adapter.aclose()
        results = [m.content or "" for m in chat.messages if m.role == "tool"]
        assert len(results) == 4 and "return 2" in results[2], results
        print(json.dumps(sorted(set(sys.modules) - before)))

asyncio.run(main())
"""

# Imported by a first round, never by one after preload: the tool machinery's big parts.
MACHINERY = (
    "codecompanion.tools.builtin.read_file",
    "codecompanion.tools.builtin.run_command",
    "codecompanion.tools.builtin._support.text_files",
)


def first_round_imports(tmp_path: Path, mode: str) -> list[str]:
    """The modules a chat's first tool round imported (in a fresh interpreter)."""
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), mode],
        env={
            "PYTHONPATH": f"{PACKAGE_ROOT}:{REPO}",
            "HOME": str(tmp_path),
            "PATH": "/usr/bin:/bin",
        },
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return list(json.loads(out.stdout.splitlines()[-1]))


def test_after_preload_a_first_tool_round_imports_nothing_of_the_package(tmp_path: Path) -> None:
    loaded = first_round_imports(tmp_path, "preload")
    ours = [name for name in loaded if name.startswith(("codecompanion", "jsonschema"))]
    assert ours == [], "\n".join(ours)


def test_without_preload_the_same_round_imports_the_machinery(tmp_path: Path) -> None:
    loaded = first_round_imports(tmp_path, "none")
    assert set(MACHINERY) <= set(loaded)
    assert not [name for name in loaded if name.startswith("jsonschema")]


def test_each_tool_a_chat_offers_is_told_to_the_host_with_its_event() -> None:
    from codecompanion.nvim.app import LuaEvents

    class View:
        def __init__(self) -> None:
            self.ops: list[object] = []

        def render(self, ops: list[object]) -> None:
            self.ops.extend(ops)

    offered: list[str] = []
    view = View()
    events = LuaEvents(view, offered.append)  # type: ignore[arg-type]
    events.fire("ChatToolAdded", {"id": "c", "tool": "read_file"})
    events.fire("ToolStarted", {"id": "c", "tool": "grep_search"})
    assert offered == ["read_file"]
    assert len(view.ops) == 2  # each event still fired in Lua
