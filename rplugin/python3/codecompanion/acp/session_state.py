"""What an agent's session says of itself: its modes, config options (model, thought level),
commands and context use; shown in the buffer's variables, the header and the meter."""

from __future__ import annotations

from dataclasses import dataclass, field

from acp.schema import AvailableCommand, SessionConfigSelectGroup, SessionMode

from ..render_ops import SetVar
from .connection import ConfigOption, SessionState


@dataclass
class AgentSessionState:
    """One chat's agent session as last reported."""

    agent: str
    session_id: str | None = None
    mode: str | None = None
    modes: list[SessionMode] = field(default_factory=list)
    config_options: list[ConfigOption] = field(default_factory=list)
    commands: list[AvailableCommand] = field(default_factory=list)
    used: int | None = None
    size: int | None = None
    cost: float | None = None

    def started(self, state: SessionState) -> None:
        """A session made or loaded: its id, modes and options."""
        self.session_id = state.session_id
        if state.modes is not None:
            self.modes = list(state.modes.available_modes)
            self.mode = state.modes.current_mode_id
        self.config_options = list(state.config_options)

    def set_mode(self, mode_id: str) -> None:
        """The agent's current mode."""
        self.mode = mode_id

    def option(self, category: str) -> str | None:
        """The current value of the config option of `category` (model, thought_level, mode)."""
        for option in self.config_options:
            if option.category == category or option.id == category:
                return str(option.current_value)
        return None

    @property
    def model(self) -> str | None:
        """The model the agent says it uses (its `model` config option)."""
        return self.option("model")

    def models(self) -> list[str]:
        """The values of the agent's model option."""
        for option in self.config_options:
            if option.category == "model" and option.type == "select":
                return [str(value) for value, _name in _values(option)]
        return []

    def mode_name(self) -> str | None:
        """The current mode's name (a mode config option counts too)."""
        for mode in self.modes:
            if mode.id == self.mode:
                return mode.name
        return self.mode or self.option("mode")

    def header(self) -> str:
        """The answer's header: the agent and its model."""
        model = self.model
        return f"## {self.agent}" + (f" ({model})" if model else "")

    def meter_text(self) -> str:
        """One line, the context figure first (as every chat's meter): use/size, cost, then
        the agent, its mode and model, as far as known."""
        parts: list[str] = []
        if self.used is not None and self.size:
            parts.append(f"{_short(self.used)}/{_short(self.size)}")
        if self.cost is not None:
            parts.append(f"${self.cost:.2f}")
        parts.append(self.agent)
        mode = self.mode_name()
        if mode:
            parts.append(f"mode {mode}")
        if self.model:
            parts.append(self.model)
        return " · ".join(parts)

    def commands_var(self) -> SetVar:
        """`b:codecompanion_acp_commands`: what `/` completion offers."""
        value = [
            {"name": c.name, "description": c.description, "hint": _hint(c)} for c in self.commands
        ]
        return SetVar(name="codecompanion_acp_commands", value=value)

    def mode_var(self) -> SetVar:
        """`b:codecompanion_acp_mode`: the current mode and the modes to pick from."""
        modes = [{"id": m.id, "name": m.name, "description": m.description} for m in self.modes]
        return SetVar(name="codecompanion_acp_mode", value={"current": self.mode, "modes": modes})

    def options_var(self) -> SetVar:
        """`b:codecompanion_acp_options`: each config option with its values."""
        return SetVar(
            name="codecompanion_acp_options", value=[_option(o) for o in self.config_options]
        )

    def vars(self) -> list[SetVar]:
        """Every variable, for a chat (re)drawn."""
        return [self.commands_var(), self.mode_var(), self.options_var()]


def _hint(command: AvailableCommand) -> str | None:
    given = command.input
    return given.root.hint if given is not None else None


def _values(option: ConfigOption) -> list[tuple[str | bool, str]]:
    """An option's values and their names (groups flattened; a boolean's on and off)."""
    if option.type != "select":
        return [(True, "on"), (False, "off")]
    values: list[tuple[str | bool, str]] = []
    for entry in option.options:
        items = entry.options if isinstance(entry, SessionConfigSelectGroup) else [entry]
        values += [(item.value, item.name) for item in items]
    return values


def _option(option: ConfigOption) -> dict[str, object]:
    values = [{"value": value, "name": name} for value, name in _values(option)]
    category = option.category if isinstance(option.category, str) else None
    return {
        "id": option.id,
        "name": option.name,
        "category": category,
        "current": option.current_value,
        "values": values,
    }


def _short(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)
