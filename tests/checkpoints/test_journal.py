"""A chat's journal on disk: every field of every record is written and read back as it was."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from codecompanion.checkpoints.journal import Journal, JournalFolder, Record


def test_a_saved_journal_holds_every_field_and_reads_back_equal(tmp_path: Path) -> None:
    records = [
        Record("turn", "user", "t1", 1.5, 1, text="first", message_id=7),
        Record("tools", "chat", "t2", 2.5, 1, cut=True),
        Record("rewound", "user", "t3", 3.5, 2, rewind={"before": "t2", "files": ["a.txt"]}),
    ]
    folder = JournalFolder(tmp_path / "chats")
    folder.save(Journal("chat1", "/project", records))
    written = json.loads((tmp_path / "chats" / "chat1.json").read_text(encoding="utf-8"))
    assert written == {"root": "/project", "records": [dataclasses.asdict(r) for r in records]}
    assert folder.load("chat1", "/project").records == records
