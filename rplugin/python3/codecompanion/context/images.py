"""`/image <path>`: an image sent with the next message, as the image part of the providers
whose models take images (OpenAI's Chat Completions, Anthropic, Gemini, Ollama)."""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_BYTES = 5_000_000  # the smallest of the providers' limits for one inline image
TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


@dataclass(frozen=True)
class Image:
    """One image of a message: where it came from, its media type and its bytes in base64."""

    path: str
    mime: str
    data: str

    def to_dict(self) -> dict[str, str]:
        """The form a saved message keeps it in (`extra["images"]`)."""
        return {"path": self.path, "mime": self.mime, "data": self.data}


class ImageError(ValueError):
    """Why a file cannot be sent as an image: one line."""


# How each type's bytes begin (WebP: "RIFF", four bytes of size, then "WEBP").
_MAGIC = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
}


def kind_of(data: bytes) -> str | None:
    """The media type `data` begins like, or None when it is no image we send."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    for mime, starts in _MAGIC.items():
        if data.startswith(starts):
            return mime
    return None


def read_image(path: Path, shown: str) -> Image:
    """The image at the resolved `path` (shown to the user as `shown`), reached without
    following a link and a regular file; ImageError when it cannot be sent, or its bytes are
    not the image its name says."""
    from ..errors import ToolError
    from ..tools.builtin._support.confined import read_file

    mime = TYPES.get(path.suffix.lower())
    if mime is None:
        raise ImageError(f"{shown} is not a png, jpeg, gif or webp image")
    try:
        raw, _info = read_file(Path(os.path.realpath(path)), shown, MAX_BYTES)
    except ToolError as exc:
        raise ImageError(f"cannot read {shown}: {exc}") from None
    except OSError as exc:
        raise ImageError(f"cannot read {shown}: {exc.strerror or exc}") from None
    if kind_of(raw) != mime:
        raise ImageError(f"{shown} is not a {mime.split('/')[1]} image (its bytes are not one)")
    return Image(shown, mime, base64.b64encode(raw).decode("ascii"))


def message_images(extra: Mapping[str, Any]) -> list[Image]:
    """The images a message carries (malformed entries are left out)."""
    found = []
    for item in extra.get("images") or []:
        if isinstance(item, Mapping) and all(isinstance(item.get(k), str) for k in TYPES_KEYS):
            found.append(Image(item["path"], item["mime"], item["data"]))
    return found


TYPES_KEYS = ("path", "mime", "data")
