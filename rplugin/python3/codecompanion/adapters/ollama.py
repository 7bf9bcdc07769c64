"""Ollama's native chat API (`POST {url}/api/chat`, newline-delimited JSON stream)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, ClassVar

from ..budget.windows import ollama_show_window
from ..context.images import message_images
from ..errors import ProviderError
from ..messages import Message
from ..streams.parser import ResponseParser, make_call, text_events
from .base import Event, Usage
from .http_adapter import HTTPAdapter, RequestSpec
from .http_errors import error_text, one_line

TOP_LEVEL = frozenset({"think", "keep_alive", "format"})


class OllamaParser(ResponseParser):
    """Chat chunks: text, `thinking`, and whole tool calls without ids."""

    label = "Ollama"

    def on_object(self, event: str | None, obj: dict[str, Any]) -> list[Event]:
        """One chunk (or the whole non-streamed answer)."""
        if obj.get("error"):
            raise ProviderError(f"Ollama: {one_line(error_text(obj['error']))}")
        message = obj.get("message") or {}
        out = text_events(message.get("thinking"), reasoning=True)
        out += text_events(message.get("content"))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            made = make_call(
                call.get("id"), function.get("name", ""), function.get("arguments"), self.new_id
            )
            out.append(self.emit_call(made))
        if obj.get("done"):
            self.finish_reason = obj.get("done_reason")
            prompt, completion = obj.get("prompt_eval_count"), obj.get("eval_count")
            if prompt is not None or completion is not None:
                self.usage = Usage(prompt, completion, (prompt or 0) + (completion or 0))
            out += self.finish()
        return out


class OllamaAdapter(HTTPAdapter):
    """Local models through Ollama; `api_key` is only needed for a hosted Ollama."""

    label: ClassVar[str] = "Ollama"
    default_url: ClassVar[str | None] = "http://localhost:11434"
    default_model: ClassVar[str | None] = None
    default_api_key: ClassVar[str | None] = None
    key_required: ClassVar[bool] = False
    models_path: ClassVar[str] = "/api/tags"
    takes_images: ClassVar[bool] = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # /api/show's answer per model, asked once
        self._shown: dict[str, Mapping[str, object]] = {}

    async def show(self, model: str) -> Mapping[str, object]:
        """/api/show's answer for `model` (empty when it is not a JSON object), asked once."""
        if model not in self._shown:
            base, headers = await self.connection()
            body = {"model": model}
            response = await self._send("POST", base + "/api/show", headers, body, {}, None)
            data = await self.read_json(response)
            self._shown[model] = data if isinstance(data, dict) else {}
        return self._shown[model]

    async def supports_tools(self, model: str) -> bool | None:
        """Whether `model` takes tools, from /api/show's `capabilities` (None: not reported)."""
        data = await self.show(model)
        capabilities = data.get("capabilities")
        return "tools" in capabilities if isinstance(capabilities, list) else None

    async def context_window(self, model: str) -> int | None:
        """The context Ollama runs `model` with (`num_ctx`, else the model's own length); a
        failure is raised (the chat goes on without the window, the next chat asks again)."""
        data = await self.show(model or await self.resolve_model())
        return ollama_show_window(data, self.settings.parameters)

    def stream_constrained(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        schema: dict[str, Any],
    ) -> AsyncIterator[Event]:
        """The request with its answer held to `schema` (Ollama's structured outputs)."""
        return self.stream(messages, tools, schema)

    def constrain(self, spec: RequestSpec, schema: dict[str, Any]) -> None:
        """Ollama's `format`: a JSON schema the whole answer follows."""
        spec.body["format"] = schema

    def new_parser(self) -> OllamaParser:
        """An Ollama parser sharing this adapter's id generator."""
        return OllamaParser(self.ids)

    def parse_models(self, data: Any) -> list[str]:
        """Installed model names from /api/tags."""
        return sorted(str(m["name"]) for m in data.get("models", []) if isinstance(m, dict))

    def model_hint(self, model: str) -> str:
        """Ollama only knows pulled models."""
        return f"run `ollama pull {model}` or pick an installed model"

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], model: str
    ) -> RequestSpec:
        """The /api/chat body; sampling parameters go under `options`."""
        body: dict[str, Any] = {
            "model": model,
            "messages": self.format_messages(messages),
            "stream": self.settings.stream,
        }
        if tools:
            body["tools"] = [dict(tool) for tool in tools]
        parameters = self.settings.parameters
        body.update({k: v for k, v in parameters.items() if k in TOP_LEVEL})
        options = {k: v for k, v in parameters.items() if k not in TOP_LEVEL}
        if options:
            body["options"] = options
        return RequestSpec("/api/chat", body)

    def format_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """History with object arguments, and results naming their tool."""
        names = {c.id: c.name for m in messages for c in m.tool_calls}
        out: list[dict[str, Any]] = []
        for message in messages:
            content = message.content or ""
            if message.role == "tool":
                name = message.tool_name or names.get(message.tool_call_id or "", "")
                out.append({"role": "tool", "content": content, "tool_name": name})
            elif message.role == "llm":
                _add_answer(out, message)
            else:
                entry: dict[str, Any] = {"role": message.role, "content": content}
                images = [image.data for image in message_images(message.extra)]
                if images:
                    entry["images"] = images
                out.append(entry)
        return out


def _add_answer(out: list[dict[str, Any]], message: Message) -> None:
    """An answer's text and calls; calls that follow an answer's text join its message."""
    content = message.content or ""
    calls = [{"function": {"name": c.name, "arguments": c.arguments}} for c in message.tool_calls]
    previous = out[-1] if out else {}
    if calls and previous.get("role") == "assistant" and "tool_calls" not in previous:
        previous["tool_calls"] = calls
        previous["content"] += content
        return
    entry: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        entry["tool_calls"] = calls
    out.append(entry)
