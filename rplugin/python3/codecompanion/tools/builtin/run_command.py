"""run_command: one shell command in the project root, with a timeout and capped output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import ToolError
from ...sandbox.commands import refusal_note
from ..model.arguments import arg_text
from ..model.contract import CommandRun, ToolContext
from ..model.function_tool import (
    Failure,
    FunctionOutput,
    TimedOut,
    function_tool,
    nullable,
    one_line,
    time_limits,
)
from ..runtime.protocol import cap_output
from ._support.after_write import after_command
from ._support.paths import project_root
from ._support.plain_command import plain_argv, shell_like_env
from ._support.text_files import fence

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

_PROMPT_HINTS = ("password", "passphrase", "[y/n]", "(y/n)", "continue?", "press enter")


def _status(result: CommandRun, timeout: float) -> str:
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


def _report(cmd: str, result: CommandRun, timeout: float, limit: int, where: str) -> str:
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
    ctx: ToolContext, cmd: str, root: Path, timeout: float, confined: bool
) -> CommandRun:
    """`sh -c cmd`, or the program itself when the shell would only split the line into words.

    A program that cannot be started directly (not found, not executable, a script without
    `#!`) goes to the shell after all, which runs it or says why not as it always does.
    """
    run = ctx.commands.run
    argv = plain_argv(cmd)
    if argv is not None:
        direct = shell_like_env(ctx.environment(), str(root))
        result = await run(argv, cwd=root, timeout=timeout, env=direct, confined=confined)
        if result.started:
            return result
    return await run(["sh", "-c", cmd], cwd=root, timeout=timeout, confined=confined)


def _confinement(ctx: ToolContext, unconfined: bool) -> tuple[bool, str, str]:
    """Whether this call's processes are confined, where they ran, and the model's note."""
    box = ctx.sandbox
    if box is None or not box.active or unconfined:
        where = "unconfined" + (" (the user approved leaving the sandbox)" if unconfined else "")
        return False, where, ""
    return True, box.describe(), refusal_note(box, False, can_leave=True)


async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
    """Run the command; a non-zero exit is an error result with the output, running out of
    time a timeout."""
    cmd = arg_text(args, "cmd")
    if not cmd.strip():
        raise ToolError("`cmd` is empty.")
    timeout, own = time_limits(ctx.opts, float(DEFAULT_OPTS["timeout"]) / 1000)
    # 0: no cap per stream here; the tool system caps the whole result and keeps the full
    # output for the user (gO). A positive max_chars caps each stream on its own.
    limit = int(ctx.opts.get("max_chars") or 0)
    confined, where, note = _confinement(ctx, args.get("unconfined") is True)
    result = await _run(ctx, cmd, project_root(ctx), own, confined)
    text = _report(cmd, result, timeout, limit, where)
    # A git repository a confined command made, held until the user said whether to keep it.
    text = f"{text}\n{result.notes}" if result.notes else text
    text += await after_command(ctx, project_root(ctx))  # open files the command changed
    short = one_line(cmd, 60)
    if result.timed_out:
        raise TimedOut(text, f"`{short}` timed out (limit {timeout:g}s)")
    if result.exit_code != 0:
        text = f"{text}\n{note}" if note else text
        raise Failure(text, f"`{short}` failed ({_status(result, timeout)}; {where})")
    data = {"exit_code": 0, "duration": round(result.duration, 3)}
    return FunctionOutput(text, f"Ran `{short}` (exit 0)", data)


def _question(ctx: ToolContext, args: dict[str, Any]) -> str:
    """The approval question, saying where the command would run."""
    box = ctx.sandbox
    value = args.get("cmd")
    cmd = value if isinstance(value, str) else str(value)
    if args.get("unconfined") is True and box is not None and box.active:
        return f"Run the command `{cmd}` OUTSIDE the sandbox (unconfined)?"
    where = box.describe() if box is not None else "unconfined"
    return f"Run the command `{cmd}`? ({where})"


TOOL = function_tool(
    "run_command",
    DESCRIPTION,
    PROPERTIES,
    run,
    prompt=_question,
    opts=DEFAULT_OPTS,
)
