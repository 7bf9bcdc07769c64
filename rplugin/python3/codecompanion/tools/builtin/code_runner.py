"""code_runner: run code the model wrote, in a container or a confined process, and report."""

from __future__ import annotations

# Standard modules a plain chat never needs (shutil, tempfile, difflib, hashlib: about
# 1.5 MB of the host together) are imported in the functions that use them.
import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import ToolError
from ...sandbox.commands import CommandSandbox
from ..model.arguments import arg_text
from ..model.contract import CommandRun, ToolContext
from ..model.function_tool import (
    Failure,
    FunctionOutput,
    TimedOut,
    function_tool,
    one_line,
    time_limits,
)
from ..runtime.protocol import cap_output
from ._support import sandbox
from ._support.text_files import fence

DEFAULT_OPTS: dict[str, Any] = {
    # Running code is never approved by YOLO or "approve all": the user says yes each time
    # (or sets requires_approval = False, or answers "always" for the exact same code).
    "requires_approval": True,
    "allowed_in_yolo_mode": False,
    "timeout": 30_000,  # milliseconds, as every tool timeout
    "container": "auto",  # "auto" (docker, then podman), "docker", "podman" or False
    "languages": {},  # name -> {"cmd": [..., "{file}"], "suffix": ".x", "image": "..."}
    "memory_mb": 512,
    "file_mb": 16,
    "max_chars": 20_000,
    "sandboxed": True,  # a process run goes into the chat's command sandbox (see sandbox/)
}

DEFAULT_SECONDS = 30.0

DESCRIPTION = (
    "Run a short program you wrote and get its exit code, stdout and stderr. It starts in a "
    "fresh empty directory (not the project) with a time limit (30 s by default) and memory "
    "and file-size limits, in a container or the system's sandbox when there is one (no "
    "network, writes only in that directory); the result's `ran in:` line says which, and "
    "'unconfined' when neither exists. Print what you want to see. The user approves runs "
    "unless their settings say otherwise."
)


def _language_names(table: dict[str, sandbox.Language]) -> str:
    return ", ".join(sorted(table))


PROPERTIES = {
    "lang": {
        "type": "string",
        "description": "The language: " + _language_names(dict(sandbox.LANGUAGES)) + ".",
    },
    "code": {"type": "string", "description": "The whole program."},
}


def _limits(opts: Mapping[str, Any], box: CommandSandbox | None) -> sandbox.Limits:
    """The run's limits: the tool's options, and the chat's process cap (`max_processes`),
    which its commands share whether they run in the sandbox, a container or unconfined."""
    timeout, _own = time_limits(opts, DEFAULT_SECONDS)
    memory = opts.get("memory_mb", DEFAULT_OPTS["memory_mb"])
    files = opts.get("file_mb", DEFAULT_OPTS["file_mb"])
    return sandbox.Limits(
        timeout=timeout,
        memory_mb=int(memory) if isinstance(memory, int) and memory > 0 else 512,
        file_mb=int(files) if isinstance(files, int) and files > 0 else 16,
        processes=box.permissions.max_processes if box is not None else 1024,
    )


def _report(lang: str, where: str, result: CommandRun, limits: sandbox.Limits, cap: int) -> str:
    if result.timed_out:
        status = f"timed out after {limits.timeout:g}s (killed)"
    elif result.exit_code is None:
        status = "could not start"
    else:
        status = f"exit code {result.exit_code}"
    lines = [f"language: {lang}", f"ran in: {where}", f"status: {status}"]
    if result.truncated:
        lines.append("note: output beyond the size limit was dropped")
    for label, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        if not text:
            lines.append(f"{label}: (empty)")
            continue
        text, _cut = cap_output(text, cap) if cap > 0 else (text, False)
        lines.append(f"{label}:\n{fence(text)}")
    return "\n".join(lines)


async def _plan(
    ctx: ToolContext, language: sandbox.Language, file: Path, box: CommandSandbox | None
) -> sandbox.RunPlan:
    limits = _limits(ctx.opts, box)
    cwd = file.parent
    program = await sandbox.container_runtime(ctx.opts.get("container", "auto"), cwd)
    if program is not None and language.image:
        return sandbox.container_plan(program, language, file, limits)
    if box is not None and box.active:  # the kernel sandbox takes the network away itself
        plan = sandbox.process_plan(language, file, limits, (), os.environ)
        return replace(plan, where=f"subprocess in the {box.kind} sandbox, no network")
    isolation = await sandbox.network_isolation(cwd)
    plan = sandbox.process_plan(language, file, limits, isolation, os.environ)
    return replace(plan, where=f"{plan.where}, unconfined (no sandbox: it can touch your files)")


async def _execute(
    ctx: ToolContext, plan: sandbox.RunPlan, cwd: Path, timeout: float
) -> CommandRun:
    """Each command in turn (a container pull, then the run); the first failure ends it."""
    result: CommandRun | None = None
    box = ctx.sandbox
    confined = box is not None and box.active and "sandbox" in plan.where
    for argv in plan.commands:
        result = await ctx.commands.run(
            argv, cwd=cwd, timeout=timeout, max_output=1_000_000, confined=confined
        )
        if result.exit_code != 0:
            break
    assert result is not None
    return result


async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
    """Write the code to a fresh directory, run it there, report status and both streams."""
    lang, code = arg_text(args, "lang"), arg_text(args, "code")
    table = sandbox.languages(ctx.opts.get("languages"))
    language = sandbox.find_language(table, lang)
    if language is None:
        raise ToolError(f"Unknown language `{lang}`. Use one of: {_language_names(table)}.")
    if not code.strip():
        raise ToolError("`code` is empty.")
    limits = _limits(ctx.opts, ctx.sandbox)
    _total, own = time_limits(ctx.opts, DEFAULT_SECONDS)
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="codecompanion-run-"))
    try:
        file = folder / f"main{language.suffix}"
        file.write_text(code if code.endswith("\n") else code + "\n", encoding="utf-8")
        plan = await _plan(ctx, language, file, ctx.sandbox)
        result = await _execute(ctx, plan, folder, own)
    finally:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    cap = int(ctx.opts.get("max_chars") or 0)
    text = _report(language.name, plan.where, result, limits, cap)
    if result.timed_out:
        raise TimedOut(text, f"{language.name} code failed (timed out, {plan.where})")
    if result.exit_code != 0:
        raise Failure(text, f"{language.name} code failed (exit {result.exit_code}, {plan.where})")
    data = {"exit_code": 0, "where": plan.where, "duration": round(result.duration, 3)}
    return FunctionOutput(text, f"Ran {language.name} code (exit 0, {plan.where})", data)


def _question(ctx: ToolContext, args: dict[str, Any]) -> str:
    code = args.get("code")
    lang = args.get("lang")
    lines = code.strip().splitlines() if isinstance(code, str) else []
    first = one_line(lines[0], 60) if lines else ""
    more = f", {len(lines)} lines" if len(lines) > 1 else ""
    box = ctx.sandbox
    where = (
        f"in a container or the {box.kind} sandbox"
        if box is not None and box.active
        else "in a container if docker or podman works, else unconfined"
    )
    cut = " …" if len(lines) > 1 else ""
    return f"Run this {lang} code{more}? `{first}`{cut} ({where})"


TOOL = function_tool(
    "code_runner",
    DESCRIPTION,
    PROPERTIES,
    run,
    prompt=_question,
    opts=DEFAULT_OPTS,
)
