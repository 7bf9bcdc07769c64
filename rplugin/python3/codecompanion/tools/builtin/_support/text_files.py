"""Text files for the file tools: read from the loaded buffer or disk, written back through the
buffer when Neovim has the file open (one undo step, saved unless the user's unsaved changes are
there), else on disk with the file's line ends."""

from __future__ import annotations

# Standard modules a plain chat never needs (shutil, tempfile, difflib, hashlib: about
# 1.5 MB of the host together) are imported in the functions that use them.
import asyncio
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ....errors import ToolError
from ....ports import Diagnostic, Editor, UnsavedChoice
from ...model.function_tool import Failure
from . import confined
from .file_writes import check_writable, create_new, rewrite_file

if TYPE_CHECKING:
    from ...model.contract import ToolContext

MAX_FILE_BYTES = 20_000_000
# A regular file this small is read on the loop: a thread hop costs more than the read.
INLINE_BYTES = 256_000
_SNIFF = 8192


@dataclass(frozen=True)
class DiskVersion:
    """What a file was on disk when read; a write is refused if it no longer matches."""

    mtime_ns: int
    size: int
    digest: str


@dataclass(frozen=True)
class FileText:
    """A text file's content with `\\n` line ends, and where it came from."""

    path: Path
    text: str
    newline: str = "\n"
    endings: tuple[str, ...] = ()  # each line's own end, kept only when the file mixes them
    from_buffer: bool = False
    on_disk: DiskVersion | None = None

    @property
    def lines(self) -> list[str]:
        """The lines, without a final empty line for a trailing newline."""
        return split_lines(self.text)


def split_lines(text: str) -> list[str]:
    """Lines of `text`; a trailing newline does not make an extra empty line."""
    if not text:
        return []
    return (text[:-1] if text.endswith("\n") else text).split("\n")


def looks_binary(data: bytes) -> bool:
    """True for data that is not text: a NUL byte, or not UTF-8, in its first 8 KB."""
    head = data[:_SNIFF]
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the sniff boundary is still text.
        return exc.start < len(head) - 3
    return False


def split_endings(raw: str) -> tuple[str, str, tuple[str, ...]]:
    """`raw` with `\\n` line ends, its usual line end, and each line's own end when they differ."""
    if "\r" not in raw:
        return raw, "\n", ()
    pieces = raw.split("\n")
    endings = ["\r\n" if piece.endswith("\r") else "\n" for piece in pieces[:-1]]
    crlf = endings.count("\r\n")
    if not crlf:
        return raw, "\n", ()
    text = raw.replace("\r\n", "\n")
    newline = "\r\n" if crlf * 2 > len(endings) else "\n"
    if crlf == len(endings):
        return text, newline, ()
    if pieces[-1]:
        endings.append("")  # the last line has no line end
    return text, newline, tuple(endings)


def join_endings(source: FileText, text: str) -> str:
    """`text` (with `\\n` line ends) with the line ends of `source`: its own per unchanged line."""
    if not source.endings:
        return text if source.newline == "\n" else text.replace("\n", source.newline)
    old, new = source.lines, split_lines(text)
    ends = [source.newline] * len(new)
    import difflib

    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for _tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for offset, j in enumerate(range(j1, j2)):
            # A changed or added line takes the end of the line it replaces or follows.
            i = min(i1 + offset, i2 - 1) if i2 > i1 else max(i1 - 1, 0)
            ends[j] = source.endings[i] if i < len(source.endings) else source.newline
            ends[j] = ends[j] or source.newline
    if new and not text.endswith("\n"):
        ends[-1] = ""
    return "".join(line + end for line, end in zip(new, ends, strict=True))


def _read_disk(path: Path, max_bytes: int, shown: str) -> FileText:
    data, info = confined.read_file(path, shown, max_bytes)
    if looks_binary(data):
        raise ToolError(f"{shown} is a binary file (not UTF-8 text); it cannot be read as text.")
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{shown} is not valid UTF-8 (byte {exc.start}).") from None
    text, newline, endings = split_endings(raw)
    import hashlib

    on_disk = DiskVersion(info.st_mtime_ns, info.st_size, hashlib.sha256(data).hexdigest())
    return FileText(path, text, newline, endings, on_disk=on_disk)


def _small_file(path: Path) -> bool:
    try:
        info = path.stat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size <= INLINE_BYTES


