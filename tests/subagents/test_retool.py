"""A chat's tool system made again (a cleared demo chat's fresh folder) has what a new chat's
has: its subagents, for the new folder, and its hooks' lines in its own buffer."""

from __future__ import annotations

from pathlib import Path

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings
from codecompanion.render_ops import Block
from codecompanion.workspace import HostOptions, Workspace
from tests.support.chat import RecordingView
from tests.support.fakes import RecordingEvents, ScriptedApprover

CONFIG = """\
def seen(event):
    return None

hooks = {"PostToolUse": [{"hooks": [seen]}]}
"""


def test_a_chat_made_again_keeps_its_subagents_and_hook_lines(tmp_path: Path) -> None:
    config = tmp_path / "codecompanion.py"
    config.write_text(CONFIG)
    ws = Workspace(HostOptions(config_file=str(config), data_dir=str(tmp_path / "d")), env={})
    adapter = create_adapter(AdapterSettings(name="openai_compatible", url="http://x", model="m"))
    view, approver, events = RecordingView(), ScriptedApprover(), RecordingEvents()
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    chat = ws.chat("c1", adapter, view, events, approver=approver, cwd=first, yolo=True)
    old = chat.tools
    ws.retool(chat, approver=approver, events=events, cwd=second)
    assert chat.tools is not old and chat.tools.cwd == second and chat.tools.yolo
    agents = chat.tools.agents
    assert agents is not None and agents.root == second and agents.parent is chat
    hooks = chat.tools.hooks
    assert hooks is not None
    hooks.say("hook seen(): a line")
    assert Block(text="_[hook seen(): a line]_") in view.ops
    assert ("hook seen(): a line", "warn") in view.notices
