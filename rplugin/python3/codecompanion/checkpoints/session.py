"""One chat's side of checkpoints: captures around its turns and tool rounds, the per-turn
summary line, and rewinding code, conversation or both (and undoing that)."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..chat import transcript
from ..messages import MessageStore
from ..ports import ChatView
from ..render_ops import SetVar
from .activity import Round, lstat_mark
from .changes import FileChange, Version, described, summary
from .journal import By, Kind, Record
from .manager import Checkpoints, Closed, Restored, TurnInfo, Waiting

if TYPE_CHECKING:  # rewinds load their modules when the user asks for one
    from ..adapters.base import ChatAdapter
    from ..tools.runtime.protocol import CallWatch
    from .restore import Restore
    from .rewind import Progress, RestorePlan
    from .store import Entry

log = logging.getLogger("codecompanion.checkpoints")
# Seconds an after-round capture waits: the request carrying the round's results goes first.
AFTER_DELAY = 0.05


def _logged(future: asyncio.Future[Any]) -> None:
    """A background step's failure goes to the log (never 'exception never retrieved')."""
    if not future.cancelled() and future.exception() is not None:
        log.warning("checkpoints: %s", future.exception())


def _same_folder(folder: os.stat_result, path: str) -> bool:
    """True if `path` is the folder `folder` is the status of."""
    try:
        return os.path.samestat(folder, os.stat(path))
    except OSError:
        return False


async def _nothing() -> None:
    """Nothing to wait for."""


async def _finished(future: asyncio.Future[Any]) -> None:
    """Wait for a capture; its failure was reported once by `_recorded` (the tools still run)."""
    try:
        await future
    except Exception:
        return


class Watched(Protocol):
    """Where a tool system's calls report what they run and write (its `Reporter`)."""

    watch: CallWatch | None


class Workdir(Protocol):
    """What checkpoints need of a chat's tool system: the folder its tools work in, and where
    its calls report."""

    @property
    def cwd(self) -> Path:
        """The project's root."""
        ...

    @property
    def reporter(self) -> Watched:
        """Its calls' reports."""
        ...


class Recounted(Protocol):
    """What checkpoints need of a chat's context keeper: the meter after a rewind."""

    def rewound(self) -> None:
        """The conversation was cut back or put back: count it again."""
        ...


class CheckpointChat(Protocol):
    """What checkpoints need of a chat (`chat.Chat` is one)."""

    id: str
    messages: MessageStore
    view: ChatView

    @property
    def tools(self) -> Workdir:
        """The chat's tool system."""
        ...

    @property
    def adapter(self) -> ChatAdapter:
        """The chat's provider adapter (its name heads a redrawn answer)."""
        ...

    @property
    def context(self) -> Recounted:
        """The chat's rules, budget and meter."""
        ...

    @property
    def busy(self) -> bool:
        """True while a request or its tools run."""
        ...

    @property
    def model(self) -> str | None:
        """The adapter's model."""
        ...

    def fire(self, name: str, **extra: Any) -> None:
        """Fire `User CodeCompanion<name>`."""
        ...

    def save_now(self, durable: bool = True) -> None:
        """Save the chat now."""
        ...


class RewindAsker(Protocol):
    """The questions a rewind asks the user, and the buffers it keeps in step."""

    async def conflict(self, chat_id: str, path: str, mine: Version, checkpoint: Version) -> bool:
        """A path both the user and the chat changed: True takes the checkpoint's version."""
        ...

    async def unsaved(self, paths: list[str]) -> list[str]:
        """Of these absolute paths, those loaded in a buffer with unsaved changes."""
        ...

    async def overwrite_unsaved(self, chat_id: str, path: str) -> bool:
        """A buffer with unsaved changes would be replaced: True discards its changes."""
        ...

    async def reload(self, paths: list[str]) -> None:
        """Loaded buffers of these absolute paths show the files' new text."""
        ...


