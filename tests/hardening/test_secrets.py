"""A key given literally, as `env:` or as `cmd:` never shows up in the log (at DEBUG), buffers,
saved chats, error messages or :checkhealth, including when the provider refuses it (401)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer, Turn, openai_text
from tests.support.nvim import Editor, wait_for
from tests.support.secrets import everything_shown, everything_written

StartNvim = Callable[..., Editor]


@pytest.mark.parametrize("kind", ["literal", "env", "cmd"])
def test_the_key_is_never_shown_logged_or_saved(
    start_nvim: StartNvim, provider_server: LoopbackServer, tmp_path: Path, kind: str
) -> None:
    key = f"sk-cc-{uuid.uuid4().hex}"
    key_file = tmp_path / "key.txt"
    key_file.write_text(key + "\n")
    spec = {"literal": key, "env": "env:CC_HARDENING_KEY", "cmd": f"cmd:cat {key_file}"}[kind]
    config = tmp_path / "codecompanion.py"
    config.write_text(
        "adapter = 'openai'\n"
        f"adapters = {{'openai': {{'url': '{provider_server.url}/v1', 'api_key': {spec!r},"
        " 'model': 'gpt-test', 'max_retries': 0}}\n"
    )
    provider_server.enqueue(
        openai_text("fine answer"), Turn.error(401, f"Incorrect API key provided: {key}")
    )
    project = tmp_path / "project"
    project.mkdir()
    ed = start_nvim(
        setup={"log_level": "DEBUG"},
        config_file=config,
        env={"CC_HARDENING_KEY": key},
        cwd=project,
    )
    bufnr = ed.open_chat()
    ed.send("first")
    ed.wait_event("CodeCompanionChatDone")
    ed.send("second")
    ed.wait_event("CodeCompanionChatDone", 2)
    wait_for(lambda: "HTTP 401" in ed.nvim.exec_lua("return vim.fn.execute('messages')"))
    assert "fine answer" in ed.text(bufnr)
    assert provider_server.requests[0].headers["authorization"] == f"Bearer {key}"
    ed.nvim.command("checkhealth codecompanion")
    wait_for(lambda: "host alive" in ed.text())

    shown = everything_shown(ed)
    assert "key resolves" in shown and "HTTP 401" in shown
    assert key not in shown
    written = everything_written(ed)
    log = next(text for path, text in written.items() if path.endswith("codecompanion.log"))
    assert " DEBUG " in log and "answered HTTP 401" in log
    assert any(path.endswith(".json") for path in written)  # the saved chat
    assert [path for path, text in written.items() if key in text] == []
    assert key[6:] not in shown + "".join(written.values())  # not even without its prefix
