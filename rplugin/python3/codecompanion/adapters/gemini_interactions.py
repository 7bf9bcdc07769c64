"""Google's Gemini Interactions API (`POST {url}/interactions`).

An interaction's answer is a list of typed steps (`thought`, `model_output`, `function_call`);
a stream sends them as `step.start` / `step.delta` / `step.stop` events between
`interaction.created` and `interaction.completed`. Earlier revisions of the API named the same
things `outputs` and `content.start` / `content.delta` / `content.stop`; both are read.

Turns are stateless by default (`store` false: the whole history is sent). With
`parameters = {"store": True}` the server keeps each interaction and the next request sends only
what is new since the last answer, continuing it by `previous_interaction_id`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import AdapterError, ProviderError
from ..messages import Message
from ..streams.parser import ResponseParser, make_call, text_events
from . import gemini
from .base import Event, Usage
from .gemini import GeminiAdapter
from .http_adapter import RequestSpec
from .http_errors import error_text, one_line

API_REVISION = "2026-05-20"  # the documented request/response shape this adapter speaks
# Request fields that sit beside `generation_config` rather than inside it.
TOP_LEVEL = frozenset(
    {
        "store",
        "background",
        "labels",
        "response_format",
        "response_mime_type",
        "response_modalities",
        "safety_settings",
        "service_tier",
        "webhook_config",
    }
)
# Interaction status → the finish reason it means; failures are errors instead.
STATUS_REASONS = {
    "completed": "stop",
    "requires_action": "tool_calls",
    "incomplete": "length",
    "budget_exceeded": "length",
}
FAILED = frozenset({"failed", "cancelled"})
_STARTS = frozenset({"step.start", "content.start"})
_DELTAS = frozenset({"step.delta", "content.delta"})
_STOPS = frozenset({"step.stop", "content.stop"})
_CREATED = frozenset({"interaction.created", "interaction.start"})
_COMPLETED = frozenset({"interaction.completed", "interaction.complete"})
_STEP_EVENTS = _STARTS | _DELTAS | _STOPS


def _texts(blocks: Any) -> str:
    """The text of a list of content blocks (`[{"type": "text", "text": ...}]`), joined."""
    if isinstance(blocks, str):
        return blocks
    if isinstance(blocks, dict):
        blocks = [blocks]
    if not isinstance(blocks, list):
        return ""
    return "".join(
        str(b.get("text") or "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    )


class InteractionsParser(ResponseParser):
    """Interaction events (`step.*`, `content.*`), or one whole interaction object."""

    label = "Gemini"

    def __init__(self, new_id: Callable[[], str] | None = None) -> None:
        super().__init__(new_id)
        self.interaction_id: str | None = None
        self.thoughts: list[dict[str, Any]] = []
        self._steps: dict[int, dict[str, Any]] = {}

    def on_object(self, event: str | None, obj: dict[str, Any]) -> list[Event]:
        """One stream event, or the whole interaction."""
        kind = str(obj.get("event_type") or event or "")
        if kind == "error" or (not kind and obj.get("error")):
            raise ProviderError(f"Gemini: {one_line(error_text(obj.get('error') or obj))}")
        if not kind:  # no event type: the whole interaction, when it is one
            whole = obj.get("object") == "interaction" or "steps" in obj or "outputs" in obj
            return self._whole(obj) if whole else []
        if kind in _STEP_EVENTS:
            return self._on_step(kind, obj)
        return self._on_interaction(kind, obj)

    def _on_step(self, kind: str, obj: dict[str, Any]) -> list[Event]:
        """A step's start, delta or stop."""
        index = int(obj.get("index") or 0)
        if kind in _STARTS:
            return self._start(index, obj.get("step") or obj.get("content"))
        if kind in _DELTAS:
            return self._delta(index, obj.get("delta") or {})
        self._usage(obj.get("usage"))
        return self._stop(index)

    def _on_interaction(self, kind: str, obj: dict[str, Any]) -> list[Event]:
        """The interaction's own events: created, a status update, completed."""
        if kind in _CREATED:
            self._interaction(obj.get("interaction") or {})
        elif kind == "interaction.status_update":
            self._status(obj.get("status"))
        elif kind in _COMPLETED:
            self._interaction(obj.get("interaction") or {})
            return self.finish()
        return []

    # -- streamed steps ------------------------------------------------------------------------

    def _start(self, index: int, step: Any) -> list[Event]:
        entry = dict(step) if isinstance(step, dict) else {}
        entry["pieces"] = []
        self._steps[index] = entry
        kind = entry.get("type")
        if kind in ("model_output", "text"):
            return text_events(_texts(entry.get("content")) or entry.get("text"))
        if kind == "thought":
            return text_events(_texts(entry.get("summary")), reasoning=True)
        return []

    def _delta(self, index: int, delta: dict[str, Any]) -> list[Event]:
        step = self._steps.setdefault(index, {"pieces": []})
        kind = delta.get("type")
        if kind == "text":
            return text_events(delta.get("text"), reasoning=step.get("type") == "thought")
        if kind == "thought_summary":
            return text_events(_texts(delta.get("content")), reasoning=True)
        if kind == "thought_signature":
            step["signature"] = str(step.get("signature") or "") + str(delta.get("signature") or "")
        elif kind == "arguments_delta":
            piece = delta.get("arguments", delta.get("partial_arguments"))
            step["pieces"].append(piece if isinstance(piece, str) else "")
        elif kind == "function_call":  # earlier revisions send the whole call as one delta
            step.update({k: v for k, v in delta.items() if v is not None})
        return []

    def _stop(self, index: int) -> list[Event]:
        step = self._steps.pop(index, None)
        if step is None:
            return []
        kind = step.get("type")
        if kind == "thought":
            self.thoughts.append({k: v for k, v in step.items() if k != "pieces"})
        if kind != "function_call":
            return []
        text = "".join(step["pieces"])
        arguments: Any = text if text.strip() else step.get("arguments")
        call = make_call(step.get("id"), str(step.get("name") or ""), arguments, self.new_id)
        return [self.emit_call(call)]

    def flush_calls(self) -> list[Event]:
        """Function-call steps the stream never stopped."""
        out: list[Event] = []
        for index in sorted(self._steps):
            if self._steps[index].get("type") == "function_call":
                out += self._stop(index)
        return out

    # -- whole interactions --------------------------------------------------------------------

    def _whole(self, interaction: dict[str, Any]) -> list[Event]:
        out: list[Event] = []
        for step in interaction.get("steps") or interaction.get("outputs") or []:
            if not isinstance(step, dict):
                continue
            kind = step.get("type")
            if kind == "model_output" and step.get("error"):
                raise ProviderError(f"Gemini: {one_line(error_text(step['error']))}")
            if kind in ("model_output", "text"):
                out += text_events(_texts(step.get("content")) or step.get("text"))
            elif kind == "thought":
                out += text_events(_texts(step.get("summary")), reasoning=True)
                self.thoughts.append(dict(step))
            elif kind == "function_call":
                made = make_call(
                    step.get("id"), str(step.get("name") or ""), step.get("arguments"), self.new_id
                )
                out.append(self.emit_call(made))
        self._interaction(interaction)
        return out

    def _interaction(self, interaction: dict[str, Any]) -> None:
        if interaction.get("id"):
            self.interaction_id = str(interaction["id"])
        self._usage(interaction.get("usage"))
        self._status(interaction.get("status"))

    def _status(self, status: Any) -> None:
        if status in FAILED:
            raise ProviderError(f"Gemini: the interaction {status}")
        if isinstance(status, str) and status in STATUS_REASONS:
            self.finish_reason = STATUS_REASONS[status]

    def _usage(self, usage: Any) -> None:
        if isinstance(usage, dict) and usage:
            self.usage = Usage(
                usage.get("total_input_tokens"),
                usage.get("total_output_tokens"),
                usage.get("total_tokens"),
            )


