"""Text files for the file tools: read from the loaded buffer or disk, written atomically."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....errors import ToolError

MAX_FILE_BYTES = 20_000_000
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
    crlf: bool = False
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


def _version_of(path: Path, data: bytes) -> DiskVersion:
    info = path.stat()
    return DiskVersion(info.st_mtime_ns, info.st_size, hashlib.sha256(data).hexdigest())


def _read_disk(path: Path, max_bytes: int, shown: str) -> FileText:
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{shown} is not a regular file.")
    if info.st_size > max_bytes:
        raise ToolError(f"{shown} is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit.")
    data = path.read_bytes()
    if looks_binary(data):
        raise ToolError(f"{shown} is a binary file (not UTF-8 text); it cannot be read as text.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{shown} is not valid UTF-8 (byte {exc.start}).") from None
    crlf = text.count("\r\n") * 2 > text.count("\n") > 0
    if crlf:
        text = text.replace("\r\n", "\n")
    return FileText(path, text, crlf=crlf, on_disk=_version_of(path, data))


async def read_source(
    editor: Any, path: Path, shown: str, max_bytes: int = MAX_FILE_BYTES
) -> FileText:
    """The text of the loaded buffer (what the user sees) if there is one, else of the file."""
    if editor is not None:
        lines = await editor.buffer_lines(str(path))
        if lines is not None:
            return FileText(path, "\n".join(lines) + "\n" if lines else "", from_buffer=True)
    try:
        return await asyncio.to_thread(_read_disk, path, max_bytes, shown)
    except FileNotFoundError:
        raise ToolError(f"No such file: {shown}") from None
    except IsADirectoryError:
        raise ToolError(f"{shown} is a directory, not a file.") from None
    except PermissionError:
        raise ToolError(f"Permission denied reading {shown}.") from None


def _check_unchanged(source: FileText, shown: str) -> None:
    if source.on_disk is None:
        return
    try:
        now = _version_of(source.path, source.path.read_bytes())
    except FileNotFoundError:
        raise ToolError(f"{shown} was deleted since it was read; nothing was written.") from None
    if now.digest != source.on_disk.digest:
        raise ToolError(
            f"{shown} changed on disk since it was read; nothing was written. Read it again."
        )


def _temp_copy(path: Path, text: str, mode: int | None) -> str:
    """Write `text` to a new temp file beside `path` and return its name."""
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(temp, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return temp


def _write_disk(source: FileText, text: str, shown: str) -> None:
    _check_unchanged(source, shown)
    path = source.path
    if source.crlf:
        text = text.replace("\n", "\r\n")
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = _temp_copy(path, text, mode)
    try:
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _create_disk(path: Path, text: str, shown: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = _temp_copy(path, text, None)
    try:
        # A hard link never replaces an existing file, so a file created meanwhile is kept.
        os.link(temp, path)
    except FileExistsError:
        raise ToolError(f"{shown} already exists; nothing was written.") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)


async def create_file(path: Path, text: str, shown: str) -> None:
    """Create a new file (and its folders) with `text`; refuses if it exists."""
    try:
        await asyncio.to_thread(_create_disk, path, text, shown)
    except PermissionError:
        raise ToolError(f"Permission denied creating {shown}.") from None
    except NotADirectoryError:
        raise ToolError(f"A parent of {shown} is a file, not a folder.") from None


async def write_source(editor: Any, source: FileText, text: str, shown: str) -> str:
    """Store new text: into the loaded buffer (unsaved, one undo step) or atomically on disk.

    Returns "buffer" or "disk". A disk write is refused if the file changed since it was read.
    """
    if source.from_buffer and editor is not None:
        current = await editor.buffer_lines(str(source.path))
        if current is not None and current != source.lines:
            raise ToolError(
                f"The open buffer of {shown} changed while the edit was prepared; nothing was "
                "written. Read the file again."
            )
        if current is not None and await editor.set_buffer_lines(
            str(source.path), split_lines(text)
        ):
            return "buffer"
        raise ToolError(f"The buffer for {shown} was closed while editing; nothing was written.")
    try:
        await asyncio.to_thread(_write_disk, source, text, shown)
    except PermissionError:
        raise ToolError(f"Permission denied writing {shown}.") from None
    return "disk"


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
