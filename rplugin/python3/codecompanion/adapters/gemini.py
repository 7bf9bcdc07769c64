"""Google Gemini API: `generateContent` / `streamGenerateContent?alt=sse`."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from ..context.images import message_images
from ..errors import ProviderError
from ..messages import Message
from ..streams.parser import ResponseParser, make_call, text_events
from .anthropic import clean_schema
from .base import Event, Usage
from .http_adapter import HTTPAdapter, RequestSpec
from .http_errors import error_text, one_line

SCHEMA_DROP = frozenset({"strict", "additionalProperties", "$schema"})
TOP_LEVEL = frozenset({"safetySettings", "toolConfig", "cachedContent", "labels"})


class GeminiParser(ResponseParser):
    """Candidates with text, thought and whole `functionCall` parts."""

    label = "Gemini"

    def __init__(self, new_id: Callable[[], str] | None = None) -> None:
        super().__init__(new_id)
        self.signatures: dict[str, str] = {}

    def on_object(self, event: str | None, obj: dict[str, Any]) -> list[Event]:
        """One streamed chunk, or the whole answer."""
        if obj.get("error"):
            raise ProviderError(f"Gemini: {one_line(error_text(obj['error']))}")
        blocked = (obj.get("promptFeedback") or {}).get("blockReason")
        if blocked:
            raise ProviderError(f"Gemini blocked the prompt ({blocked}): rephrase it")
        meta = obj.get("usageMetadata")
        if isinstance(meta, dict):
            self.usage = Usage(
                meta.get("promptTokenCount"),
                meta.get("candidatesTokenCount"),
                meta.get("totalTokenCount"),
            )
        out: list[Event] = []
        for candidate in (obj.get("candidates") or [])[:1]:
            for part in (candidate.get("content") or {}).get("parts") or []:
                out += self._part(part)
            if candidate.get("finishReason"):
                self.finish_reason = str(candidate["finishReason"])
        return out

    def _part(self, part: dict[str, Any]) -> list[Event]:
        call = part.get("functionCall")
        if isinstance(call, dict):
            made = make_call(call.get("id"), call.get("name", ""), call.get("args"), self.new_id)
            if part.get("thoughtSignature"):
                self.signatures[made.id] = str(part["thoughtSignature"])
            return [self.emit_call(made)]
        return text_events(part.get("text"), reasoning=bool(part.get("thought")))


class GeminiAdapter(HTTPAdapter):
    """Gemini models; the key travels in `x-goog-api-key`, never in the URL."""

    label: ClassVar[str] = "Gemini"
    default_url: ClassVar[str | None] = "https://generativelanguage.googleapis.com/v1beta"
    default_model: ClassVar[str | None] = "gemini-2.5-flash"
    default_api_key: ClassVar[str | None] = "env:GEMINI_API_KEY"
    takes_images: ClassVar[bool] = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._signatures: dict[str, str] = {}

    def auth_headers(self, key: str) -> dict[str, str]:
        """Gemini's key header."""
        return {"x-goog-api-key": key}

    def new_parser(self) -> GeminiParser:
        """A Gemini parser sharing this adapter's id generator."""
        return GeminiParser(self.ids)

    def after_response(self, parser: ResponseParser) -> None:
        """Keep thought signatures: Gemini wants them back with the calls they belong to."""
        if isinstance(parser, GeminiParser):
            self._signatures.update(parser.signatures)

    def answer_state(self, parser: ResponseParser) -> dict[str, Any]:
        """The calls' thought signatures, in call order (ids may be renamed by the chat)."""
        if isinstance(parser, GeminiParser) and parser.signatures:
            return {"gemini_signatures": [parser.signatures.get(c.id) for c in parser.calls]}
        return {}

    def parse_models(self, data: Any) -> list[str]:
        """Names of models that can chat, without the `models/` prefix."""
        names = []
        for model in data.get("models", []):
            methods = model.get("supportedGenerationMethods")
            if methods is None or "generateContent" in methods:
                names.append(str(model["name"]).removeprefix("models/"))
        return sorted(names)

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], model: str
    ) -> RequestSpec:
        """contents, system_instruction, functionDeclarations and generationConfig."""
        body: dict[str, Any] = {"contents": self.format_messages(messages)}
        system = [{"text": m.content} for m in messages if m.role == "system" and m.content]
        if system:
            body["system_instruction"] = {"parts": system}
        if tools:
            body["tools"] = [{"functionDeclarations": [format_tool(t) for t in tools]}]
        config = {k: v for k, v in self.settings.parameters.items() if k not in TOP_LEVEL}
        body.update({k: v for k, v in self.settings.parameters.items() if k in TOP_LEVEL})
        if config:
            body["generationConfig"] = config
        if self.settings.stream:
            return RequestSpec(f"/models/{model}:streamGenerateContent", body, {"alt": "sse"})
        return RequestSpec(f"/models/{model}:generateContent", body)

    def format_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """History as user/model contents; consecutive results share one user turn."""
        names = {c.id: c.name for m in messages for c in m.tool_calls}
        out: list[dict[str, Any]] = []
        for message in messages:
            if message.role == "system":
                continue
            if message.role == "tool":
                call_id = message.tool_call_id or ""
                name = message.tool_name or names.get(call_id, "")
                response = {"id": call_id, "name": name, "response": _result(message)}
                _push(out, "user", [{"functionResponse": response}])
            elif message.role == "user":
                if user_parts := _user_parts(message):
                    _push(out, "user", user_parts)
            elif parts := self._model_parts(message):
                _push(out, "model", parts)
        return out

    def _model_parts(self, message: Message) -> list[dict[str, Any]]:
        """An answer's text and calls, each call with its thought signature when one is known."""
        parts: list[dict[str, Any]] = []
        if message.content:
            parts.append({"text": message.content})
        saved = _saved_signatures(message)
        for index, call in enumerate(message.tool_calls):
            part: dict[str, Any] = {
                "functionCall": {"id": call.id, "name": call.name, "args": call.arguments}
            }
            signature = saved[index] if index < len(saved) else None
            signature = signature or self._signatures.get(call.id)
            if signature:
                part["thoughtSignature"] = signature
            parts.append(part)
        return parts