@dataclass(frozen=True)
class _Stored:
    """The last stored interaction and a fingerprint of the history that led to it."""

    interaction_id: str
    sent: int  # how many messages the request that produced it carried
    digest: str


def _digest(messages: Sequence[Message]) -> str:
    """A fingerprint of messages as the model saw them (an edited history no longer matches)."""
    hasher = hashlib.sha256()
    for m in messages:
        calls = [(c.id, c.name, c.arguments_json()) for c in m.tool_calls]
        row = [m.role, m.content, m.tool_call_id, m.is_error, calls]
        hasher.update(json.dumps(row, ensure_ascii=False).encode() + b"\n")
    return hasher.hexdigest()


class GeminiInteractionsAdapter(GeminiAdapter):
    """Gemini models through the Interactions API; the key travels in `x-goog-api-key`."""

    takes_images: ClassVar[bool] = False  # its API takes no image parts here

    label: ClassVar[str] = "Gemini"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._thoughts: dict[str, list[dict[str, Any]]] = {}
        self._stored: _Stored | None = None
        self._pending: tuple[int, str] | None = None

    async def connection(self) -> tuple[str, dict[str, str]]:
        """Pin the API revision whose shapes this adapter reads (a configured header wins)."""
        base, headers = await super().connection()
        if not any(name.lower() == "api-revision" for name in headers):
            headers["Api-Revision"] = API_REVISION
        return base, headers

    def new_parser(self) -> InteractionsParser:  # type: ignore[override]
        """An Interactions parser sharing this adapter's id generator."""
        return InteractionsParser(self.ids)

    def after_response(self, parser: ResponseParser) -> None:
        """Keep thoughts (with signatures) for the calls they led to, and the interaction id."""
        if not isinstance(parser, InteractionsParser):
            return
        if parser.thoughts and parser.calls:
            self._thoughts[parser.calls[0].id] = parser.thoughts
        if self._pending is not None and parser.interaction_id:
            sent, digest = self._pending
            self._stored = _Stored(parser.interaction_id, sent, digest)

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        schema: dict[str, Any] | None = None,
    ) -> AsyncIterator[Event]:
        """As every adapter; a failed stored turn is not continued (the next sends everything)."""
        try:
            async for event in super().stream(messages, tools, schema):
                yield event
        except AdapterError:
            self._stored = None
            raise

    @property
    def stores(self) -> bool:
        """Whether the server keeps interactions (`parameters.store`), so turns can continue."""
        return bool(self.settings.parameters.get("store", False))

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], model: str
    ) -> RequestSpec:
        """model, input steps, system_instruction, function tools and generation_config."""
        body: dict[str, Any] = {"model": model, "stream": self.settings.stream, "store": False}
        body.update(self._input(messages))
        system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
        if system:
            body["system_instruction"] = system
        if tools:
            body["tools"] = [format_tool(tool) for tool in tools]
        body.update(_placed(self.settings.parameters))
        return RequestSpec("/interactions", body)

    def _input(self, messages: Sequence[Message]) -> dict[str, Any]:
        """The input steps: only the new ones when they continue the stored interaction."""
        history = [m for m in messages if m.role != "system"]
        start = self._continuation(history) if self.stores else 0
        part: dict[str, Any] = {}
        if start and self._stored is not None:
            part["previous_interaction_id"] = self._stored.interaction_id
        part["input"] = self.format_messages(history[start:])
        self._pending = (len(history), _digest(history)) if self.stores else None
        return part

    def _continuation(self, history: Sequence[Message]) -> int:
        """Where the new part of `history` starts when it continues the stored interaction, else 0.

        It continues when the history begins with exactly what was sent last time, followed by
        that answer (llm messages) and then only new user or tool messages.
        """
        stored = self._stored
        if stored is None or len(history) <= stored.sent:
            return 0
        if _digest(history[: stored.sent]) != stored.digest:
            return 0
        rest = history[stored.sent :]
        answer = next((i for i, m in enumerate(rest) if m.role != "llm"), len(rest))
        if answer == 0 or answer == len(rest) or any(m.role == "llm" for m in rest[answer:]):
            return 0
        return stored.sent + answer

    def format_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """History as input steps: user_input, thought, model_output, function_call/result."""
        names = {c.id: c.name for m in messages for c in m.tool_calls}
        out: list[dict[str, Any]] = []
        answer_start = 0  # where the current model answer's steps begin
        for message in messages:
            if message.role == "llm":
                self._answer(out, message, answer_start)
                continue
            if message.role == "tool":
                out.append(_result(message, names))
            elif message.role == "user" and message.content:
                text = {"type": "text", "text": message.content}
                out.append({"type": "user_input", "content": [text]})
            answer_start = len(out)
        return out

    def _answer(self, out: list[dict[str, Any]], message: Message, answer_start: int) -> None:
        if message.content:
            out.append(
                {"type": "model_output", "content": [{"type": "text", "text": message.content}]}
            )
        for call in message.tool_calls:
            out.append(
                {
                    "type": "function_call",
                    "id": call.id,
                    "name": call.name,
                    "arguments": call.arguments,
                }
            )
        thoughts = self._thoughts.get(message.tool_calls[0].id) if message.tool_calls else None
        if thoughts:
            # Thoughts lead the answer they belong to, as the model produced them.
            out[answer_start:answer_start] = [dict(t) for t in thoughts]


def _result(message: Message, names: dict[str, str]) -> dict[str, Any]:
    call_id = message.tool_call_id or ""
    step: dict[str, Any] = {
        "type": "function_result",
        "call_id": call_id,
        "name": message.tool_name or names.get(call_id, ""),
        "result": message.content or "",
    }
    if message.is_error:
        step["is_error"] = True
    return step


def format_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI function schema as an Interactions function tool (a typed Gemini declaration)."""
    return {"type": "function", **gemini.format_tool(tool)}


def _placed(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The settings' parameters where the API reads them: a few at the top, the rest in
    generation_config (merged onto one given as such)."""
    placed = {k: v for k, v in parameters.items() if k in TOP_LEVEL}
    config = dict(parameters.get("generation_config") or {})
    config.update(
        {k: v for k, v in parameters.items() if k not in TOP_LEVEL | {"generation_config"}}
    )
    if config:
        placed["generation_config"] = config
    return placed
