# ruff: noqa: E501 - the documents below read best one line each

"""A fuzzer over the saved-chat schema: valid saved chats with one part replaced by any JSON
value, documents nested thousands deep, random documents made of the schema's names. Each is
either restored whole — and then drawn, counted, sent to every main provider and saved again
without a raise — or moved aside with one line naming its file, and the chat opens empty."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codecompanion.adapters import create_adapter
from codecompanion.adapters.base import AdapterSettings
from codecompanion.budget.count import estimate_request
from codecompanion.chat.transcript import replay
from codecompanion.persistence.history import ChatStore

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
CHAT_ID = "fuzzed"
NAMES = (
    "id title adapter model updated cwd messages tools groups yolo approvals commands role "
    "content opts visible _meta cycle index sent tag reasoning calls call_id name is_error "
    "type function arguments _index extra typed for_user changes incomplete context images "
    "path mime data usage provider_state compacted compaction pruned anthropic_thinking "
    "gemini_signatures"
).split()
ROLES = ("user", "llm", "system", "tool")

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=10),
    st.sampled_from(NAMES + list(ROLES)),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(NAMES), inner, max_size=4)
    ),
    max_leaves=12,
)

call = st.fixed_dictionaries(
    {
        "id": st.text(min_size=1, max_size=6),
        "type": st.just("function"),
        "function": st.fixed_dictionaries(
            {
                "name": st.sampled_from(["read_file", "run_command", "x"]),
                "arguments": st.one_of(
                    st.text(max_size=20), st.dictionaries(st.text(max_size=5), values, max_size=3)
                ),
            }
        ),
    }
)
message = st.fixed_dictionaries(
    {"role": st.sampled_from(ROLES), "content": st.one_of(st.none(), st.text(max_size=30))},
    optional={
        "opts": st.fixed_dictionaries({"visible": st.booleans()}),
        "_meta": st.fixed_dictionaries(
            {"id": st.integers(0, 50), "cycle": st.integers(1, 5), "sent": st.booleans()}
        ),
        "tools": st.one_of(
            st.fixed_dictionaries({"calls": st.lists(call, max_size=2)}),
            st.fixed_dictionaries(
                {
                    "call_id": st.text(max_size=6),
                    "name": st.text(max_size=6),
                    "is_error": st.booleans(),
                }
            ),
        ),
        "reasoning": st.fixed_dictionaries({"content": st.text(max_size=10)}),
        "extra": st.fixed_dictionaries(
            {},
            optional={
                "typed": st.text(max_size=10),
                "context": st.lists(
                    st.fixed_dictionaries({"kind": st.text(max_size=5), "path": values}), max_size=2
                ),
                "provider_state": st.dictionaries(st.sampled_from(NAMES), values, max_size=2),
            },
        ),
    },
)
saved_chat = st.fixed_dictionaries(
    {"id": st.just(CHAT_ID), "messages": st.lists(message, max_size=6)},
    optional={
        "title": st.one_of(st.none(), st.text(max_size=10)),
        "adapter": st.sampled_from(["openai", "anthropic"]),
        "tools": st.fixed_dictionaries(
            {"tools": st.lists(st.text(max_size=5), max_size=2), "yolo": st.booleans()}
        ),
    },
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a document: a key of an object or an index of a list."""
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, index))
    return found


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    """A valid saved chat with one place (maybe the whole) replaced by any JSON value."""
    document = draw(saved_chat)
    where = draw(st.sampled_from(_paths(document)))
    replacement = draw(values)
    if not where:
        return replacement
    target = document
    for step in where[:-1]:
        target = target[step]
    target[where[-1]] = replacement
    return document


def deeply_nested(levels: int, inside: str) -> dict[str, Any]:
    """A saved chat whose one call's arguments nest `levels` deep (as text: json can't write
    it); `inside` says where: "arguments" (an object) or "content"."""
    nested = "[" * levels + "]" * levels
    if inside == "content":
        body = f'{{"role": "user", "content": {nested}}}'
    else:
        body = (
            '{"role": "llm", "content": null, "tools": {"calls": [{"id": "c1", "type": '
            f'"function", "function": {{"name": "x", "arguments": {{"a": {nested}}}}}}}]}}}}'
        )
    return {"raw": f'{{"id": "{CHAT_ID}", "messages": [{body}]}}'}


PROVIDERS = {
    name: create_adapter(AdapterSettings(name=name, api_key="k", model="m"))
    for name in ("openai", "anthropic", "gemini", "ollama")
}


def restore(folder: Path, document: Any) -> str | None:
    """Write `document` as a saved chat and restore it; assert one of the two outcomes (the
    line, when it was set aside)."""
    store = ChatStore(folder)
    path = store.path_for(CHAT_ID)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    raw = document["raw"] if isinstance(document, dict) and "raw" in document else None
    path.write_text(raw if raw is not None else json.dumps(document))
    saved, messages, line = store.restore(CHAT_ID)
    if line is not None:
        assert saved is None and messages is None
        assert CHAT_ID in line and "damaged" in line and "\n" not in line, line
        assert not path.exists(), "a damaged chat is moved aside"
        (kept,) = folder.glob(f"{CHAT_ID}.json.damaged-*")
        assert str(kept) in line
        return line
    assert messages is not None
    replay(messages, "openai", None)
    estimate_request(list(messages), [])
    for adapter in PROVIDERS.values():
        json.dumps(adapter.build_request(list(messages), [], "m").body)
    store.save(CHAT_ID, {**(saved or {}), "messages": [m.to_dict() for m in messages]})
    return None


@given(mutated())
@FUZZ
def test_a_mutated_saved_chat_restores_whole_or_is_set_aside(tmp_path: Path, document: Any) -> None:
    restore(tmp_path / "chats", document)


@given(values)
@FUZZ
def test_any_document_restores_whole_or_is_set_aside(tmp_path: Path, document: Any) -> None:
    restore(tmp_path / "chats", {"id": CHAT_ID, "messages": document})
    restore(tmp_path / "chats", document)


def test_the_two_shapes_that_crashed_chat_creation_are_set_aside(tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    listed = {"id": CHAT_ID, "messages": [{"role": "user", "content": ["a", "list"]}]}
    assert "message 1's field content is list, not str or null" in str(restore(folder, listed))
    for levels in (200, 5000):
        for inside in ("arguments", "content"):
            line = restore(folder, deeply_nested(levels, inside))
            assert "nests deeper than 100 levels" in str(line), line


def test_a_valid_chat_is_restored_whole(tmp_path: Path) -> None:
    document = {
        "id": CHAT_ID,
        "messages": [
            {"role": "user", "content": "hi", "extra": {"typed": "hi"}},
            {
                "role": "llm",
                "content": None,
                "tools": {
                    "calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "x", "arguments": "{}"},
                        }
                    ]
                },
            },
            {
                "role": "tool",
                "content": "ok",
                "tools": {"call_id": "c1", "name": "x", "is_error": False},
            },
        ],
    }
    store = ChatStore(tmp_path)
    store.path_for(CHAT_ID).write_text(json.dumps(document))
    saved, messages, line = store.restore(CHAT_ID)
    assert line is None and messages is not None and len(messages) == 3
