"""This plugin, driven as a user would: a chat opened in the project, the task typed and sent."""

from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..task import Task
from ..transcript import Transcript, read_messages
from .editor import Editor, xdg_env

ROOT = Path(__file__).resolve().parents[2]
INIT = Path(__file__).resolve().parent / "ours_init.lua"
MALFORMED = re.compile(
    r"is not available in this chat|are not a JSON object|do not match its schema"
)
SAVE_WAIT_S = 15.0


@dataclass(frozen=True)
class OursOptions:
    """How this plugin's adapter is set up for the run."""

    tool_calls: str = "auto"
    constrained_calls: bool = False
    extra_config: str = ""
    # The plugin checkout to run (its Lua and its Python package), so a long run can use a
    # fixed snapshot while this one changes; its dependencies come from the running venv.
    root: Path = ROOT


def config_text(task: Task, url: str, options: OursOptions) -> str:
    """The user's config file: the model behind the proxy, the task's mode and round limit."""
    adapter = {
        "url": url,
        "model": "local",
        "read_timeout": task.timeout_s,
        "tool_calls": options.tool_calls,
        # Every call runs unasked, as CodeCompanion is set up to run them.
        "ask_recovered_calls": False,
    }
    if options.constrained_calls:
        adapter["constrained_calls"] = True
    return (
        "adapter = 'openai_compatible'\n"
        f"adapters = {{'openai_compatible': {adapter!r}}}\n"
        f"permissions = {{'mode': {task.mode!r}}}\n"
        f"opts = {{'tool_system': {{'max_auto_rounds': {max(task.max_rounds - 1, 1)}}}}}\n"
        + options.extra_config
    )


class Ours:
    """Runs a task through this plugin (the checkout at ROOT, with its .venv)."""

    name = "ours"

    def __init__(self, options: OursOptions | None = None) -> None:
        self.options = options or OursOptions()

    def run(self, task: Task, project: Path, base_url: str, scratch: Path) -> Transcript:
        """One run: open a chat in `project`, send the task, wait for the turn to end."""
        config = scratch / "codecompanion.py"
        config.write_text(config_text(task, f"{base_url}/v1", self.options))
        setup = {"python": sys.executable, "start": "lazy", "config_file": str(config)}
        env = {
            **xdg_env(scratch),
            "EVAL_PLUGIN_ROOT": str(self.options.root),
            "EVAL_SETUP": json.dumps(setup),
            "PYTHONPATH": str(self.options.root / "rplugin" / "python3"),
            "OPENAI_API_KEY": "",
        }
        editor = Editor(INIT, env)
        try:
            return self._turn(editor, task, project, scratch)
        finally:
            editor.close()

    def _turn(self, editor: Editor, task: Task, project: Path, scratch: Path) -> Transcript:
        nvim = editor.nvim
        nvim.api.set_current_dir(str(project))
        nvim.command("CodeCompanionChat")
        buf = nvim.current.buffer
        buf.append(task.message().split("\n"))
        nvim.input("G<CR>")
        deadline = time.monotonic() + task.timeout_s
        done = editor.wait(lambda: "CodeCompanionChatDone" in _events(editor), deadline)
        prompts = list(editor.lua("return _G.eval_state.prompts"))
        saved = _saved_chat(scratch, time.monotonic() + SAVE_WAIT_S, bool(done))
        calls, answer = read_messages(saved, MALFORMED)
        if not answer and not done:
            answer = "\n".join(buf[:])[-4000:]
        ended = "done" if done else "timeout"
        if any("in a row" in p for p in prompts):
            ended = "max_rounds"
        return Transcript(answer, calls, ended, len(prompts))


def _events(editor: Editor) -> list[str]:
    return list(editor.lua("return _G.eval_state.events"))


def _saved_chat(scratch: Path, deadline: float, wait: bool) -> list[dict[str, object]]:
    """The messages of the chat saved under the run's data folder (empty if none was saved)."""
    folder = scratch / "data" / "nvim" / "codecompanion" / "chats"
    while True:
        found = sorted(folder.glob("*.json")) if folder.is_dir() else []
        if found:
            try:
                messages = json.loads(found[-1].read_text()).get("messages") or []
                return [m for m in messages if isinstance(m, dict)]
            except (OSError, ValueError):
                pass
        if not wait or time.monotonic() > deadline:
            return []
        time.sleep(0.5)
