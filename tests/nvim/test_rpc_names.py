"""The names that cross between Lua and Python match: what one side sends, the other handles.

Lua → Python: every `host.notify(method)` (and `rpcnotify(chan, "codecompanion", method)`) has
an entry in `nvim/app.py`'s `NOTIFICATIONS`, every `host.request(method)` one in `REQUESTS`,
and neither table has an entry nothing sends. Python → Lua: every function the host calls by
name (`notify_lua`, `ask_lua`, `request_lua`) exists in real Neovim.
"""

from __future__ import annotations

import re

from codecompanion.nvim.app import NOTIFICATIONS, REQUESTS
from tests.support.lua_sends import sent
from tests.support.nvim import ROOT, Editor

PACKAGE = ROOT / "rplugin" / "python3" / "codecompanion"


def _lua_source() -> str:
    files = [p for d in ("lua", "plugin", "ftplugin") for p in (ROOT / d).rglob("*.lua")]
    return "\n".join(p.read_text() for p in files)


def test_every_notification_lua_sends_has_a_handler_and_every_handler_a_sender() -> None:
    notes, requests = sent(_lua_source())
    assert len(notes) > 15 and "chat_submit" in notes and "editor_reply" in notes
    assert notes == set(NOTIFICATIONS)
    assert requests == set(REQUESTS)


def test_the_check_finds_a_notification_without_a_handler() -> None:
    notes, _ = sent('host.notify("no_such_method", {})\nsend(bufnr, "another_one")')
    assert notes - set(NOTIFICATIONS) == {"no_such_method", "another_one"}


def _called_from_python() -> set[tuple[str, str]]:
    src = "\n".join(p.read_text() for p in PACKAGE.rglob("*.py"))
    calls = re.findall(r'(?:notify|ask|request)_lua\(\s*"([\w.]+)",\s*"(\w+)"', src)
    return set(calls)


def test_every_lua_function_the_host_calls_exists(editor: Editor) -> None:
    calls = _called_from_python()
    assert ("codecompanion.render", "apply") in calls and len(calls) > 8
    missing = [
        f"{module}.{function}"
        for module, function in sorted(calls)
        if not editor.lua(
            "return type(require(...)[select(2, ...)]) == 'function'", module, function
        )
    ]
    assert missing == []
