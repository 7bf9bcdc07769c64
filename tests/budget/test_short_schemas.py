"""Short tool schemas for a small window: each description cut to its first sentence (names,
types, enums and required lists untouched), sent with `short_descriptions = "auto"` when the model's
window is known and at most 8k tokens, or always with True, never with False (the default); the
same schemas in every
request of the chat, so the server's prompt cache holds. The real chat and builtins against a
scripted server that answers llama.cpp's `/props`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings
from codecompanion.budget.count import estimate_text
from codecompanion.config import load_config
from codecompanion.loopback.server import LoopbackServer, openai_text
from codecompanion.loopback.turns import Turn, openai_tool_calls
from codecompanion.tools.model.short_schema import first_sentence, shortened, wants_short
from codecompanion.workspace import HostOptions, Workspace
from tests.support.builder import built_chat
from tests.support.chat import RecordingView, chat_requests


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("Change an existing file. Each edit replaces oldText.", "Change an existing file."),
        ("Find files by glob, e.g. `**/*.py`. More.", "Find files by glob, e.g. `**/*.py`."),
        ("One sentence only", "One sentence only"),
        ("Version 1.5 of it? Yes.", "Version 1.5 of it?"),
        ("  Padded.  ", "Padded."),
    ],
)
def test_the_first_sentence(text: str, first: str) -> None:
    assert first_sentence(text) == first


def test_only_descriptions_are_cut() -> None:
    schema = {
        "type": "function",
        "function": {
            "name": "t",
            "description": "Do it. Then more words.",
            "parameters": {
                "type": "object",
                "properties": {
                    "mode": {"type": "string", "enum": ["a. b", "c"], "description": "M. x"},
                    "items": {"anyOf": [{"type": "array", "description": "L. y"}]},
                },
                "required": ["mode"],
            },
        },
    }
    short = shortened(schema)
    assert short["function"]["description"] == "Do it."
    props = short["function"]["parameters"]["properties"]
    assert props["mode"] == {"type": "string", "enum": ["a. b", "c"], "description": "M."}
    assert props["items"]["anyOf"][0]["description"] == "L."
    assert short["function"]["parameters"]["required"] == ["mode"]
    assert schema["function"]["description"] == "Do it. Then more words."  # a copy


def test_when_short_schemas_are_wanted() -> None:
    assert wants_short("auto", 4096) and wants_short("auto", 8192)
    assert not wants_short("auto", 16384) and not wants_short("auto", None)
    assert wants_short(True, None) and not wants_short(False, 4096)


def props(n_ctx: int) -> Turn:
    return Turn.json({"default_generation_settings": {"n_ctx": n_ctx}})


READ = openai_tool_calls(
    [
        (
            "r1",
            "read_file",
            {
                "filepath": "a.txt",
                "start_line_number_base_zero": 0,
                "end_line_number_base_zero": -1,
            },
        )
    ]
)


async def two_requests(
    tmp_path: Path, n_ctx: int, setting: object = None, **extra: Any
) -> list[dict[str, Any]]:
    """The chat requests of one `@{files}` turn (a read, then an answer) against a llama.cpp
    server whose window is `n_ctx`."""
    (tmp_path / "a.txt").write_text("hello\n")
    opts = {} if setting is None else {"short_descriptions": setting}
    with LoopbackServer() as server:
        server.enqueue(props(n_ctx), method="GET", path="/props")
        server.enqueue(READ, openai_text("it says hello"))
        settings = AdapterSettings(
            name="openai_compatible", url=server.url + "/v1", model="m", extra=dict(extra)
        )
        adapter = create_adapter(settings)
        registry = Workspace(HostOptions()).registry
        chat = built_chat(adapter, registry, tmp_path, RecordingView(), chat_id="w", opts=opts)
        try:
            assert chat.submit("@{files} what does a.txt say?")
            assert chat._task is not None
            await asyncio.wait_for(asyncio.shield(chat._task), 20)
        finally:
            await adapter.aclose()
        return chat_requests(server)


def descriptions(body: dict[str, Any]) -> dict[str, str]:
    return {t["function"]["name"]: t["function"]["description"] for t in body["tools"]}


async def test_auto_gives_a_4k_window_short_schemas_in_every_request(tmp_path: Path) -> None:
    first, second = await two_requests(tmp_path, 4096, "auto")
    assert descriptions(first)["insert_edit_into_file"] == "Change an existing file."
    assert second["tools"] == first["tools"]  # the prefix the server cached holds
    full = Workspace(HostOptions()).registry.get("insert_edit_into_file")
    assert full is not None
    long_tokens = estimate_text(json.dumps([full.tool.openai_schema()]))
    short = [t for t in first["tools"] if t["function"]["name"] == "insert_edit_into_file"]
    assert estimate_text(json.dumps(short)) < 0.85 * long_tokens


async def test_the_default_a_16k_window_and_the_setting_off_get_the_full_schemas(
    tmp_path: Path,
) -> None:
    runs = {}
    cases = (
        ("big", 16384, "auto"),
        ("off", 4096, False),
        ("on", 16384, True),
        ("dflt", 4096, None),
    )
    for name, n_ctx, setting in cases:
        (tmp_path / name).mkdir()
        runs[name] = (await two_requests(tmp_path / name, n_ctx, setting))[0]
    big = descriptions(runs["big"])
    assert big["insert_edit_into_file"].startswith("Change an existing file. Each edit")
    assert descriptions(runs["off"]) == big == descriptions(runs["dflt"])
    assert descriptions(runs["on"])["insert_edit_into_file"] == "Change an existing file."


def test_the_setting_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "codecompanion.py"
    path.write_text('opts = {"tool_system": {"short_descriptions": "yes", "auto_submit": True}}\n')
    config = load_config(path)
    assert config.error is not None and "short_descriptions" in config.error
    assert config.opts == {"tool_system": {"auto_submit": True}}
    path.write_text('opts = {"tool_system": {"short_descriptions": "auto"}}\n')
    assert load_config(path).error is None


async def test_prompt_mode_describes_the_tools_as_shortly_for_a_small_window(
    tmp_path: Path,
) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "l").mkdir()
    small = (await two_requests(tmp_path / "s", 4096, "auto", tool_calls="prompt"))[0]
    large = (await two_requests(tmp_path / "l", 16384, "auto", tool_calls="prompt"))[0]
    assert "tools" not in small and "tools" not in large

    def system(body: dict[str, Any]) -> str:
        return "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")

    assert "Change an existing file." in system(small)
    assert "Each edit replaces oldText" in system(large)
    assert "Each edit replaces oldText" not in system(small)