class ChatCheckpoints:
    """Checkpoints of one chat, driven by its turn loop and by the user's rewind commands."""

    def __init__(self, chat: CheckpointChat, manager: Checkpoints, asker: RewindAsker) -> None:
        self.chat = chat
        self.manager = manager
        self.asker = asker
        self._pending: asyncio.Future[Any] | None = None
        self._after: asyncio.TimerHandle | None = None  # a deferred after-round capture
        self._round_start = 0  # when the last tool round began (ns)
        self._failure = ""
        self._restoring = False  # a rewind, undo or revert under way (it may be asking)
        # Turns are captured lazily: a turn waits until a tool round writes or the user asks
        # for the turns. The list Lua was given, when known (a new chat has no turns), lets a
        # turn that wrote nothing be listed without the worker.
        self._waiting: list[Waiting] = []
        fresh = not any(m.role == "user" for m in chat.messages)
        self._listed: list[dict[str, Any]] | None = [] if fresh else None
        self._listed_id = chat.id

    @property
    def root(self) -> Path:
        """The project the chat's tools work in."""
        return Path(self.chat.tools.cwd)

    @property
    def capturing(self) -> bool:
        """False in the home folder or `/`: a chat there is not in a project, and copying
        all of it is no checkpoint anyone wants. Told by the folders' identity (a stat each),
        not by resolving their paths: it is asked before and after every tool round."""
        try:
            root = os.stat(self.chat.tools.cwd)
        except OSError:  # no folder (yet): nothing of home or `/` to copy
            return True
        return not any(_same_folder(root, place) for place in (os.path.expanduser("~"), "/"))

    # ----- captures from the turn loop -------------------------------------------------

    def _queue(
        self,
        kind: Kind,
        by: By,
        text: str = "",
        message_id: int = -1,
        at_once: bool = False,
        round: Round | None = None,
    ) -> asyncio.Future[Any]:
        """Queue a capture of this kind; turns still waiting are recorded first, from the same
        scan of the project. `at_once`: done now when a stat walk is all it takes; `round`:
        who wrote during the tool round it ends."""
        waiting, self._waiting = self._waiting, []
        future: asyncio.Future[Any] = self.manager.record_soon(
            waiting, self.chat.id, self.root, kind, by, text, message_id, at_once, round
        )
        future.add_done_callback(self._recorded)
        self._pending = future
        return future

    def _keep_waiting(self) -> None:
        """Record the turns still waiting (one capture), before any other work on the journal."""
        if not self._waiting:
            return
        waiting, self._waiting = self._waiting, []
        future = self.manager.run(self.manager.record_turns, waiting)
        future.add_done_callback(self._recorded)
        self._pending = future

    def close(self) -> None:
        """The chat is closing (or the host exiting): its waiting turns are recorded."""
        if self._waiting:
            waiting, self._waiting = self._waiting, []
            self.manager.keep(waiting)

    def _recorded(self, future: asyncio.Future[Any]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if isinstance(exc, Closed):
            return
        if exc is not None:
            log.error("checkpoint of chat %s failed: %s", self.chat.id, exc)
            if str(exc) != self._failure:  # said once, not at every round
                self._failure = str(exc)
                self.chat.view.notify(f"checkpoint failed: {exc}", "warn")
            return
        self._failure = ""
        result = future.result()
        for record in result if isinstance(result, list) else [result]:
            self.chat.fire("Checkpoint", turn=record.turn, kind=record.kind, time=record.time)

    def turn_started(self, text: str, message_id: int) -> None:
        """Before a user turn is sent: noted, captured before its first writing tool round
        (or when the turns are asked for); a chat whose turns are not known yet captures now."""
        if not self.capturing:
            return
        self._flush()
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")[:80]
        if self.chat.id != self._listed_id:  # cleared into a new chat: a new journal
            self._keep_waiting()
            self._listed, self._listed_id = [], self.chat.id
        if self._listed is None:
            self._queue("turn", "user", text=first, message_id=message_id)
            return
        number = len(self._listed) + len(self._waiting) + 1
        self._waiting.append(
            Waiting(self.chat.id, str(self.root), number, time.time(), first, message_id)
        )

    def before_tools(self) -> Awaitable[None]:
        """Before a tool round runs: its capture is queued now, and on disk once the returned
        awaitable is done (the caller works meanwhile)."""
        if not self.capturing:
            return _nothing()
        self._flush()
        self._round_start = time.time_ns()
        self.chat.tools.reporter.watch = self  # the calls tell what they run and write
        return _finished(self._queue("tools", "user", at_once=True))

    def after_tools(self) -> None:
        """After a tool round: capture what it changed, a moment later, so the request with
        the results leaves first (any later capture or rewind takes it first, in order)."""
        if not self.capturing:
            return
        self._after = asyncio.get_running_loop().call_later(AFTER_DELAY, self._flush)

    def _flush(self) -> None:
        """Queue the deferred after-round capture now, if one waits."""
        if self._after is not None:
            self._after.cancel()
            self._after = None
            seen = self.manager.activity.round(self.chat.id, str(self.root), self._round_start)
            self._queue("tools_done", "chat", round=seen)

    # ----- who writes during a round (the tool system's CallWatch) ----------------------

    def call_started(self, call_id: str) -> None:
        """A call whose writes are not listed (a command, an MCP or user tool) starts."""
        self.manager.activity.started(self.chat.id, call_id)

    def call_ended(self, call_id: str) -> None:
        """That call has finished."""
        self.manager.activity.ended(self.chat.id, call_id)

    def file_written(self, path: Path) -> None:
        """A file tool wrote (or removed) `path` (absolute): the chat's change, as it left it."""
        self.manager.activity.wrote(self.chat.id, str(path), lstat_mark(str(path)))

    async def turn_ended(self) -> str:
        """The one line of what this turn's tools changed ('' when nothing); lists pushed."""
        if not self.capturing:
            return ""
        self._flush()
        if self._waiting:  # nothing was captured this turn: no tool round wrote
            self._show_listed()
            return ""
        try:
            if self._pending is not None:
                await asyncio.shield(self._pending)
            turns, changes = await self.manager.run(self._ended)
            self._show(turns)
        except Closed:
            return ""
        except Exception as exc:  # a failed capture was reported when it failed
            log.warning("no summary of the turn's changes: %s", exc)
            self._listed = None  # not known: the next turn is captured (and numbered) at once
            return ""
        prune = self.manager.run(self.manager.prune)  # past the size limit: oldest chats go
        prune.add_done_callback(_logged)
        return summary(changes)

    def _turns(self) -> list[TurnInfo]:
        return self.manager.turns(self.chat.id, self.root)

    def _ended(self) -> tuple[list[TurnInfo], list[FileChange]]:
        """On the worker: the turn list and what the newest turn's tools changed, from one
        walk of the journal (the list gives the turn's number)."""
        turns = self._turns()
        return turns, self.manager.turn_changes(self.chat.id, self.root, len(turns))

    async def push(self) -> None:
        """Give Lua the turn list (`checkpoints()` reads it without asking the host)."""
        self._keep_waiting()
        self._show(await self.manager.run(self._turns))

    def _show(self, turns: list[TurnInfo]) -> None:
        self._listed, self._listed_id = [asdict(t) for t in turns], self.chat.id
        self._show_listed()

    def _show_listed(self) -> None:
        """The turns Lua was given, and those waiting (no file changed since them)."""
        waiting = [
            asdict(TurnInfo(t.number, t.time, t.text, []))
            for t in self._waiting
            if t.chat_id == self.chat.id
        ]
        listing = [*(self._listed or []), *waiting]
        self.chat.view.render([SetVar(name="codecompanion_checkpoints", value=listing)])

    # ----- review and rewind -----------------------------------------------------------

    async def turns(self) -> list[TurnInfo]:
        """The live turns, oldest first."""
        self._keep_waiting()
        return await self.manager.run(self._turns)

    async def changes(self, since_turn: int | None) -> list[FileChange]:
        """What the chat changed since a turn (its first when None), compared with now."""
        self._keep_waiting()
        return await self.manager.run(self.manager.changes, self.chat.id, self.root, since_turn)

    async def _alone(self, restore: Callable[[], Awaitable[bool]]) -> bool:
        """One rewind, undo or revert at a time: another one asked for while the first is
        under way (asking its questions, say) is refused with a notice."""
        if self._restoring:
            self.chat.view.notify("a rewind is under way: answer its questions first", "warn")
            return False
        self._restoring = True
        try:
            return await restore()
        finally:
            self._restoring = False

    async def rewind(self, turn: int, code: bool = True, conversation: bool = True) -> bool:
        """Restore code and/or conversation to just before `turn`; a checkpoint of its own."""
        return await self._alone(lambda: self._rewind(turn, code, conversation))

    async def _rewind(self, turn: int, code: bool, conversation: bool) -> bool:
        if self.chat.busy:
            self.chat.view.notify("a request is running: stop it (q) before rewinding", "warn")
            return False
        self._keep_waiting()
        try:
            planned = await self.manager.run(self.manager.plan, self.chat.id, self.root, turn)
        except (OSError, ValueError) as exc:
            self.chat.view.notify(f"cannot rewind: {exc}", "error")
            return False
        if planned is None:
            self.chat.view.notify(f"no checkpoint of turn {turn} in this chat", "warn")
            return False
        from .rewind import Progress, RestorePlan

        turn_record, before, plan = planned
        data: dict[str, Any] = {
            "target": turn,
            "before": before.tree,
            "code": code,
            "conversation": conversation,
            "undone": False,
        }
        progress = Progress("rewound", turn, data)
        done = await self._restore(plan if code else RestorePlan(), progress)
        if conversation:
            cut = self._cut(turn_record)
            await self._commit(lambda: data.update(cut))
        self._report(
            "Rewind",
            f"rewound to before turn {turn}",
            done,
            turn=turn,
            code=code,
            conversation=conversation,
        )
        return True

    async def undo(self) -> bool:
        """Undo the newest rewind: its files and conversation return to just before it."""
        return await self._alone(self._undo)

    async def _undo(self) -> bool:
        if self.chat.busy:
            self.chat.view.notify("a request is running: stop it (q) before undoing", "warn")
            return False
        self._keep_waiting()
        try:
            planned = await self.manager.run(self.manager.plan_undo, self.chat.id, self.root)
        except (OSError, ValueError) as exc:
            self.chat.view.notify(f"cannot undo the rewind: {exc}", "error")
            return False
        if planned is None:
            self.chat.view.notify("no rewind to undo (or a turn was sent since)", "info")
            return False
        from .rewind import Progress

        rewound, _before, plan = planned
        data = rewound.rewind
        progress = Progress("undone", rewound.turn, {"undo_of": data.get("target")})
        done = await self._restore(plan, progress)
        if data.get("conversation"):
            self._uncut(rewound)
        await self._commit(lambda: data.update(undone=True))
        self._report("Rewind", "rewind undone", done, turn=rewound.turn, undo=True)
        return True

    async def revert(self, since_turn: int | None, path: str, hunk: int | None) -> bool:
        """Review: put one file (or one hunk of it) back as it was before `since_turn`;
        undone like a rewind."""
        return await self._alone(lambda: self._revert(since_turn, path, hunk))

    async def _revert(self, since_turn: int | None, path: str, hunk: int | None) -> bool:
        if self.chat.busy:
            self.chat.view.notify("a request is running: stop it (q) before reverting", "warn")
            return False
        self._keep_waiting()
        try:
            planned = await self.manager.run(
                self.manager.plan_revert, self.chat.id, self.root, since_turn, path, hunk
            )
        except (OSError, ValueError) as exc:
            self.chat.view.notify(f"cannot revert {path}: {exc}", "error")
            return False
        if planned is None:
            self.chat.view.notify(f"{path}: nothing to revert (changed meanwhile?)", "warn")
            return False
        from .rewind import Progress

        before, _base, plan = planned
        data = {
            "target": since_turn or 1,
            "before": before.tree,
            "code": True,
            "conversation": False,
            "undone": False,
            "review": True,
        }
        done = await self._restore(plan, Progress("rewound", before.turn, data))
        what = f"{path}: hunk {hunk + 1} reverted" if hunk is not None else f"{path}: reverted"
        self._report("Rewind", what, done, turn=since_turn or 1, review=True)
        return bool(done.written)

    async def _commit(self, change: Callable[[], object]) -> None:
        """Change the chat's records on the worker (where they are saved) and save them."""

        def commit() -> None:
            change()
            self.manager.save(self.chat.id, self.root)

        await self.manager.run(commit)

    async def _restore(self, plan: RestorePlan, progress: Progress) -> Restored:
        """Ask about conflicts and unsaved buffers, write the rest in batches (a path that
        changed since the plan is asked about again), reload their buffers, push the turns.
        Every batch is recorded as it is written (an undo can use it whatever happens next)."""
        done = Restored(unrestorable=list(plan.unrestorable), failed=list(plan.refused))
        items = [*plan.restore, *[i for i in plan.conflicts if await self._take(i, done)]]
        while True:
            items = await self._spare_unsaved(items, done)
            outcome = await self.manager.run(
                self.manager.restore, self.chat.id, self.root, items, progress
            )
            done.written += [p for p in outcome.done if p not in done.written]
            done.failed += outcome.failed
            done.kept += outcome.kept
            items = [item for item in outcome.moved if await self._take(item, done)]
            if not items:
                break
        if done.written:
            await self.asker.reload([str(self.root / p) for p in done.written])
        self._show(await self.manager.run(self._turns))
        return done

    async def _take(self, item: Restore, done: Restored) -> bool:
        """Ask about a path the user changed too; False (kept) when they keep theirs."""
        mine, theirs = await self.manager.run(self._contents, item)
        if await self.asker.conflict(self.chat.id, item.path, mine, theirs):
            return True
        done.kept.append(item.path)
        return False

    async def _spare_unsaved(self, items: list[Restore], done: Restored) -> list[Restore]:
        """The items, less those loaded with unsaved changes the user keeps."""
        absolute = {str(self.root / item.path): item for item in items}
        if not absolute:
            return items
        for path in await self.asker.unsaved(sorted(absolute)):
            if path in absolute and not await self.asker.overwrite_unsaved(self.chat.id, path):
                items = [item for item in items if item is not absolute[path]]
                done.kept.append(absolute[path].path)
        return items

    def _contents(self, item: Restore) -> tuple[Version, Version]:
        def read(entry: Entry | None) -> Version:
            if entry is None or entry.kind not in ("f", "l") or not entry.oid:
                return Version(described(entry), None)
            return Version(described(entry), self.manager.read(entry.oid))

        return read(item.current), read(item.target)

    def _cut(self, turn_record: Record) -> dict[str, Any]:
        """Cut the conversation back to the turn; its text goes back under `## Me`."""
        messages = self.chat.messages
        index = next(
            (i for i, m in enumerate(messages) if m.meta.id == turn_record.message_id),
            len(messages),
        )
        cut = messages.to_list()[index:]
        text = ""
        if index < len(messages):
            user = messages[index]
            typed = user.extra.get("typed")
            text = typed if isinstance(typed, str) else user.content or ""
        messages.truncate(index)
        cut_turns = []
        for record in self.manager.journal(self.chat.id, self.root).records:
            if record.kind == "turn" and not record.cut and record.turn >= turn_record.turn:
                record.cut = True
                cut_turns.append(record.turn)
        self._redraw(text)
        self.chat.save_now()
        return {"messages": cut, "message_index": index, "cut_turns": cut_turns}

    def _uncut(self, rewound: Record) -> None:
        data = rewound.rewind
        index = int(data.get("message_index") or 0)
        kept = self.chat.messages.to_list()[:index]
        self.chat.messages = MessageStore.from_list(kept + list(data.get("messages") or []))
        cut = set(data.get("cut_turns") or [])
        for record in self.manager.journal(self.chat.id, self.root).records:
            if record.kind == "turn" and record.cut and record.turn in cut:
                record.cut = False
        self._redraw("")
        self.chat.save_now()

    def _redraw(self, text: str) -> None:
        ops = transcript.replay(self.chat.messages, self.chat.adapter.name, self.chat.model)
        if text:
            ops.append(transcript.append(text))
        self.chat.view.render(ops)
        self.chat.context.rewound()  # the meter of the conversation as it is now

    def _report(self, event: str, what: str, done: Restored, **data: Any) -> None:
        count = len(done.written)
        parts = [f"{what}: {count} file{'' if count == 1 else 's'} restored"]
        if done.kept:
            parts.append(f"kept as they are: {', '.join(done.kept)}")
        if done.unrestorable:
            parts.append(f"too large to restore: {', '.join(done.unrestorable)}")
        if done.failed:
            parts.append(f"failed: {'; '.join(done.failed)}")
        self.chat.view.notify(
            "; ".join(parts), "warn" if done.failed or done.unrestorable else "info"
        )
        self.chat.fire(event, files=done.written, kept=done.kept, failed=done.failed, **data)
