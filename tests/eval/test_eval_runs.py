"""The eval end to end on real Neovim: a task folder written here, a scripted model, both plugins.

The model is the loopback server behind the eval's recording proxy: it creates a file with one
call, then answers. The records must say what happened (solved, rounds, calls, tokens).
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from eval.drivers.ours import Ours
from eval.drivers.theirs import Theirs
from eval.proxy import RecordingProxy, Sampling
from eval.records import load_records
from eval.runner import Plugin, Runner
from eval.shared import anchor_root, shared_folder
from eval.task import load_suite

from codecompanion.loopback.server import LoopbackServer, RecordedRequest, Turn, openai_text
from codecompanion.loopback.turns import openai_tool_calls

pytestmark = [pytest.mark.nvim, pytest.mark.timeout(300)]

TOML = """\
# Written outside eval/tasks, in the format the eval documents.
prompt = "Create hello.txt holding the word hi."
tools = "@{files}"
max_rounds = 3
timeout_s = 120
"""
CHECK = 'grep -q hi hello.txt && grep -q "Created" <<<"$ANSWER"\n'


def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "suite" / "make-hello"
    (folder / "repo").mkdir(parents=True)
    (folder / "repo" / "README.md").write_text("a project\n")
    (folder / "task.toml").write_text(TOML)
    (folder / "check.sh").write_text(CHECK)
    return folder.parent


def scripted(request: RecordedRequest) -> Turn:
    """A call to create_file first; once its result is in the history, the answer."""
    if request.method != "POST":
        return Turn.json({})  # the server's properties: none
    messages = request.json()["messages"]
    if any(m.get("role") == "tool" for m in messages):
        return openai_text("Created hello.txt.")
    return openai_tool_calls(
        [("call_1", "create_file", {"filepath": "hello.txt", "content": "hi"})]
    )


def run_suite(tmp_path: Path, plugin: Plugin) -> dict[str, object]:
    out = tmp_path / "records.jsonl"
    cwd = os.getcwd()
    with LoopbackServer() as server:
        server.set_responder(scripted)
        proxy = RecordingProxy(server.url, Sampling(temperature=0.2)).start()
        try:
            runner = Runner(proxy, out, {"test": True}, log=io.StringIO())
            runner.run_suite(load_suite(suite(tmp_path)), [plugin], runs=1)
            (record,) = load_records(out).values()
            # A second pass finds the record and runs nothing.
            runner.run_suite(load_suite(suite(tmp_path / "again")), [plugin], runs=1)
        finally:
            proxy.stop()
        posted = [r for r in server.requests if r.method == "POST"]
        assert len(posted) == 2
        assert all(r.json()["temperature"] == 0.2 for r in posted)
    assert len(out.read_text().splitlines()) == 1
    assert os.getcwd() == cwd  # the runner's own folder stays (a run's folder is removed)
    return record


def check_record(record: dict[str, object]) -> None:
    assert record["solved"], json.dumps(record, indent=1)
    assert record["ended"] == "done"
    assert (record["rounds"], record["tool_calls"]) == (2, 1)
    assert (record["malformed_calls"], record["repeated_calls"], record["questions"]) == (0, 0, 0)
    assert record["prompt_tokens"] == 20  # the loopback's usage: 10 per request
    assert len(record["first_token_s"]) == 2  # type: ignore[arg-type]
    assert record["answer"] == "Created hello.txt."


def test_ours_runs_a_task_folder_written_elsewhere(tmp_path: Path) -> None:
    check_record(run_suite(tmp_path, Ours()))


@pytest.mark.skipif(shared_folder() is None, reason="no ../shared/anchor: CodeCompanion's snapshot")
def test_codecompanion_runs_the_same_task(tmp_path: Path) -> None:
    check_record(run_suite(tmp_path, Theirs(anchor_root())))
