"""Subagents against the real model with a small window (REALMODEL_CTX=4096): five 300-line
files and one question about them. Through subagents (one per file, each with its own fresh
context) the chat answers without compacting; the same task with `read_file` in the chat itself
must compact (five files do not fit in 4,096 tokens).

Run: `REALMODEL_CTX=4096 ../shared/realmodel/start.sh 8095` then
`REALMODEL_URL=http://127.0.0.1:8095/v1 make test-real ARGS="-k subagent"`.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.nvim import Editor
from tests.support.real_model import TURN_TIMEOUT, config

StartNvim = Callable[..., Editor]
pytestmark = [pytest.mark.nvim, pytest.mark.timeout(3 * 3600)]
FILES = 5
FRUITS = ("apple", "kiwi", "plum", "fig", "lime", "pear", "date", "yuzu")
CODES = ("PELICAN-11", "WALRUS-22", "OTTER-33", "HERON-44", "BADGER-55")
READER = """\
---
name: reader
description: Reads one file and reports the secret code written in it.
tools: Read
---
Read the file the task names with read_file (the whole file: start 0, end -1). Then answer in one
line: the file's name and the secret code written in it.
"""
QUESTION = (
    "Each of data_0.txt, data_1.txt, data_2.txt, data_3.txt and data_4.txt has a secret code "
    "on one of its lines. {how} Then list the five codes."
)
THROUGH_AGENTS = (
    "Call the agent tool once per file, with agent `reader` and the task "
    "`Read data_N.txt and tell me its secret code` (N = 0 to 4)."
)
DIRECTLY = "Read each file with the read_file tool (start 0, end -1)."


def _window(url: str) -> int:
    root = url.rstrip("/").removesuffix("/v1")
    with urllib.request.urlopen(root + "/props", timeout=5) as response:
        return int(json.load(response)["default_generation_settings"]["n_ctx"])


def _project(tmp_path: Path, name: str) -> Path:
    project = tmp_path / name
    project.mkdir()
    for n, code in enumerate(CODES):
        lines = [FRUITS[(i * 3 + n) % len(FRUITS)] for i in range(300)]
        lines[150] = f"the secret code is {code}"
        (project / f"data_{n}.txt").write_text("\n".join(lines) + "\n")
    return project


def _saved(tmp_path: Path) -> list[dict[str, Any]]:
    chats = tmp_path / "data" / "nvim" / "codecompanion" / "chats"
    newest = max(chats.glob("*.json"), key=lambda p: p.stat().st_mtime)
    return list(json.loads(newest.read_text())["messages"])


def _run(start_nvim: StartNvim, tmp_path: Path, url: str, name: str, how: str) -> dict[str, Any]:
    """One chat on the task; what it did: calls, compactions, answer, codes named, minutes."""
    project = _project(tmp_path, name)
    if name == "agents":
        (project / ".claude" / "agents").mkdir(parents=True)
        (project / ".claude" / "agents" / "reader.md").write_text(READER)
    path = tmp_path / f"{name}.py"
    path.write_text(config(url, extra="opts['tool_system']['max_auto_rounds'] = 12\n"))
    ed = start_nvim(config_file=path, cwd=project)
    bufnr = ed.open_chat()
    ed.answer(*(["approve"] * 20))
    started = time.monotonic()
    mention = "" if name == "agents" else " @{read_file}"
    ed.send(QUESTION.format(how=how) + mention)
    ed.wait_event("CodeCompanionChatDone", timeout=4 * TURN_TIMEOUT)  # many rounds, on a CPU
    messages = _saved(tmp_path)
    calls = [
        c["function"]["name"] for m in messages for c in (m.get("tools") or {}).get("calls") or []
    ]
    answer = next(
        (m["content"] for m in reversed(messages) if m["role"] == "llm" and m.get("content")), ""
    )
    text = ed.text(bufnr)
    return {
        "calls": calls,
        "compactions": text.count("_[context: compacted"),
        "pruned": "_[context: " in text,
        "answer": answer,
        "codes": [code for code in CODES if code in answer],
        "minutes": round((time.monotonic() - started) / 60, 1),
        "transcript": [_line(m) for m in messages if m["role"] != "system"],
    }


def _line(message: dict[str, Any]) -> str:
    """A saved message in one line, for the record."""
    calls = [
        c["function"]["name"] + c["function"]["arguments"][:80]
        for c in (message.get("tools") or {}).get("calls") or []
    ]
    text = " ".join((message.get("content") or "").split())[:200]
    return f"{message['role']}: {text} {calls if calls else ''}".rstrip()


def _tokens(url: str, text: str) -> int:
    """How many tokens the server's model reads `text` as."""
    root = url.rstrip("/").removesuffix("/v1")
    body = json.dumps({"content": text}).encode()
    request = urllib.request.Request(root + "/tokenize", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return len(json.load(response)["tokens"])


def _small_window(url: str) -> int:
    window = _window(url)
    if window > 8192:
        pytest.skip(f"the server's window is {window}: start it with REALMODEL_CTX=4096")
    return window


def test_five_files_through_subagents_in_a_4k_window_without_compacting(
    start_nvim: StartNvim, tmp_path: Path, model_url: str, scenario: dict[str, Any]
) -> None:
    window = _small_window(model_url)
    through = _run(start_nvim, tmp_path, model_url, "agents", THROUGH_AGENTS)
    files = sum(
        _tokens(model_url, (tmp_path / "agents" / f"data_{n}.txt").read_text()) for n in range(5)
    )
    print("through subagents:", json.dumps(through), f"files: {files} tokens", flush=True)
    scenario["note"] = f"files {files} tokens in a {window} window; {json.dumps(through)}"
    # Read into one context, the five files pass the point where the chat compacts (85 % of
    # the window by default), before any prompt or schema is counted: it must compact.
    assert files > 0.85 * window
    assert through["calls"].count("agent") >= 1
    assert not through["pruned"] and through["compactions"] == 0
    assert len(through["codes"]) >= 3, through


def test_five_files_read_directly_in_a_4k_window_must_compact(
    start_nvim: StartNvim, tmp_path: Path, model_url: str, scenario: dict[str, Any]
) -> None:
    _small_window(model_url)
    direct = _run(start_nvim, tmp_path, model_url, "direct", DIRECTLY)
    print("directly:", json.dumps(direct), flush=True)
    scenario["note"] = json.dumps(direct)
    assert direct["pruned"] or direct["compactions"] > 0
