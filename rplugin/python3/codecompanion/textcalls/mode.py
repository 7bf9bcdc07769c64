"""How an adapter's model is offered tools: natively, or described in the prompt.

Adapter settings (the config file's `adapters[name]`):
- `tool_calls = "native" | "prompt" | "auto"` (default "auto"), or a dict of model-name
  patterns (fnmatch) to one of those, e.g. `{"qwen2.5-coder:*": "prompt", "*": "auto"}`.
  "auto" is native unless the provider reports that the model has no tool support (Ollama
  lists a model's capabilities); other providers are native unless configured.
- `recover_text_calls = False` turns off running calls a model wrote as text in native mode.
- `ask_recovered_calls = False` lets those calls run as native ones do (allow rules, YOLO);
  by default each is asked about, since text the model quotes can look like a call.
- `constrained_calls = True` turns on asking again, under a call schema, for a call an
  answer wrote but that could not run (see `again`; local servers' adapters only).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ..adapters.base import ChatAdapter

log = logging.getLogger("codecompanion.textcalls")

Mode = Literal["native", "prompt", "auto"]
MODES: tuple[str, ...] = ("native", "prompt", "auto")
TEXT_CALL_SETTINGS = (
    "tool_calls",
    "recover_text_calls",
    "ask_recovered_calls",
    "constrained_calls",
)


def configured_mode(setting: Any, model: str | None) -> Mode:
    """The mode the settings ask for this model ("auto" when nothing matches)."""
    if isinstance(setting, Mapping):
        for pattern, value in setting.items():
            if model is not None and fnmatchcase(model, str(pattern)) and value in MODES:
                return _mode(value)
        return "auto"
    return _mode(setting)


def _mode(value: Any) -> Mode:
    return "native" if value == "native" else "prompt" if value == "prompt" else "auto"


def setting_problem(name: str, settings: Mapping[str, Any]) -> str | None:
    """Why an adapter's text-call settings (`TEXT_CALL_SETTINGS`) are wrong, or None."""
    value = settings.get("tool_calls", "auto")
    values = value.values() if isinstance(value, Mapping) else [value]
    if not all(v in MODES for v in values):
        return (
            f"adapters[{name!r}]['tool_calls'] must be 'native', 'prompt' or 'auto' "
            f"(or a dict of model pattern to one of them), not {value!r}"
        )
    for key in TEXT_CALL_SETTINGS[1:]:
        value = settings.get(key, True)
        if not isinstance(value, bool):
            return f"adapters[{name!r}][{key!r}] must be True or False, not {value!r}"
    return None


async def resolve_mode(adapter: Any, model: str | None) -> Literal["native", "prompt"]:
    """native or prompt for this request: the configured mode, "auto" asking the provider."""
    extra = getattr(adapter.settings, "extra", {}) or {}
    mode = configured_mode(extra.get("tool_calls", "auto"), model)
    if mode != "auto":
        return mode
    probe = getattr(adapter, "supports_tools", None)
    if probe is None or model is None:
        return "native"
    try:
        supported = await probe(model)
    except Exception as exc:  # the provider could not say: native, as before
        log.warning("%s: could not read the capabilities of %s: %s", adapter.name, model, exc)
        return "native"
    return "prompt" if supported is False else "native"


def recovers(adapter: ChatAdapter) -> bool:
    """Whether calls written as text are run in native mode (on unless turned off)."""
    extra = getattr(adapter.settings, "extra", {}) or {}
    return extra.get("recover_text_calls", True) is not False


def asks_recovered(adapter: ChatAdapter) -> bool:
    """Whether calls recovered from text are asked about whatever the rules and YOLO say."""
    extra = getattr(adapter.settings, "extra", {}) or {}
    return extra.get("ask_recovered_calls", True) is not False
