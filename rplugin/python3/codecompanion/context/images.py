"""`/image <path>`: an image sent with the next message, as the image part of the providers
whose models take images (OpenAI's Chat Completions, Anthropic, Gemini, Ollama)."""

from __future__ import annotations

import base64
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


def read_image(path: Path, shown: str) -> Image:
    """The image at `path` (shown to the user as `shown`); ImageError when it cannot be sent."""
    mime = TYPES.get(path.suffix.lower())
    if mime is None:
        raise ImageError(f"{shown} is not a png, jpeg, gif or webp image")
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ImageError(f"{shown} is {size // 1_000_000} MB; images up to 5 MB can be sent")
        raw = path.read_bytes()
    except OSError as exc:
        raise ImageError(f"cannot read {shown}: {exc.strerror or exc}") from None
    return Image(shown, mime, base64.b64encode(raw).decode("ascii"))


def message_images(extra: Mapping[str, Any]) -> list[Image]:
    """The images a message carries (malformed entries are left out)."""
    found = []
    for item in extra.get("images") or []:
        if isinstance(item, Mapping) and all(isinstance(item.get(k), str) for k in TYPES_KEYS):
            found.append(Image(item["path"], item["mime"], item["data"]))
    return found


TYPES_KEYS = ("path", "mime", "data")
