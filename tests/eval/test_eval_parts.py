"""The eval's parts: task folders, the recording proxy, counting calls, the summary."""

from __future__ import annotations

import http.client
import json
import re
from pathlib import Path

import pytest
from eval.drivers.ours import OursOptions, config_text
from eval.project import fresh_project, run_check
from eval.proxy import RecordingProxy, Sampling
from eval.records import Record, append_record, load_records
from eval.report import summarize, table
from eval.task import TaskError, load_suite, load_task
from eval.transcript import read_messages

from codecompanion.loopback.server import LoopbackServer, Turn, openai_text

TASKS = Path(__file__).resolve().parents[2] / "eval" / "tasks"


def write_task(folder: Path, toml: str, check: str = "true\n") -> Path:
    (folder / "repo").mkdir(parents=True)
    (folder / "task.toml").write_text(toml)
    (folder / "check.sh").write_text(check)
    return folder


def test_the_public_suite_loads_and_covers_four_languages() -> None:
    tasks = load_suite(TASKS)
    assert len(tasks) >= 12
    assert {t.name.split("-")[0] for t in tasks} == {"py", "js", "lua", "sh"}
    assert all(t.mode == "sandboxed" and t.check.is_file() for t in tasks)


def test_no_public_task_is_solved_by_its_fixture_as_it_is(tmp_path: Path) -> None:
    for index, task in enumerate(load_suite(TASKS)):
        project = fresh_project(task, tmp_path / str(index))
        assert not run_check(task, project, "").solved, task.name


def test_a_task_folder_says_what_is_wrong(tmp_path: Path) -> None:
    write_task(tmp_path / "a", 'prompt = "x"\nmode = "careless"\n')
    with pytest.raises(TaskError, match="`mode` must be one of"):
        load_task(tmp_path / "a")
    write_task(tmp_path / "b", 'tools = "@{files}"\n')
    with pytest.raises(TaskError, match="`prompt`"):
        load_task(tmp_path / "b")
    task = load_task(write_task(tmp_path / "c", 'prompt = "Do it."\ntools = "@{files}"\n'))
    assert (task.mode, task.max_rounds, task.message()) == ("sandboxed", 8, "@{files} Do it.")


def test_check_sees_the_answer_and_runs_in_the_project(tmp_path: Path) -> None:
    folder = write_task(
        tmp_path / "t", 'prompt = "p"\n', 'test -f marker && grep -q 42 <<<"$ANSWER"\n'
    )
    (folder / "repo" / "marker").write_text("")
    task = load_task(folder)
    project = fresh_project(task, tmp_path / "project")
    assert (project / ".git").is_dir()
    assert run_check(task, project, "it is 42").solved
    assert not run_check(task, project, "it is 41").solved


def _timed_answer(prompt_n: int, cache_n: int) -> Turn:
    events: list[dict[str, object] | str] = [
        {"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}]},
        {
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "timings": {"prompt_n": prompt_n, "cache_n": cache_n, "predicted_n": 1},
        },
        "[DONE]",
    ]
    return Turn.sse(events)


def _post(port: int, body: dict[str, object]) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "x"})
    data = conn.getresponse().read()
    conn.close()
    return data


