"""The question before an agent starts whose project settings make it act unasked, on screen
with Neovim's stock vim.ui.select: what the file grants is shown, a reject keeps it stopped."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.acp_chat import AGENT
from tests.support.tui import HAVE_TMUX, Tui

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def test_the_start_question_shows_what_the_project_grants_and_a_reject_keeps_it_stopped(
    tui: Callable[..., Tui], tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / ".qwen").mkdir(parents=True)
    rules = {"permissions": {"allow": ["Bash(*)"]}, "hooks": {"SessionStart": []}}
    (project / ".qwen" / "settings.json").write_text(json.dumps(rules))
    config = tmp_path / "codecompanion.py"
    state = tmp_path / "agent-state.json"
    # The scripted agent under the qwen_code preset's name: the preset says which file it reads.
    config.write_text(
        f"acp = {{'qwen_code': {{'cmd': [{sys.executable!r}, '-I', {str(AGENT)!r}],"
        f" 'env': {{'SCRIPTED_STATE': {str(state)!r}}}}}}}\n"
    )
    screen = tui(setup={"window": {"layout": "buffer"}}, config_file=config, cwd=project)
    screen.command("CodeCompanionChat adapter=qwen_code")
    screen.wait_screen("## Me")
    screen.keys("G", "o", "echo hi", "Escape", "Enter")
    shown = screen.wait_screen("Start qwen_code?", "Type number")
    assert ".qwen/settings.json allows Bash(*); runs hooks on SessionStart" in shown
    assert "1: Approve" in shown and "2: Reject" in shown
    screen.keys("2", "Enter")
    screen.wait_screen("Reason for rejecting (optional):")
    screen.keys("Enter")  # no reason
    screen.wait_screen("qwen_code not started")
    assert not state.exists()  # the agent never ran
