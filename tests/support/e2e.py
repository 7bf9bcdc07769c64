"""Tools and turns the end-to-end Neovim tests share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.guides import SCHEMA_TEXT
from tests.support.nvim import Editor

StartNvim = Callable[..., Editor]


CALCULATOR = (
    SCHEMA_TEXT
    + """
def calculate(self, args, input):
    num1, num2, operation = args.get("num1"), args.get("num2"), args.get("operation")
    if num1 is None or num2 is None:
        return {"status": "error", "data": "A number is missing or invalid"}
    if operation == "add":
        result = num1 + num2
    elif operation == "subtract":
        result = num1 - num2
    elif operation == "multiply":
        result = num1 * num2
    elif operation == "divide":
        if num2 == 0:
            return {"status": "error", "data": "Cannot divide by zero"}
        result = num1 / num2
    else:
        return {"status": "error", "data": "Invalid operation"}
    return {"status": "success", "data": result}

calculator = {
    "name": "calculator",
    "cmds": [calculate],
    "system_prompt": "## Calculator Tool\\nUse it for arithmetic on two numbers.",
    "schema": SCHEMA,
    "handlers": {
        "setup": lambda self, tools: None,
        "on_exit": lambda self, tools: None,
    },
    "output": {
        "success": lambda self, tools, cmd, stdout: tools.chat.add_tool_output(
            self, str(stdout[0])
        ),
        "error": lambda self, tools, cmd, stderr: tools.chat.add_tool_output(
            self, "Error: " + str(stderr[0])
        ),
        "prompt": lambda self, tools: "Perform the calculation `{} {} {}`?".format(
            self.args["num1"], self.args["operation"], self.args["num2"]
        ),
    },
}

tools = {
    "calculator": {
        "description": "Perform calculations",
        "callback": calculator,
        "opts": {"requires_approval": True},
    }
}
"""
)


ALLOW_SEQ = "opts = {'tools': {'run_command': {'allow': ['seq *']}}}\n"


def run_command_turn(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    project: Path,
    cmd: str,
    answer: str,
) -> tuple[Editor, int]:
    """A chat in `project` whose model runs `cmd` (allowed by a rule) and then says `answer`."""
    project.mkdir()
    provider_server.enqueue(
        openai_tool_calls([("r1", "run_command", {"cmd": cmd})]), openai_text(answer)
    )
    ed = start_nvim(config_file=config_file(ALLOW_SEQ), cwd=project)
    bufnr = ed.open_chat()
    ed.send("@{run_command} please")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    return ed, bufnr


def approved_turn(
    start_nvim: StartNvim, config: Path, project: Path, request: str
) -> tuple[Editor, int]:
    """Neovim in `project` (made here) with `config`, a chat whose next tool call the user
    approves, and `request` sent to it; returns at once (the turn still runs)."""
    project.mkdir()
    ed = start_nvim(config_file=config, cwd=project)
    bufnr = ed.open_chat()
    ed.answer("approve")
    ed.send(request)
    return ed, bufnr


ECHO = """
def echo(self, args, opts):
    return {"status": "success", "data": "echo says " + args["text"]}

tools = {
    "NAME": {
        "description": "Echo text",
        "cmds": [echo],
        "schema": {"type": "function", "function": {"name": "NAME", "parameters": {
            "type": "object", "properties": {"text": {"type": "string"}},
            "required": ["text"]}}},
        "opts": {"requires_approval": True},
    },
}
"""


def prompt_mode(config_file: Callable[[str], Path], extra: str) -> Path:
    """The loopback config with the openai adapter switched to prompt mode."""
    path = config_file(extra)
    text = path.read_text().replace(
        "'model': 'gpt-test'}", "'model': 'gpt-test', 'tool_calls': 'prompt'}"
    )
    path.write_text(text)
    return path