def test_the_proxy_relays_records_and_sets_the_sampling(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        sampling = Sampling(temperature=0.2, seed=3)
        proxy = RecordingProxy(server.url, sampling, dump=tmp_path / "sent").start()
        try:
            server.enqueue(_timed_answer(120, 900), openai_text("plain"))
            body = {"messages": [{"role": "user", "content": "x"}], "temperature": 1.5}
            assert b'"hi"' in _post(proxy.port, {**body, "stream": True})
            tools = {"tools": [{"type": "function"}], "tool_choice": "required"}
            tools["response_format"] = {"type": "json_schema"}
            _post(proxy.port, {**body, **tools, "stream": True})
            first, second = proxy.take()
        finally:
            proxy.stop()
    sent = server.requests[0].json()
    assert (sent["temperature"], sent["seed"]) == (0.2, 3)
    # Each body is dumped as it went upstream; the tool_choice sent and a schema held are recorded.
    dumped = sorted((tmp_path / "sent").iterdir())
    assert [json.loads(f.read_text()) for f in dumped] == [r.json() for r in server.requests]
    assert (first.tool_choice, second.tool_choice) == ("", "required")
    assert (first.constrained, second.constrained) == (False, True)
    assert (first.prompt_tokens, first.cached_tokens, first.status) == (120, 900, 200)
    assert first.first_token_s is not None and first.tools == 0
    # Without llama-server's timings, the OpenAI usage is read (10 prompt tokens, none cached).
    assert (second.prompt_tokens, second.cached_tokens, second.tools) == (10, 0, 1)


def test_calls_are_counted_the_same_way_for_both_plugins() -> None:
    def call(cid: str, name: str, args: str) -> dict[str, object]:
        return {"id": cid, "function": {"name": name, "arguments": args}}

    messages = [
        {"role": "user", "content": "go"},
        {"role": "llm", "tools": {"calls": [call("1", "read_file", '{"filepath": "a"}')]}},
        {"role": "tool", "content": "text of a", "tools": {"call_id": "1"}},
        {"role": "llm", "tools": {"calls": [call("2", "read_file", '{ "filepath":"a" }')]}},
        {"role": "tool", "content": "text of a", "tools": {"call_id": "2"}},
        {"role": "llm", "tools": {"calls": [call("3", "nope", "{}")]}},
        {"role": "tool", "content": "Tool `nope` not found.", "tools": {"call_id": "3"}},
        {"role": "llm", "content": 'Done.\n```json\n{"name": "read_file"}\n```'},
    ]
    calls, answer = read_messages(messages, re.compile("not found"))
    from eval.transcript import Transcript

    transcript = Transcript(answer, calls)
    assert len(calls) == 3 and answer.startswith("Done.")
    assert transcript.repeated_calls() == 1
    assert transcript.malformed_calls() == 2  # the unknown tool, and the call left as text


def _record(plugin: str, task: str, run: int, solved: bool, tokens: int, wall: float) -> Record:
    return Record(plugin, task, run, solved, 1, 1, 0, 0, tokens, 0, [1.0], wall, "done")


def test_records_resume_and_summarize(tmp_path: Path) -> None:
    out = tmp_path / "records.jsonl"
    for record in (
        _record("ours", "a", 1, True, 100, 10),
        _record("ours", "a", 2, False, 300, 30),
        _record("ours", "b", 1, True, 100, 10),
        _record("ours", "b", 2, True, 100, 10),
        _record("theirs", "a", 1, True, 1000, 100),
        _record("theirs", "a", 2, True, 1000, 100),
        _record("theirs", "b", 1, False, 1000, 100),
        _record("theirs", "b", 2, False, 1000, 100),
    ):
        append_record(out, record)
    with out.open("a") as f:
        f.write('{"plugin": "ours", "task": "c", "run": 1, "ended": "error"}\n{"cut')
    records = load_records(out)
    assert len(records) == 8 and ("ours", "c", 1) not in records
    assert load_records(out, again=("done",)) == {}  # such runs are run again
    ours = summarize("ours", [r for r in records.values() if r["plugin"] == "ours"])
    assert (ours.pass_at_1, ours.pass_all, ours.solved_runs) == (0.75, 0.5, 3)
    assert ours.prompt_per_solved == 200 and ours.wall_per_solved == 20
    text = table(records.values())
    assert "ours/theirs prompt tokens / solved: 0.10" in text
    assert "| b | 2/2 (done) | 0/2 (done) |" in text


def test_ours_config_asks_again_for_calls_only_when_told() -> None:
    task = load_task(TASKS / "py-read-answer")

    def adapter(options: OursOptions) -> dict[str, object]:
        scope: dict[str, object] = {}
        exec(config_text(task, "http://127.0.0.1:1/v1", options), scope)
        adapters = scope["adapters"]
        assert isinstance(adapters, dict)
        settings = adapters["openai_compatible"]
        assert isinstance(settings, dict)
        return settings

    assert "constrained_calls" not in adapter(OursOptions())
    assert adapter(OursOptions(constrained_calls=True))["constrained_calls"] is True
