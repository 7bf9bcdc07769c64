"""Confinement: no file tool reads or writes outside the project without an explicit yes, a
tool the chat never offered is refused, and deny rules hold in YOLO mode.

Every call goes through the real ToolSystem with the builtin tools, an editor that accepts
every diff and an approver that approves every call but answers "no" to "outside the project?".
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from codecompanion.messages import ToolCall
from codecompanion.ports import Diagnostic, FreshDiagnostics, HunkDecision
from codecompanion.tools.diffs import hunks
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import RecordingChat, ScriptedApprover
from tests.support.tools import builtin_system

SECRET = "outside secret: do not read"


@dataclass
class WatchingEditor:
    """Accepts every diff; records every path it is asked about."""

    touched: list[str] = field(default_factory=list)
    live: bool = True

    async def buffer_lines(self, path: str) -> list[str] | None:
        self.touched.append(path)
        return None

    async def set_buffer_lines(self, path: str, lines: list[str]) -> bool:
        self.touched.append(path)
        return False

    async def diagnostics(
        self, path: str, min_severity: str, max_bytes: int | None = None, wait: float = 0.0
    ) -> FreshDiagnostics:
        self.touched.append(path)
        return FreshDiagnostics((Diagnostic(0, 0, "ERROR", SECRET),), ("lsp",))

    async def review_diff(
        self, chat_id: str, path: str, old: list[str], new: list[str]
    ) -> HunkDecision:
        self.touched.append(path)
        return HunkDecision(accepted=tuple(range(len(hunks(old, new)))))


@dataclass
class Layout:
    """A project next to an outside folder it must not reach."""

    root: Path
    outside: Path

    def snapshot(self) -> dict[str, tuple[bool, bytes, int]]:
        """Every entry outside: (is a link, content, mtime), to compare before and after."""
        seen: dict[str, tuple[bool, bytes, int]] = {}
        for folder, dirs, files in os.walk(self.outside):
            for name in dirs + files:
                path = Path(folder, name)
                data = b"" if path.is_dir() else path.read_bytes()
                seen[str(path)] = (path.is_symlink(), data, path.lstat().st_mtime_ns)
        return seen


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Layout:
    outside = (tmp_path / "outside").resolve()
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET + "\n")
    (outside / "dir" / "deep.txt").write_text(SECRET + "\n")
    root = (tmp_path / "project").resolve()
    (root / "sub").mkdir(parents=True)
    (root / "inside.txt").write_text("inside text\n")
    (root / "link_file").symlink_to(outside / "secret.txt")
    (root / "link_dir").symlink_to(outside)
    (root / "dangling").symlink_to(outside / "created-through-link.txt")
    monkeypatch.setenv("HOME", str(outside))
    return Layout(root, outside)


def make_system(
    layout: Layout,
    approver: ScriptedApprover,
    *,
    yolo: bool = False,
    offer: tuple[str, ...] = ("files", "get_diagnostics"),
    tool_opts: dict[str, dict[str, Any]] | None = None,
    editor: WatchingEditor | None = None,
) -> tuple[ToolSystem, RecordingChat]:
    return builtin_system(
        layout.root, *offer, approver=approver, tool_opts=tool_opts, editor=editor, yolo=yolo
    )


READ_PATHS = [
    "../outside/secret.txt",
    "{outside}/secret.txt",
    "~/secret.txt",
    "link_file",
    "link_dir/secret.txt",
    "link_dir/dir/deep.txt",
    "sub/../../outside/secret.txt",
    "./link_dir/../link_dir/secret.txt",
    "inside.txt\n../outside/secret.txt",
    "inside.txt\x00../outside/secret.txt",
]
CREATE_PATHS = [
    "../outside/new.txt",
    "{outside}/new.txt",
    "~/new.txt",
    "link_dir/new.txt",
    "link_dir/made/deeper/new.txt",
    "dangling",
    "new\n.txt",
    "new\x00.txt",
]


def tool_calls(layout: Layout) -> list[ToolCall]:
    calls: list[ToolCall] = []

    def add(name: str, args: dict[str, Any]) -> None:
        raw = str(args["filepath"]).replace("{outside}", str(layout.outside))
        calls.append(ToolCall(f"c{len(calls)}", name, {**args, "filepath": raw}))

    edit = [{"oldText": SECRET, "newText": "pwned", "replaceAll": False}]
    for path in READ_PATHS:
        add("read_file", {"filepath": path, "start_line_number_base_zero": 0,
                          "end_line_number_base_zero": -1})  # fmt: skip
        add("insert_edit_into_file", {"filepath": path, "edits": edit, "explanation": "x",
                                      "mode": None})  # fmt: skip
        add("insert_edit_into_file", {"filepath": path, "edits": edit, "explanation": "x",
                                      "mode": "overwrite"})  # fmt: skip
        add("delete_file", {"filepath": path})
        add("get_diagnostics", {"filepath": path, "severity": None})
    for path in CREATE_PATHS:
        add("create_file", {"filepath": path, "content": "pwned\n"})
    return calls


@pytest.mark.parametrize("yolo", [False, True])
async def test_no_file_tool_reaches_outside_without_a_yes(layout: Layout, yolo: bool) -> None:
    approver = ScriptedApprover(default="approve", confirm_default=False)
    editor = WatchingEditor()
    system, chat = make_system(layout, approver, yolo=yolo, editor=editor)
    before = layout.snapshot()
    outside = str(layout.outside)
    for call in tool_calls(layout):
        asked = len(approver.questions)
        outcome = await system.run([call])
        assert outcome.statuses == {call.id: "error"}
        text = chat.result(call.id).for_llm
        assert SECRET not in text and SECRET not in (chat.result(call.id).for_user or "")
        questions = approver.questions[asked:]
        if any(char in call.arguments["filepath"] for char in "\n\x00"):
            assert questions == [] and "paths cannot contain" in text
        elif "symbolic link" not in text:  # delete_file refuses links before resolving them
            assert len(questions) == 1, (call, text)
            assert "outside the project" in questions[0]
            assert "did not allow" in text
    assert layout.snapshot() == before
    assert [p for p in editor.touched if p.startswith(outside)] == []


async def test_a_yes_covers_that_one_path_only(layout: Layout) -> None:
    approver = ScriptedApprover(confirms=(True, False))
    system, chat = make_system(layout, approver)
    args = {"start_line_number_base_zero": 0, "end_line_number_base_zero": -1}
    await system.run(
        [
            ToolCall("yes", "read_file", {"filepath": "../outside/secret.txt", **args}),
            ToolCall("no", "read_file", {"filepath": "link_dir/dir/deep.txt", **args}),
        ]
    )
    assert SECRET in chat.result("yes").for_llm
    assert SECRET not in chat.result("no").for_llm and chat.result("no").is_error


@pytest.mark.parametrize("git", [False, True])
@pytest.mark.parametrize("rg", [None, False])
async def test_searches_do_not_follow_links_out_of_the_project(
    layout: Layout, git: bool, rg: bool | None
) -> None:
    if git:
        subprocess.run(["git", "init", "-q", str(layout.root)], check=True)
    approver = ScriptedApprover()
    opts = {"grep_search": {"rg_path": rg}}
    system, chat = make_system(layout, approver, tool_opts=opts)
    await system.run(
        [
            ToolCall(
                "g",
                "grep_search",
                {
                    "query": "secret",
                    "is_regexp": None,
                    "include_pattern": None,
                    "max_results": None,
                },
            ),  # fmt: skip
            ToolCall(
                "g2",
                "grep_search",
                {
                    "query": "secret",
                    "is_regexp": None,
                    "include_pattern": "link_dir/**",
                    "max_results": None,
                },
            ),  # fmt: skip
            ToolCall("f", "file_search", {"query": "**/*.txt", "max_results": None}),
        ]
    )
    for result in chat.results:
        assert SECRET not in result.for_llm, result.for_llm
        assert "deep.txt" not in result.for_llm and "secret.txt" not in result.for_llm
    assert approver.questions == []


async def test_a_tool_the_chat_never_offered_is_refused(layout: Layout) -> None:
    approver = ScriptedApprover()
    system, chat = make_system(layout, approver, yolo=True, offer=("read_file",))
    marker = layout.root / "ran.txt"
    await system.run(
        [
            ToolCall("r", "run_command", {"cmd": f"touch {marker}"}),
            ToolCall("c", "create_file", {"filepath": "made.txt", "content": "x"}),
        ]
    )
    for call_id in ("r", "c"):
        assert chat.result(call_id).is_error
        assert "not available" in chat.result(call_id).for_llm
    assert not marker.exists() and not (layout.root / "made.txt").exists()
    assert approver.requests == []


DENIED = [
    "rm victim",
    "  rm   victim",
    "rm\tvictim",
    "echo a; rm victim",
    "echo a && rm victim",
    "echo a || rm victim",
    "echo a | rm victim",
    "echo a\nrm victim",
    "echo $(rm victim)",
    "echo `rm victim`",
    "(rm victim)",
    "{ rm victim; }",
    "if true; then rm victim; fi",
    "for f in victim; do rm $f; done",
    "! rm victim",
    "X=1 rm victim",
    "\\rm victim",
    "'rm' victim",
    '"rm" victim',
    "r''m victim",
    "/bin/rm victim",
    "command rm victim",
    "env rm victim",
    "env -i rm victim",
    "nohup rm victim",
    "exec rm victim",
    "time rm victim",
    "sh -c 'rm victim'",
    'bash -c "echo hi; rm victim"',
    "eval rm victim",
    "eval 'rm victim'",
    "xargs rm victim < /dev/null",
]


@pytest.mark.parametrize("cmd", DENIED)
async def test_a_deny_rule_holds_in_yolo_mode(layout: Layout, cmd: str) -> None:
    victim = layout.root / "victim"
    victim.write_text("keep me\n")
    opts = {"run_command": {"deny": ["rm *"], "allowed_in_yolo_mode": True, "timeout": 5000}}
    approver = ScriptedApprover(default="always")
    system, chat = make_system(layout, approver, yolo=True, offer=("run_command",), tool_opts=opts)
    system.approvals.remember("run_command", "anything", per_command=False)  # "always" for the tool
    await system.run([ToolCall("d", "run_command", {"cmd": cmd})])
    result = chat.result("d")
    assert result.is_error and "denied by rule" in result.for_llm, result.for_llm
    assert victim.read_text() == "keep me\n"
    assert approver.requests == []


async def test_denied_commands_are_not_confused_with_harmless_ones(layout: Layout) -> None:
    opts = {"run_command": {"deny": ["rm *"], "allowed_in_yolo_mode": True, "timeout": 5000}}
    system, chat = make_system(
        layout, ScriptedApprover(), yolo=True, offer=("run_command",), tool_opts=opts
    )
    harmless = ["echo rm victim", "printf 'rm victim'", "ls rmdir || true", "echo firm victim"]
    await system.run([ToolCall(f"h{i}", "run_command", {"cmd": c}) for i, c in enumerate(harmless)])
    assert [r.is_error for r in chat.results] == [False] * len(harmless)


async def test_a_repository_config_cannot_make_search_and_git_tools_run_commands(
    layout: Layout,
) -> None:
    root, marker = layout.root, layout.outside / "fsmonitor-ran"
    git = ["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "inside.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    subprocess.run([*git, "config", "core.fsmonitor", f"touch {marker}; false"], check=True)
    (root / "inside.txt").write_text("changed\n")
    opts = {"grep_search": {"rg_path": False}}
    system, chat = make_system(
        layout, ScriptedApprover(), offer=("files", "get_changed_files"), tool_opts=opts
    )
    search = {"query": "changed", "is_regexp": None, "include_pattern": None, "max_results": None}
    await system.run(
        [
            ToolCall("f", "file_search", {"query": "*.txt", "max_results": None}),
            ToolCall("g", "grep_search", search),
            ToolCall("d", "get_changed_files", {"source_control_state": None}),
        ]
    )
    assert not marker.exists()
    assert "inside.txt" in chat.result("f").for_llm
    assert "+changed" in chat.result("d").for_llm
