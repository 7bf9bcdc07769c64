"""`/image`: a user message's images as each provider's image parts; adapters without image
support say so (the chat refuses to send)."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings
from codecompanion.context.images import ImageError, read_image
from codecompanion.messages import Message

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def message(tmp_path: Path) -> Message:
    (tmp_path / "dot.png").write_bytes(PNG)
    image = read_image(tmp_path / "dot.png", "dot.png")
    return Message(role="user", content="what is it?", extra={"images": [image.to_dict()]})


def adapter(name: str) -> object:
    return create_adapter(AdapterSettings(name=name, url="http://127.0.0.1:9", api_key="k"))


def test_each_provider_sends_the_image_as_its_own_part(tmp_path: Path) -> None:
    data = base64.b64encode(PNG).decode()
    msg = message(tmp_path)
    openai = adapter("openai").format_messages([msg])  # type: ignore[attr-defined]
    assert openai[-1]["content"] == [
        {"type": "text", "text": "what is it?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}},
    ]
    anthropic = adapter("anthropic").format_messages([msg])  # type: ignore[attr-defined]
    assert anthropic[-1]["content"][0] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": data},
    }
    gemini = adapter("gemini").format_messages([msg])  # type: ignore[attr-defined]
    assert gemini[-1]["parts"][1] == {"inline_data": {"mime_type": "image/png", "data": data}}
    ollama = adapter("ollama").format_messages([msg])  # type: ignore[attr-defined]
    assert ollama[-1]["images"] == [data] and ollama[-1]["content"] == "what is it?"


def test_which_adapters_take_images() -> None:
    takes = {n: adapter(n).takes_images for n in ("openai", "anthropic", "gemini", "ollama")}  # type: ignore[attr-defined]
    assert all(takes.values())
    assert adapter("deepseek").takes_images is False  # type: ignore[attr-defined]
    assert adapter("openai_responses").takes_images is False  # type: ignore[attr-defined]


def test_what_cannot_be_sent_as_an_image_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ImageError, match="notes.txt is not a png, jpeg, gif or webp image"):
        read_image(tmp_path / "notes.txt", "notes.txt")
    with pytest.raises(ImageError, match="cannot read gone.png"):
        read_image(tmp_path / "gone.png", "gone.png")


def test_an_image_is_read_only_if_its_bytes_are_one_and_never_through_a_fifo(
    tmp_path: Path,
) -> None:
    (tmp_path / "text.png").write_text("not an image")
    with pytest.raises(ImageError, match="text.png is not a png image"):
        read_image(tmp_path / "text.png", "text.png")
    os.mkfifo(tmp_path / "pipe.png")  # opened for reading, it would block
    with pytest.raises(ImageError, match="pipe.png is a FIFO"):
        read_image(tmp_path / "pipe.png", "pipe.png")
    gif = tmp_path / "a.gif"
    gif.write_bytes(b"GIF89a" + b"\0" * 20)
    assert read_image(gif, "a.gif").mime == "image/gif"
