"""Who wrote in a project while a chat's tool round ran, and so who changed each path it changed.

Three writers are seen from the host: the file tools say which files they wrote (and the state
they left them in), Neovim says which files it saved (the user's `:w`), and a command, an MCP
server or a user's tool can write only while its call runs. A path changed during a round is
the chat's when its tool wrote it, or when its last change (the inode's change time, which no
program can set) falls inside one of the chat's calls; it is the user's when Neovim or another
chat's tool left it as it is, or when it changed while none of the chat's calls ran. When two
chats ran at that moment, or the path changed again after the capture, it cannot be told: the
path counts as changed by both, and a rewind asks.

Everything here is kept and read on the event loop's thread; a round's `Round` is a frozen copy
handed to the worker that captures the project after the round.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from .store import Entry

Who = Literal["chat", "user", "both"]
# What a writer left at a path: its kind ("f", "l", "d"), size and modification time (ns).
# Neovim, the tools and the capture each take it from one lstat; a folder is ("d", 0, 0).
Mark = tuple[str, int, int]
# A call's change times are read from the kernel's coarse clock, which may lag the time the
# call was seen to start by a tick: a window opens this much earlier.
SLACK_NS = 50_000_000
# Writers older than this are forgotten (a round is captured well before).
KEEP_NS = 3600 * 1_000_000_000
KEEP_CALLS = 2048


def mark_of(st: os.stat_result) -> Mark:
    """The mark of an lstat: a file's or link's kind, size and modification time."""
    if stat.S_ISDIR(st.st_mode):
        return ("d", 0, 0)
    kind = "l" if stat.S_ISLNK(st.st_mode) else "f"
    return (kind, st.st_size, st.st_mtime_ns)


def lstat_mark(path: str) -> Mark | None:
    """The mark of what is at `path` now (None: nothing)."""
    try:
        return mark_of(os.lstat(path))
    except OSError:
        return None


@dataclass(frozen=True)
class Window:
    """A chat's call whose writes cannot be listed (a command, an MCP or user tool): when it ran."""

    chat_id: str
    call_id: str
    start: int
    end: int | None = None  # still running

    def holds(self, when: int) -> bool:
        """Whether a change at `when` (ns) may be this call's."""
        return self.start - SLACK_NS <= when and (self.end is None or when <= self.end)

    def overlaps(self, other: Window) -> bool:
        """Whether the two calls ran at some same moment."""
        mine_end = self.end if self.end is not None else time.time_ns()
        their_end = other.end if other.end is not None else time.time_ns()
        return self.start <= their_end and other.start <= mine_end


@dataclass(frozen=True)
class Written:
    """A file a writer left: which chat's tool (empty: Neovim's save), where, and its mark."""

    chat_id: str
    path: str  # absolute
    mark: Mark | None  # None: removed
    time: int


