"""The context meter on screen (tmux, stock UI): its used/window figure first and in sight in a
36-column chat from the moment it opens, the provider's count followed, and a fresh count after
a stop, a rewind and a compaction."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codecompanion.loopback.server import LoopbackServer, Turn, openai_text
from tests.support.nvim import wait_for
from tests.support.tui import HAVE_TMUX, Tui, write_config

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def counted(text: str, prompt: int, completion: int) -> Turn:
    """An answer whose provider reports `prompt` + `completion` tokens."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "c",
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    usage = {"prompt_tokens": prompt, "completion_tokens": completion}
    usage["total_tokens"] = prompt + completion
    events: list[dict[str, Any] | str] = [
        chunk({"role": "assistant", "content": text}),
        chunk({}, "stop"),
        {"id": "c", "model": "m", "choices": [], "usage": usage},
        "[DONE]",
    ]
    return Turn.sse(events)


def tokens(screen: Tui) -> int:
    return int(screen.lua("return require('codecompanion').status_info().tokens or -1"))


def test_the_meter_figure_is_in_sight_from_the_start_and_follows_what_is_sent(
    tui: Callable[..., Tui], tmp_path: Path, provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(
        counted("fine, and a long explanation " * 40, 1234, 56),
        openai_text("a long answer " * 200, chunks=200, delay=0.05, usage=False),
        openai_text("SUMMARY of the chat", usage=False),
    )
    config = write_config(
        tmp_path, provider_server, "adapters['openai']['context_window'] = 4096\n"
    )
    screen = tui(
        width=100,
        height=30,
        setup={"window": {"layout": "vertical", "width": 36}},
        config_file=config,
        cwd=tmp_path,
    )
    screen.command("CodeCompanionChat")
    # From the opening: the tokens the first request would send, of the window.
    shown = screen.wait_screen("/4.1k tokens (")
    assert "Press ENTER" not in shown
    opened = tokens(screen)
    assert opened > 0

    screen.keys("G", "o", "hello", "Escape", "Enter")
    # The provider counted 1234 in and 56 out: that is what the next request holds.
    wait_for(lambda: tokens(screen) == 1234 + 56)
    row = screen.wait_screen("1.3k/4.1k tokens (31%)")
    assert "1.3k/4.1k tokens (31%) · last 1.2k …" in row  # cut from the right, figure first

    screen.keys("G", "o", "tell me more", "Escape", "Enter")
    screen.wait_screen("a long answer")
    screen.keys("q")  # stop: the partial answer and the question are counted now
    wait_for(lambda: tokens(screen) > 1290)
    stopped = tokens(screen)

    screen.lua("require('codecompanion').rewind({ turn = 2, code = false, conversation = true })")
    wait_for(lambda: tokens(screen) < stopped)
    rewound = tokens(screen)
    assert rewound == 1290  # back to what the provider counted before the second question

    screen.keys("Escape", "G", "o", "/compact", "Escape", "Enter")
    screen.wait_screen("compacted")
    wait_for(lambda: tokens(screen) != rewound)
    assert "Press ENTER" not in screen.screen()
