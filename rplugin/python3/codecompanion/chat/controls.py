"""A chat's controls: what the user's keys and commands change in an open chat.

The permission mode and YOLO, remembered approvals (forgotten, or given back to a restored chat
once the user says yes), the adapter and model, the project root a restored chat keeps, and a
message whose files are vetted before it is sent. Each control speaks to the user through the
chat's view; none knows the editor behind it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..render_ops import RenderOp, SetVar
from ..tools.runtime.approval_policy import ApprovalMemory, describe, restorable

if TYPE_CHECKING:
    from ..adapters.base import ChatAdapter
    from ..context.sources import ContextItem
    from ..ports import Approver
    from .chat import Chat

log = logging.getLogger("codecompanion.chat")

MODE_WORDS: dict[str, str] = {
    "ask": "every command and edit is asked",
    "edits": "file edits without asking; commands ask",
    "sandboxed": "edits and sandboxed commands without asking; leaving the sandbox asks",
    "yolo": "no questions (commands still sandboxed)",
}


def mode_line(chat: Chat) -> str:
    """One line: the mode, what it means, and what confines commands."""
    sandbox = chat.tools.sandbox
    where = sandbox.describe() if sandbox is not None else "unconfined"
    return f"mode {chat.tools.mode}: {MODE_WORDS[chat.tools.mode]}; commands: {where}"


def mode_vars(chat: Chat, probe: bool = True) -> list[RenderOp]:
    """The buffer variables status() and the statusline read: mode, whether it is YOLO, and
    sandbox kind (left out until probed when `probe` is False)."""
    mode: list[RenderOp] = [
        SetVar(name="codecompanion_mode", value=chat.tools.mode),
        SetVar(name="codecompanion_yolo", value=chat.tools.yolo),
    ]
    sandbox = chat.tools.sandbox
    if sandbox is not None and not probe and not sandbox.probed:
        return mode
    kind = sandbox.kind if sandbox is not None else "none"
    narrowed = sandbox.narrowed if sandbox is not None and sandbox.active else None
    return [
        *mode,
        SetVar(name="codecompanion_sandbox", value=kind),
        SetVar(name="codecompanion_narrowed", value=narrowed or ""),
    ]


async def show_sandbox(chat: Chat) -> None:
    """Probe the sandbox (once per host, without blocking the loop), show its kind in the
    chat's variables and start the chat's waiting launcher for its first command."""
    sandbox = chat.tools.sandbox
    if sandbox is not None:
        await sandbox.probe()
        sandbox.prepare()
        if sandbox.active and sandbox.narrowed is not None:
            line = f"commands may not write this folder: {sandbox.narrowed} (only their temp)"
            chat.view.notify(line, "warn")
    chat.view.render(mode_vars(chat))


def toggle_yolo(chat: Chat) -> None:
    """YOLO on if it was off, off if it was on (`gty`)."""
    chat.tools.yolo = not chat.tools.yolo
    state = "on: tools run without asking (except excluded ones)" if chat.tools.yolo else "off"
    chat.view.notify(f"YOLO mode {state}", "warn" if chat.tools.yolo else "info")
    chat.view.render(mode_vars(chat))


def forget_approvals(chat: Chat) -> None:
    """Forget the chat's "always" approvals and turn YOLO off (`gtx`)."""
    yolo = chat.tools.yolo
    count = chat.tools.forget_approvals()
    chat.save()
    chat.show_approvals()
    what = f"{count} remembered approval{'s' if count != 1 else ''} forgotten"
    chat.view.notify(what + ("; YOLO mode off" if yolo else ""), "info")
    chat.view.render(mode_vars(chat))


def switch_mode(chat: Chat, wanted: str) -> None:
    """The chat's permission mode: a name, or "next" to cycle through them."""
    from ..sandbox.settings import MODES

    if wanted == "next":
        wanted = MODES[(MODES.index(chat.tools.mode) + 1) % len(MODES)]
    mode = next((name for name in MODES if name == wanted), None)
    if mode is None:
        chat.view.notify(f"unknown mode {wanted!r}: use {', '.join(MODES)}", "error")
        return
    chat.tools.mode = mode
    chat.view.notify(mode_line(chat), "warn" if wanted == "yolo" else "info")
    chat.view.render(mode_vars(chat))


def idle(chat: Chat) -> bool:
    """Whether the chat may change adapter or model now (one line says why not)."""
    if chat.busy:
        chat.view.notify("a request is running: stop it (q) before changing adapter or model")
        return False
    return True


def switch_adapter(chat: Chat, adapter: ChatAdapter, notice: str | None) -> ChatAdapter | None:
    """Give an idle chat `adapter` (`notice`: why it differs from the one asked for); the
    adapter it replaced, for the caller to close, or None when the chat was busy."""
    if not idle(chat):
        return None
    if notice:
        chat.view.notify(notice, "warn")
    old, chat.adapter = chat.adapter, adapter
    chat.save()
    chat.view.notify(f"adapter: {adapter.name} · {chat.model}")
    chat.fire("ChatAdapter")
    return old


