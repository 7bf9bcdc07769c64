"""Anthropic Messages API (`POST {url}/v1/messages`)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from ..context.images import message_images
from ..errors import ProviderError
from ..messages import Message
from ..streams.parser import ResponseParser, make_call, text_events
from .base import Event, Usage
from .cache_breakpoints import MAX_BREAKPOINTS, mark
from .http_adapter import HTTPAdapter, RequestSpec
from .http_errors import error_text, one_line

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
SCHEMA_DROP = frozenset({"strict", "additionalProperties", "$schema"})


def clean_schema(schema: Any, drop: frozenset[str]) -> Any:
    """A copy of a JSON schema without the `drop` keywords, at every level."""
    if isinstance(schema, list):
        return [clean_schema(item, drop) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in drop:
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            # Keys here are property names, which may well be called "strict".
            out[key] = {name: clean_schema(sub, drop) for name, sub in value.items()}
        else:
            out[key] = clean_schema(value, drop)
    return out


class AnthropicParser(ResponseParser):
    """Messages API bodies: the event stream, or one `message` object."""

    label = "Anthropic"

    def __init__(self, new_id: Callable[[], str] | None = None) -> None:
        super().__init__(new_id)
        self._blocks: dict[int, dict[str, Any]] = {}
        self.thinking: list[dict[str, Any]] = []
        self._input_tokens: int | None = None
        self._read: int | None = None  # input tokens read from the prompt cache
        self._written: int | None = None  # and written to it

    def on_object(self, event: str | None, obj: dict[str, Any]) -> list[Event]:
        """One stream event, or a whole message."""
        kind = obj.get("type")
        if kind == "error" or event == "error":
            raise ProviderError(f"Anthropic: {one_line(error_text(obj.get('error') or obj))}")
        if kind == "message":
            return self._whole(obj)
        if kind == "message_start":
            self._usage(obj.get("message", {}).get("usage"))
        elif kind == "content_block_start":
            return self._start(int(obj["index"]), obj["content_block"])
        elif kind == "content_block_delta":
            return self._delta(int(obj["index"]), obj["delta"])
        elif kind == "content_block_stop":
            return self._stop(int(obj["index"]))
        elif kind == "message_delta":
            self.finish_reason = obj.get("delta", {}).get("stop_reason") or self.finish_reason
            self._usage(obj.get("usage"))
        elif kind == "message_stop":
            return self.finish()
        return []

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        if usage.get("input_tokens") is not None:
            # Cached input is counted apart; all of it fills the context window.
            self._written = _count(usage.get("cache_creation_input_tokens"))
            self._read = _count(usage.get("cache_read_input_tokens"))
            extra = (self._written or 0) + (self._read or 0)
            self._input_tokens = int(usage["input_tokens"]) + extra
        output = usage.get("output_tokens")
        total = (self._input_tokens or 0) + (output or 0)
        self.usage = Usage(self._input_tokens, output, total, self._read, self._written)

    def _start(self, index: int, block: dict[str, Any]) -> list[Event]:
        entry = dict(block)
        entry["pieces"] = []
        self._blocks[index] = entry
        if block.get("type") == "text":
            return text_events(block.get("text"))
        if block.get("type") == "thinking":
            return text_events(block.get("thinking"), reasoning=True)
        return []

    def _delta(self, index: int, delta: dict[str, Any]) -> list[Event]:
        kind = delta.get("type")
        block = self._blocks.get(index)
        if kind == "text_delta":
            return text_events(delta.get("text"))
        if kind == "thinking_delta":
            if block is not None:
                block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
            return text_events(delta.get("thinking"), reasoning=True)
        if block is not None and kind == "signature_delta":
            block["signature"] = block.get("signature", "") + delta.get("signature", "")
        elif block is not None and kind == "input_json_delta":
            block["pieces"].append(delta.get("partial_json", ""))
        return []

    def _stop(self, index: int) -> list[Event]:
        block = self._blocks.pop(index, None)
        if block is None:
            return []
        if block.get("type") in ("thinking", "redacted_thinking"):
            self.thinking.append({k: v for k, v in block.items() if k != "pieces"})
        if block.get("type") != "tool_use":
            return []
        text = "".join(block["pieces"])
        arguments: Any = text if text.strip() else block.get("input")
        call = make_call(block.get("id"), block.get("name", ""), arguments, self.new_id)
        return [self.emit_call(call)]

    def _whole(self, message: dict[str, Any]) -> list[Event]:
        out: list[Event] = []
        for block in message.get("content") or []:
            kind = block.get("type")
            if kind == "text":
                out += text_events(block.get("text"))
            elif kind == "thinking":
                out += text_events(block.get("thinking"), reasoning=True)
                self.thinking.append(dict(block))
            elif kind == "tool_use":
                call = make_call(
                    block.get("id"), block.get("name", ""), block.get("input"), self.new_id
                )
                out.append(self.emit_call(call))
        self.finish_reason = message.get("stop_reason")
        self._usage(message.get("usage"))
        return out

    def flush_calls(self) -> list[Event]:
        """Tool blocks the stream never closed."""
        out: list[Event] = []
        for index in sorted(self._blocks):
            if self._blocks[index].get("type") == "tool_use":
                out += self._stop(index)
        return out


class AnthropicAdapter(HTTPAdapter):
    """Claude models. Thinking blocks are kept and sent back with the tool calls they led to."""

    label: ClassVar[str] = "Anthropic"
    default_url: ClassVar[str | None] = "https://api.anthropic.com"
    default_model: ClassVar[str | None] = "claude-sonnet-4-5"
    default_api_key: ClassVar[str | None] = "env:ANTHROPIC_API_KEY"
    takes_images: ClassVar[bool] = True
    models_path: ClassVar[str] = "/v1/models?limit=1000"
    # 529: Anthropic's documented "overloaded" status, passing like a 503.
    retry_statuses: ClassVar[frozenset[int]] = HTTPAdapter.retry_statuses | {529}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._thinking: dict[str, list[dict[str, Any]]] = {}

    def auth_headers(self, key: str) -> dict[str, str]:
        """Anthropic's key and version headers."""
        return {"x-api-key": key, "anthropic-version": API_VERSION}

    async def connection(self) -> tuple[str, dict[str, str]]:
        """The version header is needed even when the key comes from custom headers."""
        base, headers = await super().connection()
        headers.setdefault("anthropic-version", API_VERSION)
        return base, headers

    def new_parser(self) -> AnthropicParser:
        """A Messages parser sharing this adapter's id generator."""
        return AnthropicParser(self.ids)

    def after_response(self, parser: ResponseParser) -> None:
        """Remember the answer's thinking blocks under its first tool call id."""
        if isinstance(parser, AnthropicParser) and parser.thinking and parser.calls:
            self._thinking[parser.calls[0].id] = parser.thinking

    def answer_state(self, parser: ResponseParser) -> dict[str, Any]:
        """The thinking blocks that led to the calls: Anthropic wants them back, signed."""
        if isinstance(parser, AnthropicParser) and parser.thinking and parser.calls:
            return {"anthropic_thinking": copy.deepcopy(parser.thinking)}
        return {}

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], model: str
    ) -> RequestSpec:
        """The Messages body: `system`, alternating messages, tools with `input_schema`."""
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": DEFAULT_MAX_TOKENS,
            "messages": self.format_messages(messages),
            "stream": self.settings.stream,
        }
        system = [
            {"type": "text", "text": m.content}
            for m in messages
            if m.role == "system" and m.content
        ]
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [format_tool(tool) for tool in tools]
        body.update(self.settings.parameters)
        breakpoints = self.settings.extra.get("cache_breakpoints", MAX_BREAKPOINTS)
        if isinstance(breakpoints, int) and not isinstance(breakpoints, bool) and breakpoints > 0:
            mark(body, breakpoints)
        return RequestSpec("/v1/messages", body)

    def format_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """History as alternating user/assistant messages of content blocks."""
        out: list[dict[str, Any]] = []
        for message in messages:
            if message.role == "system":
                continue
            if message.role == "tool":
                block = {
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id or "",
                    "content": message.content or "",
                    "is_error": message.is_error,
                }
                _push(out, "user", [block])
            elif message.role == "user":
                blocks: list[dict[str, Any]] = [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": image.mime, "data": image.data},
                    }
                    for image in message_images(message.extra)
                ]
                if message.content and message.content.strip():
                    blocks.append({"type": "text", "text": message.content})
                if blocks:
                    _push(out, "user", blocks)
            else:
                self._assistant(out, message)
        return out

    def _assistant(self, out: list[dict[str, Any]], message: Message) -> None:
        blocks: list[dict[str, Any]] = []
        if message.content and message.content.strip():
            blocks.append({"type": "text", "text": message.content})
        for call in message.tool_calls:
            blocks.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
            )
        saved = message.extra.get("provider_state")
        thinking = saved.get("anthropic_thinking") if isinstance(saved, dict) else None
        if not thinking and message.tool_calls:
            thinking = self._thinking.get(message.tool_calls[0].id)
        if blocks:
            _push(out, "assistant", blocks)
        if thinking:
            out[-1]["content"][:0] = copy.deepcopy(thinking)  # thinking must lead the message


def _count(value: Any) -> int | None:
    """A token count the usage reported (None when it did not)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _push(out: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(blocks)
    else:
        out.append({"role": role, "content": blocks})


def format_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI function schema in Anthropic's tool form."""
    function = tool.get("function", tool)
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    out: dict[str, Any] = {"name": function["name"]}
    if function.get("description"):
        out["description"] = function["description"]
    out["input_schema"] = clean_schema(parameters, SCHEMA_DROP)
    return out
