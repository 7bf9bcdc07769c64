"""A chat's journal on disk: every field of every record is written and read back as it was."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from codecompanion.checkpoints.journal import Journal, JournalFolder, Record
from codecompanion.persistence.history import ChatStore


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


def test_a_journal_and_a_chat_make_their_folder_only_when_it_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A journal is written after every capture and a chat before every writing tool round:
    # the folder is made when a write finds it missing, not asked for at each write.
    made: list[Path] = []
    mkdir = Path.mkdir

    def counted(self: Path, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", counted)
    journals = JournalFolder(tmp_path / "chats")
    journal = Journal("c1", "/p", [Record("turn", "user", "t1", 1.0, 1, text="ü")])
    chats = ChatStore(tmp_path / "saved")
    for _ in range(2):
        journals.save(journal)
        chats.save("c1", {"id": "c1", "title": "ü"}, durable=False)
    assert made == [tmp_path / "chats", tmp_path / "saved"]
    shutil.rmtree(tmp_path / "chats")
    shutil.rmtree(tmp_path / "saved")
    journals.save(journal)
    chats.save("c1", {"id": "c1", "title": "ü"}, durable=True)
    assert len(made) == 4
    assert journals.load("c1", "/p").records == journal.records
    assert chats.load("c1") == {"id": "c1", "title": "ü"}
    left = [p.name for folder in ("chats", "saved") for p in (tmp_path / folder).iterdir()]
    assert sorted(left) == ["c1.json", "c1.json"]  # no temp file stays behind


def test_names_that_are_not_utf8_are_kept_to_the_byte(tmp_path: Path) -> None:
    odd = os.fsdecode(b"\xff\xfe.txt")  # as os.listdir gives it: surrogate escapes
    records = [
        Record("tools_done", "chat", "t1", 1.0, 1, user=[odd], both=["ü/" + odd]),
        Record("rewound", "chat", "t2", 2.0, 1, rewind={"replaced": {odd: None}}),
    ]
    folder = JournalFolder(tmp_path / "chats")
    folder.save(Journal("chat1", "/project", records))
    raw = (tmp_path / "chats" / "chat1.json").read_bytes()
    assert raw.isascii()  # escapes: any JSON reader takes it
    back = folder.load("chat1", "/project").records
    assert back == records
    assert os.fsencode(back[0].user[0]) == b"\xff\xfe.txt"