async def read_source(
    editor: Editor | None, path: Path, shown: str, max_bytes: int = MAX_FILE_BYTES
) -> FileText:
    """The text of the loaded buffer (what the user sees) if there is one, else of the file."""
    if editor is not None:
        lines = await editor.buffer_lines(str(path))
        if lines is not None:
            return FileText(path, "\n".join(lines) + "\n" if lines else "", from_buffer=True)
    try:
        if _small_file(path):
            return _read_disk(path, max_bytes, shown)
        return await asyncio.to_thread(_read_disk, path, max_bytes, shown)
    except FileNotFoundError:
        raise ToolError(f"No such file: {shown}") from None
    except IsADirectoryError:
        raise ToolError(f"{shown} is a directory, not a file.") from None
    except PermissionError:
        raise ToolError(f"Permission denied reading {shown}.") from None


def _write_disk(source: FileText, text: str, shown: str) -> None:
    digest = source.on_disk.digest if source.on_disk else None
    rewrite_file(source.path, join_endings(source, text).encode("utf-8"), digest, shown)


async def create_file(path: Path, text: str, shown: str) -> None:
    """Create a new file (and its folders) with `text`; refuses if it exists."""
    try:
        await asyncio.to_thread(create_new, path, text.encode("utf-8"), shown)
    except PermissionError:
        raise ToolError(f"Permission denied creating {shown}.") from None
    except NotADirectoryError:
        raise ToolError(f"A parent of {shown} is a file, not a folder.") from None


def with_trailing_newline(text: str, original: str) -> str:
    """`text` ending in a newline exactly when `original` did (an empty original keeps `text`)."""
    if not original or not text:
        return text
    if original.endswith("\n"):
        return text if text.endswith("\n") else text + "\n"
    return text[:-1] if text.endswith("\n") else text


def fence(text: str, language: str = "") -> str:
    """`text` in a Markdown code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{ticks}{language}\n{body}{ticks}"


Where = Literal["disk", "saved", "buffer"]


@dataclass(frozen=True)
class Written:
    """Where a change went: a file no buffer held (`disk`), an open buffer saved to its file
    (`saved`) or left unsaved (`buffer`); `place` in the result's words; the buffer's
    diagnostics before it."""

    where: Where
    place: str = "on disk"
    before: tuple[Diagnostic, ...] | None = None


async def _choice(ctx: ToolContext, source: FileText, shown: str) -> bool:
    """Whether to save the buffer after the edit: yes unless it holds the user's unsaved
    changes; then the user is asked when edits are reviewed (a rejection is the call's
    result), and otherwise it stays unsaved."""
    editor = ctx.editor
    assert editor is not None  # a buffer's text comes only from an editor
    modified = await editor.buffer_modified(str(source.path))
    if modified is None:
        raise ToolError(f"The buffer for {shown} was closed while editing; nothing was written.")
    if not modified:
        return True
    choice: UnsavedChoice = await ctx.asks.unsaved(str(source.path))
    if choice == "reject":
        raise Failure(
            f"{shown} has unsaved changes in Neovim and the user rejected the edit; nothing "
            "was written.",
            f"Rejected the edit of unsaved `{shown}`",
        )
    return choice == "save"


async def write_edit(ctx: ToolContext, source: FileText, text: str, shown: str) -> Written:
    """Store the tool's new `text` for `source`: through its open buffer, else on disk.

    Refused if the file on disk is read-only or not writable by this user, if the buffer
    changed since it was read, or (for a disk write) if the file changed since it was read.
    """
    if not source.from_buffer:  # (a buffer's text comes only from an editor)
        try:
            await asyncio.to_thread(_write_disk, source, text, shown)
        except PermissionError:
            raise ToolError(f"Permission denied writing {shown}.") from None
        return Written("disk")
    editor = ctx.editor
    assert editor is not None
    await asyncio.to_thread(check_writable, source.path, shown)
    save = await _choice(ctx, source, shown)
    lines = split_lines(text)
    done = await editor.write_buffer(ctx.chat.id, str(source.path), source.lines, lines, save)
    if done.status == "changed":
        raise ToolError(
            f"The open buffer of {shown} changed while the edit was prepared; nothing was "
            "written. Read the file again."
        )
    if done.status == "closed":
        raise ToolError(f"The buffer for {shown} was closed while editing; nothing was written.")
    if done.status == "saved":
        return Written("saved", "on disk (through its buffer open in Neovim)", done.before)
    why = f"saving failed: {done.error}" if done.error else "the user has unsaved changes there"
    return Written(
        "buffer", f"in its buffer open in Neovim, not saved to disk ({why})", done.before
    )
