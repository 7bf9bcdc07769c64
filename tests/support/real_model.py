"""The real-model tier's turn timeout and config file."""

from __future__ import annotations

TURN_TIMEOUT = 1500.0  # seconds: a CPU-only model takes a minute or more per request


def config(url: str, tool_calls: str = "auto", recover: bool = True, extra: str = "") -> str:
    """The user's config file: the real model as openai_compatible, temperature 0."""
    adapter = {
        "url": url,
        "model": "local",
        "parameters": {"temperature": 0},
        "read_timeout": TURN_TIMEOUT,
        "tool_calls": tool_calls,
        "recover_text_calls": recover,
    }
    return (
        "adapter = 'openai_compatible'\n"
        f"adapters = {{'openai_compatible': {adapter!r}}}\n"
        "opts = {'tool_system': {'max_auto_rounds': 4}, 'tools': {"
        "'run_command': {'allow': ['echo *']}, 'code_runner': {'container': False}}}\n" + extra
    )
