"""Which reads ask Neovim for a file's diagnostics: a file a buffer holds, always; the first file
of a kind (its suffix), to learn whether a server checks that kind; later files of the kind only
if one did; a kind that found none is tried again once a server attached somewhere. Neovim's
side is a scripted bridge."""

from __future__ import annotations

from typing import Any

from codecompanion.nvim.editor import NvimEditor


class Bridge:
    """Answers each diagnostics request as scripted per suffix, counting them."""

    def __init__(self, servers: dict[str, list[str]]) -> None:
        self.servers = servers
        self.asked: list[str] = []

    async def ask_lua(self, module: str, function: str, request: dict[str, Any]) -> Any:
        path = str(request["path"])
        self.asked.append(path)
        suffix = path.rsplit(".", 1)[-1]
        return {"diagnostics": [], "servers": self.servers.get(suffix, []), "loaded": True}


async def test_the_first_file_of_a_kind_asks_and_its_answer_decides_for_the_rest() -> None:
    bridge = Bridge({"py": ["pylsp"]})
    editor = NvimEditor(bridge)  # type: ignore[arg-type]
    editor.set_loaded(["/p/open.txt"])
    assert editor.may_check("/p/a.txt") and not editor.may_check("/p/b.txt")  # one at a time
    await editor.diagnostics("/p/a.txt", "HINT", None, 1.5)
    assert not editor.may_check("/p/c.txt")  # no server for .txt
    assert editor.may_check("/p/open.txt")  # a buffer holds it
    assert editor.may_check("/p/a.py")
    await editor.diagnostics("/p/a.py", "HINT", None, 1.5)
    assert editor.may_check("/p/b.py") and editor.may_check("/p/c.py")
    editor.set_loaded(["/p/open.txt"], servers=True)  # a server attached since
    assert editor.may_check("/p/d.txt") and editor.may_check("/p/e.py")


async def test_an_answer_without_a_wait_or_a_failed_load_teaches_nothing() -> None:
    editor = NvimEditor(Bridge({}))  # type: ignore[arg-type]
    editor.set_loaded([])
    assert editor.may_check("/p/a.lua")
    await editor.diagnostics("/p/a.lua", "HINT", None, 0.0)  # a starting server was not awaited
    assert editor.may_check("/p/b.lua")
    await editor.diagnostics("/p/b.lua", "HINT", None, 1.5)
    assert not editor.may_check("/p/c.lua")
