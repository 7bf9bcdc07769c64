"""A suite's records: one JSON object per plugin, task and run, appended as each ends."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RecordKey = tuple[str, str, int]


@dataclass
class Record:
    """One run of one task by one plugin."""

    plugin: str
    task: str
    run: int
    solved: bool
    rounds: int
    tool_calls: int
    malformed_calls: int
    repeated_calls: int
    prompt_tokens: int
    cached_tokens: int
    first_token_s: list[float]
    wall_s: float
    ended: str
    questions: int = 0
    load_avg: list[float] = field(default_factory=list)
    answer: str = ""
    check_output: str = ""
    detail: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    started: str = ""
    setup: dict[str, Any] = field(default_factory=dict)

    def key(self) -> RecordKey:
        """What a re-run looks up to skip this run."""
        return self.plugin, self.task, self.run


def load_records(path: Path, again: tuple[str, ...] = ()) -> dict[RecordKey, dict[str, Any]]:
    """Every record in `path` by key, the last one winning; a harness error is not kept, nor a
    run that ended as one of `again` (such as "timeout", to run it again on a quieter machine)."""
    found: dict[RecordKey, dict[str, Any]] = {}
    if not path.is_file():
        return found
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue  # a line cut short when a run was killed
        if not isinstance(data, dict):
            continue
        key = (str(data["plugin"]), str(data["task"]), int(data["run"]))
        if data.get("ended") in ("error", *again):
            found.pop(key, None)
            continue
        found[key] = data
    return found


def append_record(path: Path, record: Record) -> None:
    """Add one record as a line of JSON (the file is created if needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(asdict(record), ensure_ascii=False) + "\n")
