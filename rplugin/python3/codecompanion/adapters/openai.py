"""OpenAI Chat Completions, and the shared logic of every OpenAI-compatible provider."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..context.images import message_images
from ..errors import ProviderError
from ..messages import Message
from ..streams.parser import ResponseParser, make_call, text_events
from .base import Event, ReasoningDelta, TextDelta, Usage
from .http_adapter import HTTPAdapter, RequestSpec
from .http_errors import error_text, one_line

# Which call a streamed fragment belongs to: ("slot", n) or ("id", the call's id).
_CallKey = tuple[str, int | str]


@dataclass
class _Partial:
    id: str | None = None
    name: str = ""
    pieces: list[str] = field(default_factory=list)
    whole: dict[str, Any] | None = None

    def take(self, call_id: str | None, function: dict[str, Any]) -> None:
        """One fragment: the id and name when first seen, a piece (or all) of the arguments."""
        if call_id and not self.id:
            self.id = call_id
        if function.get("name") and not self.name:
            self.name = str(function["name"])
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            self.pieces.append(arguments)
        elif isinstance(arguments, dict):
            self.whole = arguments


class OpenAIParser(ResponseParser):
    """Chat Completions bodies: streamed chunks (deltas) or one `chat.completion` object."""

    reasoning_keys: ClassVar[tuple[str, ...]] = ("reasoning_content", "reasoning")

    def __init__(self, label: str = "OpenAI", new_id: Callable[[], str] | None = None) -> None:
        super().__init__(new_id)
        self.label = label
        self._partials: dict[_CallKey, _Partial] = {}
        self._slots: dict[tuple[int, int], _CallKey] = {}
        self._last_key: _CallKey | None = None
        self._serial = itertools.count()

    def on_object(self, event: str | None, obj: dict[str, Any]) -> list[Event]:
        """Text, reasoning and tool-call fragments of one chunk."""
        text = _plain_text(obj)
        if text is not None:  # nearly every chunk of an answer: the general reading below
            return [TextDelta(text)] if text else []
        return self._read(obj)

    def _read(self, obj: dict[str, Any]) -> list[Event]:
        if obj.get("error"):
            raise ProviderError(f"{self.label}: {one_line(error_text(obj['error']))}")
        usage = obj.get("usage")
        if isinstance(usage, dict):
            details = usage.get("prompt_tokens_details")
            cached = details.get("cached_tokens") if isinstance(details, dict) else None
            self.usage = Usage(
                usage.get("prompt_tokens"),
                usage.get("completion_tokens"),
                usage.get("total_tokens"),
                cached_tokens=cached if isinstance(cached, int) else None,
            )
        out: list[Event] = []
        for choice in obj.get("choices") or ():
            self._choice(choice, out)
        return out

    def _choice(self, choice: dict[str, Any], out: list[Event]) -> None:
        message = choice.get("message")
        if isinstance(message, dict):
            out += self._message(message)
        delta = choice.get("delta")
        if isinstance(delta, dict):
            reasoning = self._reasoning(delta)
            if reasoning is not None:
                out.append(reasoning)
            content = delta.get("content")
            if content and isinstance(content, str):
                out.append(TextDelta(content))
            for part in delta.get("tool_calls") or ():
                self._fragment(int(choice.get("index") or 0), part)
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])
            out += self.flush_calls()

    def _reasoning(self, delta: dict[str, Any]) -> ReasoningDelta | None:
        # Some servers send the same text under two names: the first one present wins.
        for key in self.reasoning_keys:
            text = delta.get(key)
            if text and isinstance(text, str):
                return ReasoningDelta(text)
        return None

    def _message(self, message: dict[str, Any]) -> list[Event]:
        reasoning = self._reasoning(message)
        out = ([reasoning] if reasoning is not None else []) + text_events(message.get("content"))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            made = make_call(
                call.get("id"), function.get("name") or "", function.get("arguments"), self.new_id
            )
            out.append(self.emit_call(made))
        return out

    def _fragment(self, choice: int, part: dict[str, Any]) -> None:
        call_id = str(part["id"]) if part.get("id") else None
        index = part.get("index")
        key = self._key(choice, None if index is None else int(index), call_id)
        self._last_key = key
        partial = self._partials.get(key)
        if partial is None:
            partial = self._partials[key] = _Partial()
        partial.take(call_id, part.get("function") or {})

    def _key(self, choice: int, index: int | None, call_id: str | None) -> _CallKey:
        """Which call a fragment continues: by its slot (choice, index), else by id, else the
        last one; a new key when none fits."""
        if index is None:
            key = ("id", call_id) if call_id else self._last_key
        else:
            key = self._slots.get((choice, index))
            known = self._partials.get(key) if key is not None else None
            # Some servers reuse index 0 for every call; a new id then means a new call.
            if key is None or (call_id and known is not None and known.id not in (None, call_id)):
                key = ("slot", next(self._serial))
                self._slots[(choice, index)] = key
        return key if key is not None else ("slot", next(self._serial))

    def flush_calls(self) -> list[Event]:
        """Every call assembled so far, in the order they started."""
        out: list[Event] = []
        for entry in self._partials.values():
            arguments: Any = entry.whole if entry.whole is not None else "".join(entry.pieces)
            if not entry.name and not arguments:
                continue
            out.append(self.emit_call(make_call(entry.id, entry.name, arguments, self.new_id)))
        self._partials.clear()
        self._slots.clear()
        self._last_key = None
        return out


def _plain_text(obj: dict[str, Any]) -> str | None:
    """The text of a chunk that carries nothing else (one choice whose delta is its content
    alone: no finish, reasoning, calls, usage or error), else None."""
    if "error" in obj or "usage" in obj:
        return None
    choices = obj.get("choices")
    if type(choices) is not list or len(choices) != 1:
        return None
    choice = choices[0]
    if type(choice) is not dict or "message" in choice or choice.get("finish_reason"):
        return None
    delta = choice.get("delta")
    if type(delta) is not dict or len(delta) != 1:
        return None
    content = delta.get("content")
    return content if type(content) is str else None


class OpenAIAdapter(HTTPAdapter):
    """OpenAI Chat Completions (`POST {url}/chat/completions`)."""

    label: ClassVar[str] = "OpenAI"
    default_url: ClassVar[str | None] = "https://api.openai.com/v1"
    default_model: ClassVar[str | None] = "gpt-4.1"
    default_api_key: ClassVar[str | None] = "env:OPENAI_API_KEY"
    chat_path: ClassVar[str] = "/chat/completions"
    stream_usage: ClassVar[bool] = True
    takes_images: ClassVar[bool] = True
    reasoning_field: ClassVar[str | None] = None

    def new_parser(self) -> OpenAIParser:
        """A Chat Completions parser sharing this adapter's id generator."""
        return OpenAIParser(self.label, self.ids)

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], model: str
    ) -> RequestSpec:
        """The Chat Completions body: messages, tools in function form, parameters."""
        body: dict[str, Any] = {
            "model": model,
            "messages": self.format_messages(messages),
            "stream": self.settings.stream,
        }
        if self.settings.stream and self.stream_usage:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = [dict(tool) for tool in tools]
        if self.settings.extra.get("prompt_cache_key", type(self) is OpenAIAdapter):
            body["prompt_cache_key"] = cache_key(model, messages, tools)
        body.update(self.settings.parameters)
        return RequestSpec(self.chat_path, body)

    def wire_id(self, call_id: str) -> str:
        """The call id as this provider accepts it."""
        return call_id

    def format_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """History in Chat Completions form; an answer's text and its calls become one message."""
        last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
        out: list[dict[str, Any]] = []
        for position, message in enumerate(messages):
            if message.role == "llm":
                self._assistant(out, message, current=position > last_user)
            elif message.role == "tool":
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": self.wire_id(message.tool_call_id or ""),
                        "content": message.content or "",
                    }
                )
            else:
                out.append({"role": message.role, "content": _user_content(message)})
        return out

    def _assistant(self, out: list[dict[str, Any]], message: Message, current: bool) -> None:
        previous = out[-1] if out else None
        if message.tool_calls and previous is not None and _is_plain_assistant(previous):
            entry = previous
        else:
            entry = {"role": "assistant", "content": None if message.tool_calls else ""}
            out.append(entry)
        if message.content:
            entry["content"] = (entry["content"] or "") + message.content
        if self.reasoning_field and current and message.reasoning:
            entry[self.reasoning_field] = entry.get(self.reasoning_field, "") + message.reasoning
        if message.tool_calls:
            entry["tool_calls"] = [
                {
                    "id": self.wire_id(call.id),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json()},
                }
                for call in message.tool_calls
            ]


def _is_plain_assistant(entry: dict[str, Any]) -> bool:
    return entry["role"] == "assistant" and "tool_calls" not in entry


def _user_content(message: Message) -> str | list[dict[str, object]]:
    """Text, or text and images as content parts (data URLs)."""
    images = message_images(message.extra)
    if not images:
        return message.content or ""
    parts: list[dict[str, object]] = [{"type": "text", "text": message.content or ""}]
    for image in images:
        url = f"data:{image.mime};base64,{image.data}"
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def cache_key(model: str, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> str:
    """OpenAI's `prompt_cache_key`: the same for requests that start the same way (the model,
    the system prompt, the tools' names), so they reach a server holding that prefix."""
    names = sorted(str((t.get("function") or t).get("name")) for t in tools)
    system = [m.content or "" for m in messages if m.role == "system"]
    text = json.dumps([model, system, names])
    import hashlib  # only when a key is sent: a plain chat's host stays without it

    return "cc-" + hashlib.sha256(text.encode()).hexdigest()[:24]
