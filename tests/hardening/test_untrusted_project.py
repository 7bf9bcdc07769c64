"""Opening Neovim in an untrusted project must not run the project's Python files in the host."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.support.nvim import Editor, wait_for

StartNvim = Callable[..., Editor]


def test_modules_in_the_project_folder_are_not_imported_by_the_host(
    start_nvim: StartNvim, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    ran = tmp_path / "project-code-ran"
    for module in ("httpx", "greenlet", "jsonschema"):
        (project / f"{module}.py").write_text(f"open({str(ran)!r}, 'a').write('{module} ')\n")
    (project / "codecompanion.py").write_text("# a project file that happens to share the name\n")
    ed = start_nvim(cwd=project)
    ed.open_chat()

    def settled() -> bool:
        exited = ed.lua("return require('codecompanion.host').status().last_exit") is not None
        return exited or ran.exists() or "CodeCompanionChatCreated" in ed.event_names()

    wait_for(settled, 10)
    assert not ran.exists(), ran.read_text()
    assert "CodeCompanionChatCreated" in ed.event_names()
