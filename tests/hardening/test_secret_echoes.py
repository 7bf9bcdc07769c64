"""A key the provider echoes back (inside a stream's error, in an unreadable body, in an error
body for a key sent through custom `headers`) is masked in messages, buffers, saved chats and the
DEBUG log."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer, Turn, openai_text
from tests.support.nvim import Editor, wait_for
from tests.support.secrets import everything_shown, everything_written

StartNvim = Callable[..., Editor]


def sse_error(key: str) -> Turn:
    delta = {"choices": [{"index": 0, "delta": {"content": "Partial "}, "finish_reason": None}]}
    error = {"error": {"message": f"Invalid token {key} for this project"}}
    return Turn.sse([delta, error])


def anthropic_error(key: str) -> Turn:
    error = {"type": "error", "error": {"type": "authentication_error", "message": f"bad {key}"}}
    return Turn.sse([f"event: error\ndata: {json.dumps(error)}"])


# name: (adapter, the echoing answer, what the message area names, key in custom headers)
CASES: dict[str, tuple[str, Callable[[str], Turn], str, bool]] = {
    "error-inside-stream": ("openai", sse_error, "Invalid token", False),
    "anthropic-error-event": ("anthropic", anthropic_error, "bad", False),
    "garbage-body": (
        "openai",
        lambda key: Turn.body(f"{key} <html>denied</html>\n".encode(), "text/html"),
        "could not be read",
        False,
    ),
    "custom-header-echoed-in-error": (
        "openai",
        lambda key: Turn.error(400, f"header value {key} is not allowed"),
        "HTTP 400",
        True,
    ),
    "custom-header-echoed-in-stream": ("openai", sse_error, "Invalid token", True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_echoed_key_is_masked_everywhere(
    case: str, start_nvim: StartNvim, provider_server: LoopbackServer, tmp_path: Path
) -> None:
    adapter, answer, words, in_headers = CASES[case]
    key = f"sk-cc-{uuid.uuid4().hex}"
    settings = {"url": provider_server.url, "model": "m", "max_retries": 0}
    if in_headers:
        settings["api_key"] = "sk-plain-unrelated-value"
        settings["headers"] = {"X-Custom-Token": key}
    else:
        settings["api_key"] = key
    config = tmp_path / "codecompanion.py"
    config.write_text(f"adapter = {adapter!r}\nadapters = {{{adapter!r}: {settings!r}}}\n")
    provider_server.enqueue(answer(key), openai_text("fine"))
    project = tmp_path / "project"
    project.mkdir()
    ed = start_nvim(setup={"log_level": "DEBUG"}, config_file=config, cwd=project)
    ed.open_chat()
    ed.send("hello")
    ed.wait_event("CodeCompanionChatDone")
    wait_for(lambda: words in ed.nvim.exec_lua("return vim.fn.execute('messages')"))
    if in_headers:
        assert provider_server.requests[0].headers["x-custom-token"] == key

    shown = everything_shown(ed)
    assert "***" in shown or case == "garbage-body"
    assert key not in shown
    written = everything_written(ed)
    log = next(text for path, text in written.items() if path.endswith("codecompanion.log"))
    assert " DEBUG " in log
    assert [path for path, text in written.items() if key in text] == []
    assert key[6:] not in shown + "".join(written.values())