@dataclass
class Activity:
    """Every chat's calls and tool writes, and Neovim's saves, for a while (loop thread only)."""

    windows: list[Window] = field(default_factory=list)
    writes: list[Written] = field(default_factory=list)

    def started(self, chat_id: str, call_id: str) -> None:
        """A call of a chat whose writes are not listed starts running."""
        self._forget()
        self.windows.append(Window(chat_id, call_id, time.time_ns()))

    def ended(self, chat_id: str, call_id: str) -> None:
        """That call finished: its process tree has ended."""
        for index in range(len(self.windows) - 1, -1, -1):
            window = self.windows[index]
            if window.chat_id == chat_id and window.call_id == call_id and window.end is None:
                self.windows[index] = Window(chat_id, call_id, window.start, time.time_ns())
                return

    def wrote(self, chat_id: str, path: str, mark: Mark | None) -> None:
        """A chat's file tool left `path` (absolute) with this mark; Neovim's save has no chat."""
        self._forget()
        self.writes.append(Written(chat_id, path, mark, time.time_ns()))

    def saved(self, path: str, mark: Mark) -> None:
        """Neovim wrote a buffer to `path` (absolute): the user's save."""
        self.wrote("", path, mark)

    def _forget(self) -> None:
        if len(self.windows) > KEEP_CALLS:  # a busy hour: the oldest finished calls go
            old = self.windows[: -KEEP_CALLS // 2]
            self.windows = [w for w in old if w.end is None] + self.windows[-KEEP_CALLS // 2 :]
        cutoff = time.time_ns() - KEEP_NS
        if self.windows and self.windows[0].end is not None and self.windows[0].end < cutoff:
            self.windows = [w for w in self.windows if w.end is None or w.end >= cutoff]
        if self.writes and self.writes[0].time < cutoff:
            self.writes = [w for w in self.writes if w.time >= cutoff]

    def round(self, chat_id: str, root: str, start: int) -> Round:
        """What was seen of the writers since `start` (ns), for a round of `chat_id` in `root`."""
        prefix = root.rstrip("/") + "/"
        # Only calls still running when the round began can matter: its own, or others that
        # ran at the same time as one of its own.
        recent = [w for w in self.windows if w.end is None or w.end >= start]
        own = tuple(w for w in recent if w.chat_id == chat_id)
        others = tuple(
            w for w in recent if w.chat_id != chat_id and any(w.overlaps(o) for o in own)
        )
        mine: dict[str, Mark | None] = {}
        theirs: dict[str, set[Mark | None]] = {}
        for write in self.writes:
            if write.time < start or not write.path.startswith(prefix):
                continue
            rel = write.path[len(prefix) :]
            if write.chat_id == chat_id:
                mine[rel] = write.mark  # the last one stands
            else:
                theirs.setdefault(rel, set()).add(write.mark)
        frozen = {rel: frozenset(marks) for rel, marks in theirs.items()}
        return Round(own, others, mine, frozen)


@dataclass(frozen=True)
class Round:
    """One round's writers, as the capture after it sees them (paths relative to the root)."""

    windows: tuple[Window, ...] = ()  # the chat's own calls that list no writes
    others: tuple[Window, ...] = ()  # other chats' calls that ran at the same time
    wrote: Mapping[str, Mark | None] = field(default_factory=dict)  # the chat's tools
    seen: Mapping[str, frozenset[Mark | None]] = field(default_factory=dict)  # Neovim, others

    def credit(
        self,
        path: str,
        now: Entry | None,
        found: os.stat_result | None,
        folder: os.stat_result | None = None,
    ) -> Who:
        """Who changed `path`, captured as `now`; `found` is its lstat after the capture, None
        when it is gone or no longer what was captured; `folder` the lstat of the folder that
        held it (read for a path that went: its folder last changed when it went, or later)."""
        mark = _checked(now, found)
        if path in self.wrote:  # a tool of the chat wrote it: is it still as the tool left it?
            left = self.wrote[path]
            return "chat" if (now is None and left is None) or (mark and mark == left) else "both"
        inside = path + "/"
        if now is not None and now.kind == "d" and any(p.startswith(inside) for p in self.wrote):
            return "chat"  # a folder a file tool made for a file it wrote
        if (now is None or mark is not None) and mark in self.seen.get(path, ()):
            return "user"  # as Neovim or another chat's tool left it
        if not self.windows:
            return "user"  # only its tools wrote for the chat, and not this
        if now is None:
            return self._removed(folder)
        return self._timed(mark, found)

    def _removed(self, folder: os.stat_result | None) -> Who:
        """Who removed a path no tool listed: not the chat if its folder last changed before
        any call of the chat ran; else the chat (or either, when another chat's ran too)."""
        first = min(window.start for window in self.windows) - SLACK_NS
        if folder is not None and folder.st_ctime_ns < first:
            return "user"
        return "both" if self.others else "chat"

    def _timed(self, mark: Mark | None, found: os.stat_result | None) -> Who:
        """Who changed a path no tool listed, from when it last changed."""
        if mark is None or found is None:
            return "both"  # changed again since the capture
        when = found.st_ctime_ns
        if not any(window.holds(when) for window in self.windows):
            return "user"
        return "both" if any(window.holds(when) for window in self.others) else "chat"


def _checked(now: Entry | None, found: os.stat_result | None) -> Mark | None:
    """The mark of `found` if it is what the capture holds as `now`, else None."""
    if now is None or found is None:
        return None
    mark = mark_of(found)
    if now.kind == "d":
        return mark if mark[0] == "d" else None
    kind = "f" if now.kind == "b" else now.kind
    if mark != (kind, now.size, now.mtime_ns) or found.st_ino != now.ino:
        return None
    return mark
