"""`python -m codecompanion tool NAME --args JSON --yes` runs every builtin outside Neovim."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codecompanion.loopback.server import LoopbackServer, Turn
from codecompanion.tools.builtin import BUILTIN_TOOLS

ROOT = Path(__file__).resolve().parents[3]


def cli(project: Path, config: Path, name: str, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "rplugin" / "python3"), TAVILY_API_KEY="tvly-x")
    done = subprocess.run(
        [sys.executable, "-m", "codecompanion", "tool", name, "--cwd", str(project)]
        + ["--config", str(config), "--args", json.dumps(args), "--yes"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, json.loads(done.stdout)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.md").write_text("# Notes\nalpha needle\n")
    (root / "old.txt").write_text("bye\n")
    (root / ".claude/skills/notes").mkdir(parents=True)
    (root / ".claude/skills/notes/SKILL.md").write_text(
        "---\nname: notes\ndescription: Keep notes.\n---\nWrite them in notes.md.\n"
    )
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "notes.md"], cwd=root, check=True)
    (root / "notes.md").write_text("# Notes\nalpha needle\nbeta\n")
    return root


def calls(server: LoopbackServer) -> dict[str, tuple[dict[str, Any], str]]:
    """Valid arguments for each builtin, and a word its result must contain."""
    return {
        "read_file": (
            {
                "filepath": "notes.md",
                "start_line_number_base_zero": 0,
                "end_line_number_base_zero": -1,
            },
            "alpha needle",
        ),
        "create_file": ({"filepath": "new/made.txt", "content": "made\n"}, "made.txt"),
        "insert_edit_into_file": (
            {
                "filepath": "notes.md",
                "explanation": "x",
                "mode": None,
                "edits": [{"oldText": "beta", "newText": "BETA", "replaceAll": False}],
            },
            "notes.md",
        ),
        "delete_file": ({"filepath": "old.txt"}, "old.txt"),
        "run_command": ({"cmd": "echo ran-it"}, "ran-it"),
        "grep_search": (
            {"query": "needle", "is_regexp": False, "include_pattern": None, "max_results": None},
            "notes.md",
        ),
        "file_search": ({"query": "*.md", "max_results": None}, "notes.md"),
        "get_changed_files": ({"source_control_state": None}, "notes.md"),
        "get_diagnostics": ({"filepath": "notes.md", "severity": None}, "Neovim"),
        "fetch_webpage": ({"url": f"{server.url}/page"}, "Hello page"),
        "web_search": ({"query": "needle", "domains": None}, "Found it"),
        "code_runner": ({"lang": "python", "code": "print(6 * 7)"}, "42"),
        "skill": ({"name": "notes", "file": None}, "Write them in notes.md."),
        "agent": ({"agent": None, "task": "look"}, "cannot run subagents"),
    }


def test_every_builtin_runs_through_the_cli(
    project: Path, tmp_path: Path, provider_server: LoopbackServer
) -> None:
    config = tmp_path / "codecompanion.py"
    config.write_text(
        f"opts = {{'tools': {{'web_search': {{'url': '{provider_server.url}/s'}},"
        " 'code_runner': {'container': False}}}\n"
    )
    page = b"<html><body><h1>Hello page</h1><p>text</p></body></html>"
    provider_server.enqueue(Turn.body(page, "text/html"), method="GET")
    found = {"results": [{"title": "T", "url": "https://x", "content": "Found it"}]}
    provider_server.enqueue(Turn.json(found))
    table = calls(provider_server)
    assert set(table) == set(BUILTIN_TOOLS)
    for name, (args, word) in table.items():
        code, result = cli(project, config, name, args)
        assert set(result) == {"status", "for_llm", "for_user"}, name
        if name in ("get_diagnostics", "agent"):  # need Neovim, a chat: a clear error outside
            assert code == 1 and result["status"] == "error" and word in result["for_llm"]
            continue
        assert code == 0 and result["status"] == "success", (name, result)
        assert word in result["for_llm"], (name, result["for_llm"][:300])
    assert (project / "new" / "made.txt").read_text() == "made\n"
    assert "BETA" in (project / "notes.md").read_text()
    assert not (project / "old.txt").exists()
