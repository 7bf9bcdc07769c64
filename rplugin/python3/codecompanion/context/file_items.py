"""Context that names a file (`/file`, `/image`, `#{buffer}`, `#{buffers}`, a selection):
vetted in the host before the message is sent, as the file tools vet a path.

The file's path is resolved against the chat's project (`..`, `~` and every link followed):
a file on the sandbox's deny list or named like a credential is never sent (secret_paths.py);
one outside the project is sent only if the user says yes when asked (YOLO included). A
`/file` is read here, at sending time, from the path as resolved, one folder at a time without
following a link (a link swapped in meanwhile fails the read), text only and capped; an image is
read the same way when the message is composed (images.py), and its bytes must be an image.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from pathlib import Path

from ..errors import ToolError
from ..sandbox.secret_paths import why_secret
from .images import ImageError, read_image
from .sources import ContextItem

Confirm = Callable[[str], Awaitable[bool]]
MAX_FILE_BYTES = 2_000_000  # a `/file` larger than this is not sent


def real_source(item: ContextItem, root: Path) -> Path | None:
    """The real path of the file `item` names (None: it names none)."""
    if not item.source:
        return None
    joined = os.path.join(str(root), os.path.expanduser(item.source))
    return Path(os.path.realpath(joined))


async def vet(
    items: Iterable[ContextItem], root: Path, confirm: Confirm, deny_read: Iterable[str]
) -> tuple[list[ContextItem], list[str]]:
    """The items that may be sent (a `/file` read anew), and one line per item left out."""
    root = Path(os.path.realpath(root))
    denied = tuple(deny_read)
    kept: list[ContextItem] = []
    notes: list[str] = []
    for item in items:
        real = real_source(item, root)
        if real is None:
            kept.append(item)
            continue
        why = await _refusal(item, real, root, confirm, denied)
        if why is None:
            try:
                item = _read(item, real)
            except (ToolError, ImageError) as exc:
                why = str(exc)
        if why is not None:
            notes.append(f"{item.kind} {item.path} was not sent: {why}")
            continue
        kept.append(replace(item, source=str(real)))
    return kept, notes


async def _refusal(
    item: ContextItem, real: Path, root: Path, confirm: Confirm, denied: tuple[str, ...]
) -> str | None:
    """Why the file of `item` may not be sent (None: it may)."""
    assert item.source is not None
    secret = why_secret(os.path.join(str(root), os.path.expanduser(item.source)), denied, "it")
    if secret is not None:
        return secret
    if real == root or root in real.parents:
        return None
    question = f"Send {real} with your message? It is outside the project ({root})."
    if await confirm(question):
        return None
    return "it is outside the project and you did not allow it"


def _read(item: ContextItem, real: Path) -> ContextItem:
    """A `/file` with its lines read anew; an image checked to be one (composing reads it)."""
    if item.kind == "file":
        return replace(item, lines=read_text(real, item.path))
    if item.kind == "image":
        read_image(real, item.path)
    return item


def read_text(path: Path, shown: str) -> tuple[str, ...]:
    """The lines of the regular text file at the resolved `path`, reached without following a
    link; ToolError for anything else or a file over MAX_FILE_BYTES."""
    from ..tools.builtin._support.confined import read_file

    data, _info = read_file(path, shown, MAX_FILE_BYTES)
    if b"\0" in data:
        raise ToolError("it is not a text file")
    return tuple(data.decode("utf-8", errors="replace").splitlines())
