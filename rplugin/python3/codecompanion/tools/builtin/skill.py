"""skill: a skill's instructions (its SKILL.md) or one of its files, read only inside its folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...errors import ToolError
from ...frontmatter import FrontMatterError, split
from ...skills import Skill
from ...skills.catalog import SKILL_FILE
from ..model.arguments import arg_opt_text, arg_text
from ..model.contract import ToolContext
from ..model.function_tool import FunctionOutput, function_tool, nullable
from ._support.paths import clean_path_text
from ._support.text_files import fence, read_source

DEFAULT_OPTS: dict[str, Any] = {
    "requires_approval": False,
    "read_only": True,
    "max_lines": 2000,
    "max_bytes": 200_000,
    "max_listed": 100,  # files of the skill's folder named after its instructions
}

DESCRIPTION = (
    "Read a skill: its instructions (leave `file` null), or one of its other files named by "
    "its path inside the skill's folder, e.g. `reference.md` or `scripts/fill.py`. The "
    "skills and what each is for are listed in the system prompt."
)

PROPERTIES = {
    "name": {"type": "string", "description": "The skill's name, as listed."},
    "file": nullable("string", "A file of the skill, relative to its folder; null: SKILL.md."),
}


def _skill(ctx: ToolContext, name: str) -> Skill:
    skills = ctx.skills
    skill = skills.get(name) if skills is not None else None
    if skill is None:
        known = ", ".join(f"`{s.name}`" for s in skills.enabled()) if skills else ""
        listed = f" The skills are: {known}." if known else " This chat has no skills."
        raise ToolError(f"There is no skill called `{name}`.{listed}")
    return skill


def _inside(skill: Skill, raw: str) -> Path:
    """The file's resolved path; a path that leaves the skill's folder is refused."""
    path = Path(os.path.realpath(os.path.join(skill.folder, clean_path_text(raw))))
    if skill.folder not in path.parents:
        raise ToolError(f"`{raw}` is outside the folder of skill `{skill.name}`; nothing was read.")
    return path


def _files(skill: Skill, limit: int) -> list[str]:
    """The skill's other files (relative paths, hidden ones and links left out)."""
    listed: list[str] = []
    for folder, dirs, files in os.walk(skill.folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = os.path.join(folder, name)
            if name.startswith(".") or os.path.islink(path):
                continue
            relative = os.path.relpath(path, skill.folder)
            if relative != SKILL_FILE:
                listed.append(relative)
            if len(listed) >= limit:
                return listed
    return listed


def _capped(ctx: ToolContext, lines: list[str], shown: str) -> str:
    """The lines as one text; a file over the limits is refused (a skill's files are small)."""
    max_lines = int(ctx.opts.get("max_lines", DEFAULT_OPTS["max_lines"]))
    max_bytes = int(ctx.opts.get("max_bytes", DEFAULT_OPTS["max_bytes"]))
    text = "\n".join(lines)
    if len(lines) > max_lines or len(text.encode("utf-8")) > max_bytes:
        raise ToolError(
            f"{shown} has {len(lines):,} lines, over the limit of {max_lines:,} lines or "
            f"{max_bytes:,} bytes; read it in ranges with read_file when it is in the project."
        )
    return text


async def _instructions(ctx: ToolContext, skill: Skill) -> FunctionOutput:
    shown = f"{skill.label}/{SKILL_FILE}"
    source = await read_source(ctx.editor, skill.folder / SKILL_FILE, shown)
    try:
        body = split(source.text).body
    except FrontMatterError as exc:
        raise ToolError(f"{shown}: {exc}") from None
    head = f"Skill `{skill.name}` ({skill.label}), its instructions:"
    parts = [head, _capped(ctx, body.splitlines(), shown)]
    files = _files(skill, int(ctx.opts.get("max_listed", DEFAULT_OPTS["max_listed"])))
    if files:
        parts.append(
            f"Its files (read one with file set to its path; the folder is {skill.folder}):\n"
            + "\n".join(f"- {name}" for name in files)
        )
    if skill.allowed_tools:
        parts.append("The skill expects these tools: " + ", ".join(skill.allowed_tools))
    return FunctionOutput("\n\n".join(parts), f"Read skill `{skill.name}`", {"skill": skill.name})


async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
    """The skill's instructions, or one of its files."""
    skill = _skill(ctx, arg_text(args, "name").strip())
    raw = arg_opt_text(args, "file")
    if raw is None or raw.strip() in ("", SKILL_FILE):
        return await _instructions(ctx, skill)
    path = _inside(skill, raw)
    shown = f"{skill.label}/{os.path.relpath(path, skill.folder)}"
    source = await read_source(ctx.editor, path, shown)
    body = _capped(ctx, source.lines, shown)
    return FunctionOutput(
        f"{shown}:\n{fence(body, path.suffix.lstrip('.'))}",
        f"Read `{os.path.relpath(path, skill.folder)}` of skill `{skill.name}`",
        {"skill": skill.name, "path": str(path)},
    )


TOOL = function_tool("skill", DESCRIPTION, PROPERTIES, run, opts=DEFAULT_OPTS)
