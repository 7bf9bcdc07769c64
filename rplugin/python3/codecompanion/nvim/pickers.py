"""The choices the host asks Lua to offer: an adapter and its model (`ga`), a chat to restore,
the rules files and the skills of a chat (`/rules`, `/skills`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..chat.chat import Chat
from ..render_ops import Notice
from ..workspace import Workspace
from .bridge import Bridge


async def pick_index(bridge: Bridge, prompt: str, items: list[str]) -> int | None:
    """The position (0-based) of the item chosen with vim.ui.select, None when none was."""
    index = await bridge.ask_lua("codecompanion.chat", "pick", {"prompt": prompt, "items": items})
    if isinstance(index, int) and 1 <= index <= len(items):
        return index - 1
    return None


async def pick(bridge: Bridge, prompt: str, items: list[str]) -> str | None:
    """One of `items` chosen with vim.ui.select (by position, so equal labels are fine)."""
    index = await pick_index(bridge, prompt, items)
    return None if index is None else items[index]


async def pick_adapter(
    bridge: Bridge,
    workspace: Workspace,
    chat: Chat,
    use_adapter: Callable[[str], None],
    use_model: Callable[[str], None],
) -> None:
    """`ga`: pick an adapter, then one of its models (listed while Neovim stays free)."""
    name = await pick(bridge, "Adapter", workspace.adapter_names())
    if name is None:
        return
    if name != chat.adapter.name:
        use_adapter(name)
    try:
        models = await asyncio.wait_for(chat.adapter.list_models(), 10)
    except Exception as exc:  # a listing failure leaves the configured model
        chat.view.notify(f"could not list models: {exc}", "warn")
        return
    if not models:
        return
    model = await pick(bridge, "Model", [str(m) for m in models])
    if model is not None:
        use_model(model)


async def pick_restore(bridge: Bridge, workspace: Workspace) -> None:
    """`:CodeCompanionChat Restore`: pick a saved chat; Lua reopens it."""
    saved, damaged = workspace.store.scan()
    for problem in damaged:
        bridge.notice(Notice(text=problem.line(), level="warn"))
    if not saved:
        bridge.notice(Notice(text="no saved chats"))
        return
    labels = [f"{info.updated}  {info.title}" for info in saved]
    index = await pick_index(bridge, "Restore chat", labels)
    if index is not None:
        bridge.notify_lua("codecompanion", "chat", {"restore": saved[index].id})


async def pick_rules(bridge: Bridge, chat: Chat) -> None:
    """`/rules`: the rules files found for the chat, each on or off; a pick toggles one."""
    found = chat.context.rule_files()
    if not found:
        chat.view.notify(
            "no rules files found (AGENTS.md, CLAUDE.md, ...: see :h codecompanion-rules)"
        )
        return
    labels = [f"{'[x]' if on else '[ ]'} {label}" for label, on in found]
    index = await pick_index(bridge, "Rules files (pick one to turn it on or off)", labels)
    if index is not None:
        chat.view.notify(chat.context.toggle_rule(found[index][0]))


async def pick_skills(bridge: Bridge, chat: Chat) -> None:
    """`/skills`: the skills found for the chat, each on or off; a pick toggles one."""
    skills = chat.tools.skills
    found = skills.listing() if skills is not None else []
    if skills is None or not found:
        chat.view.notify(
            "no skills found (.claude/skills/NAME/SKILL.md, ...: see :h codecompanion-skills)"
        )
        return
    labels = [f"{'[x]' if on else '[ ]'} {skill.name} ({skill.label})" for skill, on in found]
    index = await pick_index(bridge, "Skills (pick one to turn it on or off)", labels)
    if index is not None:
        chat.view.notify(skills.toggle(found[index][0].name))
        chat.save()
