"""A long chat against the real model with a small window (REALMODEL_CTX=4096): 25 turns,
each adding a 300-line file to the message (`/file`) and asking about it. Every turn must be
answered without a context error; the meter must stay within ~10 % of the server's reported
usage; `/compact` and automatic compaction must both happen and show in the chat.

Run: `REALMODEL_CTX=4096 ../shared/realmodel/start.sh 8094` then
`REALMODEL_URL=http://127.0.0.1:8094/v1 make test-real ARGS="-k long_chat"`.
REAL_LONG_TURNS sets a shorter chat for a quick try.
"""

from __future__ import annotations

import json
import os
import statistics
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.nvim import Editor, wait_for
from tests.support.real_model import TURN_TIMEOUT, config

StartNvim = Callable[..., Editor]
pytestmark = [pytest.mark.nvim, pytest.mark.timeout(4 * 3600)]
TURNS = int(os.environ.get("REAL_LONG_TURNS", "25"))
COMPACT_AFTER = min(10, max(1, TURNS // 2))  # /compact is typed after this turn
FRUITS = ("apple", "kiwi", "plum", "fig", "lime", "pear", "date", "yuzu")
CODES = ("PELICAN", "WALRUS", "OTTER", "HERON", "BADGER", "FALCON", "LYNX")


def server_window(url: str) -> int:
    root = url.rstrip("/").removesuffix("/v1")
    with urllib.request.urlopen(root + "/props", timeout=5) as response:
        return int(json.load(response)["default_generation_settings"]["n_ctx"])


def write_file(project: Path, n: int) -> str:
    """data_<n>.txt: 300 lines, one word each but line 150, which holds a code; the code."""
    code = f"{CODES[n % len(CODES)]}-{100 + n}"
    lines = [FRUITS[(i * 3 + n) % len(FRUITS)] for i in range(300)]
    lines[150] = f"the secret code is {code}"
    (project / f"data_{n:02d}.txt").write_text("\n".join(lines) + "\n")
    return code


def saved_chat(tmp_path: Path) -> dict[str, Any]:
    chats = tmp_path / "data" / "nvim" / "codecompanion" / "chats"
    saved = sorted(chats.glob("*.json"), key=lambda p: p.stat().st_mtime)
    assert saved, "the chat was not saved"
    return json.loads(saved[-1].read_text())


def compact_now(ed: Editor, bufnr: int) -> None:
    """Type /compact and wait until its line shows and the chat is ready again."""
    before = ed.text(bufnr).count("_[context: compacted")

    def done() -> bool:
        shown = ed.text(bufnr).count("_[context: compacted") > before
        return shown and bool(ed.lua("return vim.bo[...].modifiable", bufnr))

    ed.send("/compact")
    wait_for(done, timeout=TURN_TIMEOUT)


def test_long_chat_in_a_small_window(
    start_nvim: StartNvim, tmp_path: Path, model_url: str, scenario: dict[str, Any]
) -> None:
    window = server_window(model_url)
    if window > 8192:
        pytest.skip(f"the server's window is {window}: start it with REALMODEL_CTX=4096")
    project = tmp_path / "project"
    project.mkdir()
    expected = {n: write_file(project, n) for n in range(TURNS)}
    path = tmp_path / "codecompanion.py"
    path.write_text(config(model_url))
    ed = start_nvim(config_file=path, cwd=project)
    bufnr = ed.open_chat()
    ed.answer(*(["approve"] * (4 * TURNS)))
    started = time.monotonic()
    winbars: list[str] = []
    for n in range(TURNS):
        # The small model answers from memory when asked to read with a tool again and
        # again; `/file` puts each file in the message, so every turn grows the context.
        ed.send(f"/file data_{n:02d}.txt\nWhat is the secret code written in data_{n:02d}.txt?")
        ed.wait_event("CodeCompanionChatDone", count=n + 1, timeout=TURN_TIMEOUT)
        winbars.append(str(ed.lua("return vim.wo[vim.fn.bufwinid(...)].winbar", bufnr)))
        minutes = (time.monotonic() - started) / 60
        print(f"turn {n + 1}/{TURNS} done at {minutes:.1f} min: {winbars[-1]}", flush=True)
        if n + 1 == COMPACT_AFTER:
            compact_now(ed, bufnr)
    elapsed = time.monotonic() - started
    chat = saved_chat(tmp_path)
    messages = chat["messages"]
    text = ed.text(bufnr)
    status = ed.lua("return require('codecompanion').status_info(...)", bufnr)

    # Every turn answered, none with an error.
    turns: list[list[dict[str, Any]]] = []
    for message in messages:
        if message["role"] == "user" and message["opts"]["visible"]:
            turns.append([])
        elif turns:
            turns[-1].append(message)
    incomplete = [(m.get("extra") or {}).get("incomplete") for m in messages if m["role"] == "llm"]
    assert not [i for i in incomplete if i], incomplete
    assert len(turns) == TURNS
    answered = [any(m["role"] == "llm" and (m["content"] or "").strip() for m in t) for t in turns]
    assert all(answered), answered
    right = sum(
        1
        for n, turn in enumerate(turns)
        if any(expected[n] in (m["content"] or "") for m in turn if m["role"] == "llm")
    )

    # The meter against the server's own counts.
    pairs = []
    for m in messages:
        usage = (m.get("extra") or {}).get("usage") or {}
        if usage.get("estimate") and usage.get("input"):
            pairs.append((usage["estimate"], usage["input"]))
    errors = [abs(e - i) / i for e, i in pairs]
    later = errors[1:]  # the first request has nothing to learn from yet
    assert later and statistics.mean(later) <= 0.10, errors
    assert max(later) <= 0.20, errors

    # Compaction: on demand and automatic, both visible and marked in the saved chat.
    summaries = [m for m in messages if (m["_meta"].get("tag") or "").startswith("compaction:")]
    shown = text.count("_[context: compacted")
    assert len(summaries) >= 2 and shown >= 2, (len(summaries), shown)
    assert any((m.get("extra") or {}).get("compacted") for m in messages)
    assert "tokens (" in winbars[-1] and f"/{window / 1000:.1f}k" in winbars[-1], winbars[-1]
    assert status["window"] == window and status["tokens"] and status["last_input"]
    scenario["note"] = (
        f"{TURNS} turns in {elapsed / 60:.1f} min; {right}/{TURNS} answers give the code; "
        f"meter error mean {100 * statistics.mean(later):.1f} %, max {100 * max(later):.1f} % "
        f"over {len(later)} requests; {len(summaries)} compactions "
        f"({'pruned' in text and 'with' or 'without'} pruning); last winbar: {winbars[-1]}"
    )
    print(scenario["note"])