def switch_model(chat: Chat, model: str) -> None:
    """Give an idle chat `model` (of its adapter)."""
    if idle(chat):
        chat.adapter.settings.model = model
        chat.save()
        chat.view.notify(f"model: {chat.model}")
        chat.fire("ChatModel")


def kept_root(here: Path, saved_root: object, reattached: bool) -> Path | None:
    """The saved project root, when the chat may keep it: reattached after a host restart,
    or restored in the folder where it was saved. Otherwise the current folder `here` is the
    root (a saved file naming `/tmp` must not make `/tmp` count as inside the project)."""
    if not isinstance(saved_root, str) or not saved_root:
        return None
    if reattached or Path(saved_root).resolve() == here:
        return Path(saved_root).resolve()
    return None


def moved_root(here: Path, saved_root: object, reattached: bool) -> str | None:
    """The line saying a restored chat works in `here`, not where it was saved; or None."""
    if not isinstance(saved_root, str) or not saved_root:
        return None
    if kept_root(here, saved_root, reattached) is not None:
        return None
    return (
        f"this chat was saved in {saved_root}; its tools work in {here}, the current folder "
        f"(:cd {saved_root} and restore it there to work in it)"
    )


@dataclass(frozen=True)
class Remembered:
    """What a saved chat had approved and may get back: its "always" approvals and YOLO."""

    approvals: ApprovalMemory
    yolo: bool

    def __bool__(self) -> bool:
        return bool(self.approvals.tools or self.approvals.commands or self.yolo)


def restore(chat: Chat, saved: Mapping[str, object]) -> Remembered:
    """Give a chat its saved title, offered tools and context state; what it had approved
    comes back only through `grant` (a tool-wide approval the tool no longer allows is
    dropped, and said)."""
    title = saved.get("title")
    chat.title = title if isinstance(title, str) else None  # a saved file may hold anything
    if isinstance(saved.get("updated"), str):
        chat.updated = str(saved["updated"])
    tools = saved.get("tools")
    state = dict(tools) if isinstance(tools, dict) else {}
    remembered = ApprovalMemory.from_state(state.pop("approvals", None))
    yolo = bool(state.pop("yolo", False)) and not chat.tools.yolo
    chat.tools.restore_state(state)
    chat.context.restore_state(saved.get("context"))
    registry = chat.tools.registry

    def opts(name: str) -> dict[str, object] | None:
        entry = registry.get(name)
        return entry.tool.opts if entry is not None else None

    kept, refused = restorable(remembered, opts)
    if refused:
        chat.view.notify(f"saved tool-wide approvals dropped: {', '.join(refused)}", "warn")
    return Remembered(kept, yolo)


def grant(chat: Chat, remembered: Remembered) -> None:
    """Give a restored chat back what it had approved (the user said yes, or the chat was
    reattached after a host restart, its approvals given in this Neovim)."""
    for name in remembered.approvals.tools:
        chat.tools.approvals.tools.add(name)
    chat.tools.approvals.commands |= remembered.approvals.commands
    if remembered.yolo:
        chat.tools.yolo = True
        chat.view.render([SetVar(name="codecompanion_yolo", value=True)])
        chat.view.notify("this chat was in YOLO mode and still is (gty turns it off)", "warn")


async def confirm_restored(chat: Chat, remembered: Remembered, approver: Approver) -> None:
    """Ask before a restored chat gets back its approvals and YOLO mode."""
    lines = describe(remembered.approvals)
    lines += ["YOLO mode (every call runs without a question)"] * remembered.yolo
    question = "Restore what this saved chat approved? " + "; ".join(lines)
    try:
        keep = await approver.confirm(chat.id, question)
    except Exception:
        log.exception("chat %s: asking about restored approvals failed", chat.id)
        keep = False
    if not keep:
        chat.view.notify("the saved chat's approvals were not restored", "info")
        return
    grant(chat, remembered)


async def submit_vetted(
    chat: Chat, text: str, context: list[ContextItem], deny: tuple[str, ...]
) -> None:
    """Send the message once the files its context names are vetted (context/file_items.py):
    a secret is left out, a file outside the project only if the user allows it."""
    from ..context.file_items import vet

    kept, notes = await vet(context, chat.tools.cwd, chat.tools.confirm, deny)
    for line in notes:
        chat.view.notify(line, "warn")
    if not chat.submit(text, kept):
        chat.view.render([])


def submit(chat: Chat, text: str, context: list[ContextItem]) -> bool:
    """Send a message whose context names no file now; False when its files must be vetted
    first (`submit_vetted`)."""
    if any(item.source for item in context):
        return False
    if not chat.submit(text, context):
        chat.view.render([])  # nothing queued; the buffer stays as it is
    return True


def stop(chat: Chat, quiet: bool = False) -> None:
    """Stop what the chat runs (`q`); one line says when nothing was running, unless `quiet`."""
    if not chat.stop() and not quiet:
        chat.view.notify("nothing is running", "info")


def close(chat: Chat) -> None:
    """End a chat whose buffer closed (or whose host exits): its turn, save, checkpoints."""
    chat.stop()
    chat.save_now()
    if chat.checkpoints is not None:
        chat.checkpoints.close()  # turns not captured yet are recorded before it ends
