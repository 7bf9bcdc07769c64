"""Runs a suite: every task, every run, each plugin in turn against the same recording proxy."""

from __future__ import annotations

import datetime
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from .project import fresh_project, run_check
from .proxy import Exchange, RecordingProxy
from .records import Record, append_record, load_records
from .task import Task
from .transcript import Transcript


class Plugin(Protocol):
    """A plugin the eval can drive."""

    name: str

    def run(self, task: Task, project: Path, base_url: str, scratch: Path) -> Transcript: ...


def order(plugins: Sequence[Plugin], run: int, index: int) -> list[Plugin]:
    """The plugins in turn, the first one alternating, so neither always finds a warm cache."""
    turn = list(plugins)
    return turn if (run + index) % 2 == 0 else turn[::-1]


def record_of(
    plugin: str, task: Task, run: int, transcript: Transcript, exchanges: list[Exchange]
) -> Record:
    """The record of a finished run, before its check."""
    answered = [e for e in exchanges if e.status == 200 and not e.error]
    return Record(
        plugin=plugin,
        task=task.name,
        run=run,
        solved=False,
        rounds=len(answered),
        tool_calls=len(transcript.calls),
        malformed_calls=transcript.malformed_calls(),
        repeated_calls=transcript.repeated_calls(),
        prompt_tokens=sum(e.prompt_tokens for e in exchanges),
        cached_tokens=sum(e.cached_tokens for e in exchanges),
        first_token_s=[round(e.first_token_s, 3) for e in exchanges if e.first_token_s is not None],
        wall_s=0.0,
        ended=transcript.ended,
        questions=transcript.questions,
        answer=transcript.answer[-4000:],
        detail=transcript.detail,
        requests=[e.to_json() for e in exchanges],
    )


class Runner:
    """Runs tasks through plugins and appends a record as each run ends."""

    def __init__(
        self,
        proxy: RecordingProxy,
        out: Path,
        setup: dict[str, Any],
        log: Any = sys.stderr,
        again: tuple[str, ...] = (),
    ) -> None:
        self.again = again
        self.proxy = proxy
        self.out = out
        self.setup = setup
        self.log = log

    def run_suite(self, tasks: Sequence[Task], plugins: Sequence[Plugin], runs: int) -> None:
        """Every task `runs` times through every plugin; what `out` already holds is skipped."""
        done = load_records(self.out, self.again)
        for run in range(1, runs + 1):
            for index, task in enumerate(tasks):
                for plugin in order(plugins, run, index):
                    if (plugin.name, task.name, run) in done:
                        continue
                    record = self.run_one(plugin, task, run)
                    append_record(self.out, record)
                    print(_line(record), file=self.log, flush=True)

    def run_one(self, plugin: Plugin, task: Task, run: int) -> Record:
        """One run in a fresh copy of the task's project."""
        self.proxy.sampling.seed = run if self.proxy.sampling.temperature is not None else None
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        with tempfile.TemporaryDirectory(prefix=f"eval-{plugin.name}-") as tmp:
            scratch = Path(tmp) / "scratch"
            scratch.mkdir()
            project = fresh_project(task, Path(tmp) / "project")
            self.proxy.take()
            began = time.monotonic()
            try:
                transcript = plugin.run(
                    task, project, f"http://127.0.0.1:{self.proxy.port}", scratch
                )
            except Exception as exc:  # a harness failure is recorded, and run again next time
                detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                transcript = Transcript(ended="error", detail=detail[-1000:])
            wall = time.monotonic() - began
            record = record_of(plugin.name, task, run, transcript, self.proxy.take())
            if transcript.ended != "error":
                verdict = run_check(task, project, transcript.answer)
                record.solved, record.check_output = verdict.solved, verdict.output
        record.wall_s = round(wall, 2)
        record.load_avg = [round(x, 2) for x in os.getloadavg()]
        record.started = started
        record.setup = self.setup
        return record


def _line(record: Record) -> str:
    verdict = "solved" if record.solved else "failed"
    return (
        f"eval: {record.plugin:8} {record.task:28} run {record.run}: {verdict:6} "
        f"{record.ended:10} rounds {record.rounds} calls {record.tool_calls} "
        f"prompt {record.prompt_tokens} (+{record.cached_tokens} cached) {record.wall_s:.0f} s "
        f"load {record.load_avg[0] if record.load_avg else 0:.2f}"
    )