def _user_parts(message: Message) -> list[dict[str, Any]]:
    """A user message's text and images."""
    parts: list[dict[str, Any]] = []
    if message.content:
        parts.append({"text": message.content})
    parts += [
        {"inline_data": {"mime_type": image.mime, "data": image.data}}
        for image in message_images(message.extra)
    ]
    return parts


def _saved_signatures(message: Message) -> list[str | None]:
    """The signatures saved with the message's calls, in call order."""
    state = message.extra.get("provider_state")
    saved = state.get("gemini_signatures") if isinstance(state, dict) else None
    if not isinstance(saved, list):
        return []
    return [item if isinstance(item, str) else None for item in saved]


def _result(message: Message) -> dict[str, Any]:
    text = message.content or ""
    try:
        decoded = json.loads(text)
    except ValueError:
        decoded = None
    if isinstance(decoded, dict) and not message.is_error:
        return decoded
    return {"error": text} if message.is_error else {"result": text}


def _push(out: list[dict[str, Any]], role: str, parts: list[dict[str, Any]]) -> None:
    if out and out[-1]["role"] == role:
        out[-1]["parts"].extend(parts)
    else:
        out.append({"role": role, "parts": parts})


def format_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI function schema as a Gemini function declaration."""
    function = tool.get("function", tool)
    out: dict[str, Any] = {"name": function["name"]}
    if function.get("description"):
        out["description"] = function["description"]
    parameters = function.get("parameters")
    if parameters and parameters.get("properties"):
        out["parameters"] = clean_schema(parameters, SCHEMA_DROP)
    return out
