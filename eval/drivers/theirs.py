"""The Lua CodeCompanion (the snapshot in ../shared/anchor), driven on the same tasks.

Its commands run unconfined, so its Neovim runs under bubblewrap where it is installed: the
whole system read-only, a private /tmp and home, and only the run's project and scratch
folders writable. Without bwrap it runs as it is, on the run's throwaway copy of the project.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

from ..task import Task
from ..transcript import Transcript, read_messages
from .editor import Editor, xdg_env

INIT = Path(__file__).resolve().parent / "theirs_init.lua"
MALFORMED = re.compile(r"You made an error in calling the|Tool `[^`]*` not found")
IDLE_S = 20.0  # quiet this long with no request out and no tool running: the turn ended


def confinement(project: Path, scratch: Path, anchor: Path) -> list[str]:
    """bwrap's argv prefix (empty when bwrap is missing)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return []
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += ["--tmpfs", "/tmp", "--tmpfs", os.path.expanduser("~")]
    for folder in (anchor, project, scratch):
        argv += ["--bind", str(folder), str(folder)]
    return [*argv, "--die-with-parent", "--chdir", str(project)]


class Theirs:
    """Runs a task through CodeCompanion.nvim from `anchor` (plenary.nvim/, codecompanion.nvim/)."""

    name = "theirs"

    def __init__(self, anchor: Path) -> None:
        self.anchor = anchor

    def run(self, task: Task, project: Path, base_url: str, scratch: Path) -> Transcript:
        """One run: open a chat in `project`, send the task, wait for the turn to end."""
        env = {
            **xdg_env(scratch),
            "EVAL_ANCHOR_ROOT": str(self.anchor),
            "EVAL_URL": base_url,
            "HOME": str(scratch),
        }
        editor = Editor(INIT, env, confinement(project, scratch, self.anchor))
        try:
            return self._turn(editor, task, project)
        finally:
            editor.close()

    def _turn(self, editor: Editor, task: Task, project: Path) -> Transcript:
        editor.nvim.api.set_current_dir(str(project))
        editor.lua("_G.eval_state.send(...)", task.message(), task.max_rounds)
        deadline = time.monotonic() + task.timeout_s
        ended = self._wait(editor, task, deadline)
        state = editor.lua(
            "return { prompts = _G.eval_state.prompts, events = _G.eval_state.events }"
        )
        messages = editor.lua("return _G.eval_state.messages()")
        calls, answer = read_messages(messages, MALFORMED)
        return Transcript(answer, calls, ended, len(state["prompts"]))

    @staticmethod
    def _wait(editor: Editor, task: Task, deadline: float) -> str:
        """How the turn ended: done, max_rounds (stopped), stalled or timeout."""
        quiet_since: float | None = None
        while time.monotonic() < deadline:
            events = list(editor.lua("return _G.eval_state.events"))
            if "ChatDone" in events:
                return "done"
            if editor.lua("return _G.eval_state.stopped"):
                return "max_rounds"
            if editor.lua("return _G.eval_state.idle()"):
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since > IDLE_S:
                    return "stalled"
            else:
                quiet_since = None
            time.sleep(1.0)
        return "timeout"
