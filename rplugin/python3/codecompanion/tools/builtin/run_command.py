"""run_command: one shell command in the project root, with a timeout and capped output."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ToolError
from ...sandbox.aftermath import settle
from ...sandbox.commands import refusal_note, sandbox_of
from ..model.function_tool import (
    Failure,
    FunctionOutput,
    arg_text,
    function_tool,
    nullable,
    one_line,
    time_limits,
)
from ..model.tool import Tool
from ..runtime.child_env import tool_environment
from ..runtime.process import FinishedProcess, run_process
from ..runtime.protocol import cap_output
from ._support.after_write import after_command
from ._support.paths import project_root
from ._support.plain_command import plain_argv, shell_like_env
from ._support.text_files import fence

if TYPE_CHECKING:
    from ...sandbox.launcher import Launch

DEFAULT_OPTS: dict[str, Any] = {
    "requires_approval": True,
    "require_cmd_approval": True,
    "allowed_in_yolo_mode": False,
    "command_arg": "cmd",
    "sandboxed": True,  # runs in the chat's command sandbox (see sandbox/)
    "timeout": 300_000,  # milliseconds, as CodeCompanion gives timeouts
    "max_chars": 0,
}

DESCRIPTION = (
    "Run a shell command (sh -c) in the project root and get its exit code, stdout and stderr. "
    "stdin is closed, so interactive prompts get no input: pass flags such as --yes instead. "
    "The command is killed after a timeout (5 minutes by default). It runs in a sandbox when "
    "the system has one (the result says which, or 'unconfined'): writes only in the project "
    "and $TMPDIR, no network. Depending on the user's settings, the user approves commands."
)

PROPERTIES = {
    "cmd": {"type": "string", "description": "The command line, as typed in a shell."},
    "unconfined": nullable(
        "boolean",
        "true: run outside the sandbox (network, writes outside the project); only after the "
        "sandbox refused this command. The user is always asked. Leave it null otherwise.",
    ),
}

Confine = Callable[[], "Launch | None"]

_PROMPT_HINTS = ("password", "passphrase", "[y/n]", "(y/n)", "continue?", "press enter")


def _status(result: FinishedProcess, timeout: float) -> str:
    if result.timed_out:
        return f"timed out (limit {timeout:g}s); the command and its children were killed"
    if result.exit_code is None:
        return "could not start"
    return f"exit code {result.exit_code}"


def _stream(label: str, text: str, limit: int) -> str:
    if not text:
        return f"{label}: (empty)"
    if limit > 0:
        text, _cut = cap_output(text, limit)
    return f"{label}:\n{fence(text)}"


def _report(cmd: str, result: FinishedProcess, timeout: float, limit: int, where: str) -> str:
    """The model's view: command, status, sandbox, closed stdin, then both streams."""
    status = f"status: {_status(result, timeout)}"
    lines = [f"$ {cmd}", status, f"sandbox: {where}", "stdin: closed"]
    if result.truncated:
        lines.append("note: output beyond the size limit was dropped")
    failed = result.timed_out or result.exit_code != 0
    tail = (result.stdout[-300:] + "\n" + result.stderr[-300:]).lower()
    asked = any(s.endswith((": ", "? ")) for s in (result.stdout, result.stderr))
    if failed and (asked or any(hint in tail for hint in _PROMPT_HINTS)):
        lines.append(
            "note: the command may have waited for input; stdin is closed (no input can be "
            "given), so use non-interactive flags."
        )
    lines.append(_stream("stdout", result.stdout, limit))
    lines.append(_stream("stderr", result.stderr, limit))
    return "\n".join(lines)


async def _run(
    cmd: str, root: Path, timeout: float, env: dict[str, str], confine: Confine = lambda: None
) -> FinishedProcess:
    """`sh -c cmd`, or the program itself when the shell would only split the line into words.

    A program that cannot be started directly (not found, not executable, a script without
    `#!`) goes to the shell after all, which runs it or says why not as it always does.
    `confine` prepares each start's sandbox (None: unconfined).
    """
    argv = plain_argv(cmd)
    if argv is not None:
        direct = shell_like_env(env, str(root))
        result = await run_process(argv, cwd=root, timeout=timeout, env=direct, sandbox=confine())
        if result.started:
            return result
    return await run_process(
        ["sh", "-c", cmd], cwd=root, timeout=timeout, env=env, sandbox=confine()
    )


def _confinement(self: Tool, root: Path, unconfined: bool) -> tuple[Confine, str, str]:
    """How this call's processes are confined: (prepare one start, where it ran, model note)."""
    box = sandbox_of(self.tools)
    if box is None or not box.active or unconfined:
        where = "unconfined" + (" (the user approved leaving the sandbox)" if unconfined else "")
        return (lambda: None), where, ""
    return partial(box.launch, root), box.describe(), refusal_note(box, False, can_leave=True)


async def run(self: Tool, args: dict[str, Any]) -> FunctionOutput:
    """Run the command; a non-zero exit or a timeout is an error result with the output."""
    cmd = arg_text(args, "cmd")
    if not cmd.strip():
        raise ToolError("`cmd` is empty.")
    timeout, own = time_limits(self.opts, float(DEFAULT_OPTS["timeout"]) / 1000)
    # 0: no cap per stream here; the tool system caps the whole result and keeps the full
    # output for the user (gO). A positive max_chars caps each stream on its own.
    limit = int(self.opts.get("max_chars") or 0)
    root, env = project_root(self.tools), tool_environment(self.tools)
    unconfined = args.get("unconfined") is True
    confine, where, note = _confinement(self, root, unconfined)
    result = await _run(cmd, root, own, env, confine)
    text = _report(cmd, result, timeout, limit, where)
    if not unconfined:  # a repository it made is held until the user says whether to keep it
        made = await settle(sandbox_of(self.tools), root, self.tools.confirm)
        text = f"{text}\n{made}" if made else text
    text += await after_command(self, root)  # files open in Neovim that the command changed
    short = one_line(cmd, 60)
    if result.timed_out:
        raise Failure(text, f"`{short}` timed out (limit {timeout:g}s)")
    if result.exit_code != 0:
        text = f"{text}\n{note}" if note else text
        raise Failure(text, f"`{short}` failed ({_status(result, timeout)}; {where})")
    data = {"exit_code": 0, "duration": round(result.duration, 3)}
    return FunctionOutput(text, f"Ran `{short}` (exit 0)", data)


def _cmd(self: Tool) -> str:
    value = self.args.get("cmd")
    return value if isinstance(value, str) else str(value)


def _question(self: Tool) -> str:
    """The approval question, saying where the command would run."""
    box = sandbox_of(self.tools)
    if self.args.get("unconfined") is True and box is not None and box.active:
        return f"Run the command `{_cmd(self)}` OUTSIDE the sandbox (unconfined)?"
    where = box.describe() if box is not None else "unconfined"
    return f"Run the command `{_cmd(self)}`? ({where})"


TOOL = function_tool(
    "run_command",
    DESCRIPTION,
    PROPERTIES,
    run,
    prompt=_question,
    opts=DEFAULT_OPTS,
)
