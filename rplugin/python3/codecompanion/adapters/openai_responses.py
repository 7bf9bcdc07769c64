"""OpenAI Responses API (`POST {url}/responses`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from ..errors import ProviderError
from ..messages import Message
from ..streams.parser import ResponseParser, make_call, text_events
from .base import Event, Usage
from .http_adapter import HTTPAdapter, RequestSpec
from .http_errors import error_text, one_line

REASONING_DELTAS = frozenset(
    {"response.reasoning_summary_text.delta", "response.reasoning_text.delta"}
)
_CALL_PIECES = frozenset({"response.output_item.added", "response.function_call_arguments.delta"})


class ResponsesParser(ResponseParser):
    """Typed stream events (`response.*`), or one `response` object."""

    def __init__(self, label: str = "OpenAI", new_id: Callable[[], str] | None = None) -> None:
        super().__init__(new_id)
        self.label = label
        self._items: dict[str, dict[str, Any]] = {}

    def on_object(self, event: str | None, obj: dict[str, Any]) -> list[Event]:
        """One stream event, or a whole response."""
        kind = str(obj.get("type") or event or "")
        if kind == "error":
            raise ProviderError(f"{self.label}: {one_line(error_text(obj))}")
        if kind == "response.output_text.delta":
            return text_events(obj.get("delta"))
        if kind in REASONING_DELTAS:
            return text_events(obj.get("delta"), reasoning=True)
        if kind in _CALL_PIECES:
            self._call_piece(kind, obj)
        elif kind == "response.output_item.done":
            return self._item_done(obj.get("item") or {})
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            return self._ended(obj.get("response") or {})
        elif obj.get("object") == "response":
            return self._whole(obj)
        return []

    def _call_piece(self, kind: str, obj: dict[str, Any]) -> None:
        """A function call item starts, or a piece of its arguments arrives."""
        if kind == "response.output_item.added":
            item = obj.get("item") or {}
            if item.get("type") == "function_call":
                self._items[str(item.get("id"))] = {**item, "pieces": []}
            return
        entry = self._items.get(str(obj.get("item_id")))
        if entry is not None:
            entry["pieces"].append(str(obj.get("delta", "")))

    def _item_done(self, item: dict[str, Any]) -> list[Event]:
        if item.get("type") != "function_call":
            return []
        entry = self._items.pop(str(item.get("id")), {"pieces": []})
        arguments = item.get("arguments")
        if arguments is None:
            arguments = "".join(entry["pieces"])
        call_id = item.get("call_id") or entry.get("call_id")
        name = item.get("name") or entry.get("name") or ""
        return [self.emit_call(make_call(call_id, name, arguments, self.new_id))]

    def _ended(self, response: dict[str, Any]) -> list[Event]:
        if response.get("status") == "failed" or response.get("error"):
            raise ProviderError(
                f"{self.label}: {one_line(error_text(response.get('error') or {}))}"
            )
        self._usage(response.get("usage"))
        self.finish_reason = response.get("status")
        return self.finish()

    def _usage(self, usage: Any) -> None:
        if isinstance(usage, dict):
            self.usage = Usage(
                usage.get("input_tokens"), usage.get("output_tokens"), usage.get("total_tokens")
            )

    def _whole(self, response: dict[str, Any]) -> list[Event]:
        out: list[Event] = []
        for item in response.get("output") or []:
            kind = item.get("type")
            if kind == "message":
                for part in item.get("content") or []:
                    if part.get("type") == "output_text":
                        out += text_events(part.get("text"))
            elif kind == "reasoning":
                for part in item.get("summary") or []:
                    out += text_events(part.get("text"), reasoning=True)
            elif kind == "function_call":
                out += self._item_done(item)
        self._usage(response.get("usage"))
        self.finish_reason = response.get("status")
        return out

    def flush_calls(self) -> list[Event]:
        """Function calls whose `output_item.done` never came."""
        out: list[Event] = []
        for item_id in list(self._items):
            out += self._item_done({**self._items[item_id], "arguments": None})
        return out


class OpenAIResponsesAdapter(HTTPAdapter):
    """OpenAI models through the Responses API (stateless: `store` is false)."""

    label: ClassVar[str] = "OpenAI"
    default_url: ClassVar[str | None] = "https://api.openai.com/v1"
    default_model: ClassVar[str | None] = "gpt-5-mini"
    default_api_key: ClassVar[str | None] = "env:OPENAI_API_KEY"

    def new_parser(self) -> ResponsesParser:
        """A Responses parser sharing this adapter's id generator."""
        return ResponsesParser(self.label, self.ids)

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], model: str
    ) -> RequestSpec:
        """input items, flat function tools, parameters."""
        body: dict[str, Any] = {
            "model": model,
            "input": self.format_messages(messages),
            "stream": self.settings.stream,
            "store": False,
        }
        if tools:
            body["tools"] = [format_tool(tool) for tool in tools]
        body.update(self.settings.parameters)
        return RequestSpec("/responses", body)

    def format_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """History as input items: messages, function_call and function_call_output."""
        out: list[dict[str, Any]] = []
        for message in messages:
            if message.role == "tool":
                out.append(
                    {
                        "type": "function_call_output",
                        "call_id": message.tool_call_id or "",
                        "output": message.content or "",
                    }
                )
                continue
            role = "assistant" if message.role == "llm" else message.role
            if message.content or not message.tool_calls:
                out.append({"role": role, "content": message.content or ""})
            for call in message.tool_calls:
                out.append(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.arguments_json(),
                    }
                )
        return out


def format_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI Chat Completions tool in the Responses API's flat form."""
    function = tool.get("function", tool)
    out: dict[str, Any] = {"type": "function", "name": function["name"]}
    for key in ("description", "parameters"):
        if key in function:
            out[key] = function[key]
    # The Responses API makes tools strict unless told otherwise; keep Chat Completions' default.
    out["strict"] = bool(function.get("strict", False))
    return out
