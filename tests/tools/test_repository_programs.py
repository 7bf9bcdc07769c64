"""No tool runs a program that the repository, the user's git config or git's environment names,
and no tool writes git's control files (.git/, .gitattributes, .gitmodules) without a yes.

The repository below configures every program git could start on its own: all hooks (in
.git/hooks and in core.hooksPath), clean/smudge/process filters (from .gitattributes and
.git/info/attributes), diff and textconv drivers, diff.external, fsmonitor, pagers, ssh, credential
helpers, editors, aliases; the global config (in an empty HOME) and GIT_* variables add more.
Each program touches its own marker file: after every tool ran, no marker may exist.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from codecompanion.messages import ToolCall
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import RecordingChat, ScriptedApprover
from tests.support.tools import builtin_system

HOOKS = (
    "applypatch-msg pre-applypatch post-applypatch pre-commit pre-merge-commit "
    "prepare-commit-msg commit-msg post-commit pre-rebase post-checkout post-merge pre-push "
    "pre-receive update proc-receive post-receive post-update reference-transaction "
    "push-to-checkout pre-auto-gc post-rewrite sendemail-validate fsmonitor-watchman "
    "p4-changelist p4-prepare-changelist p4-post-changelist p4-pre-submit post-index-change"
).split()
IDENTITY = ["-c", "user.name=t", "-c", "user.email=t@t"]


def git(root: Path, *argv: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *IDENTITY, *argv], cwd=root, check=True, capture_output=True, env=env)


def program(markers: Path, name: str) -> str:
    """A shell command that leaves a marker and passes its input through (a working filter)."""
    return f"touch {markers / name}; cat"


def configure_everything(root: Path, markers: Path) -> list[str]:
    """Config keys set to programs, in .git/config (the hooks are written as files)."""
    settings = {
        "core.fsmonitor": program(markers, "fsmonitor"),
        "core.pager": program(markers, "core-pager"),
        "pager.diff": program(markers, "pager-diff"),
        "pager.ls-files": program(markers, "pager-ls-files"),
        "core.sshCommand": program(markers, "ssh-command"),
        "core.askPass": program(markers, "askpass"),
        "core.editor": program(markers, "editor"),
        "credential.helper": "!" + program(markers, "credential-helper"),
        "diff.external": program(markers, "diff-external"),
        "alias.ls": "!" + program(markers, "alias"),
        "gpg.program": program(markers, "gpg"),
        "core.hooksPath": str(root / "hooks-elsewhere"),
        "include.path": str(root / "included.gitconfig"),
    }
    for driver in ("evil", "info"):
        for key in ("clean", "smudge", "process"):
            settings[f"filter.{driver}.{key}"] = program(markers, f"filter-{driver}-{key}")
        settings[f"filter.{driver}.required"] = "true"
        settings[f"diff.{driver}.command"] = program(markers, f"diff-{driver}-command")
        settings[f"diff.{driver}.textconv"] = program(markers, f"diff-{driver}-textconv")
    for key, value in settings.items():
        git(root, "config", key, value)
    included = f'[filter "evil"]\n\tclean = {program(markers, "included-filter")}\n'
    (root / "included.gitconfig").write_text(included)
    return list(settings)


def write_hooks(folder: Path, markers: Path, prefix: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for hook in HOOKS:
        path = folder / hook
        path.write_text(f"#!/bin/sh\ntouch {markers / (prefix + hook)}\n")
        path.chmod(0o755)


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A repository with staged, unstaged, untracked and conflicted changes; (root, markers)."""
    root, markers, home = tmp_path / "project", tmp_path / "markers", tmp_path / "home"
    for folder in (root, markers, home / ".config" / "git"):
        folder.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("one\ntwo\n")
    (root / "b.txt").write_text("bee\n")
    (root / "c.txt").write_text("base\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    git(root, "checkout", "-qb", "other")
    (root / "c.txt").write_text("other\n")
    git(root, "commit", "-qam", "other")
    git(root, "checkout", "-q", "main")
    (root / "c.txt").write_text("main\n")
    git(root, "commit", "-qam", "main")
    subprocess.run(["git", *IDENTITY, "merge", "-q", "other"], cwd=root, capture_output=True)
    (root / "b.txt").write_text("bee\nstaged\n")
    git(root, "add", "b.txt")
    # Only now the traps: a conflicted merge, a staged and an unstaged change, an untracked file.
    (root / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (root / ".git" / "info" / "attributes").write_text("* filter=info diff=info\n")
    configure_everything(root, markers)
    write_hooks(root / ".git" / "hooks", markers, "hook-")
    write_hooks(root / "hooks-elsewhere", markers, "hookspath-")
    (root / "a.txt").write_text("one\nchanged\n")
    (root / "untracked.txt").write_text("new\n")
    # The user's global config and git's environment name programs too.
    global_config = f'[filter "evil"]\n\tclean = {program(markers, "global-filter")}\n'
    (home / ".gitconfig").write_text(global_config)
    (home / ".config" / "git" / "config").write_text(global_config.replace("global", "xdg"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    environment = {
        "GIT_EXTERNAL_DIFF": program(markers, "env-external-diff"),
        "GIT_PAGER": program(markers, "env-pager"),
        "PAGER": program(markers, "env-plain-pager"),
        "GIT_SSH_COMMAND": program(markers, "env-ssh"),
        "GIT_ASKPASS": program(markers, "env-askpass"),
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": program(markers, "env-config-fsmonitor"),
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='{program(markers, 'env-parameters')}'",
        "RIPGREP_CONFIG_PATH": str(home / "ripgreprc"),
    }
    (home / "ripgreprc").write_text(f"--pre={home / 'pre.sh'}\n")
    (home / "pre.sh").write_text(f'#!/bin/sh\ntouch {markers / "rg-pre"}\ncat "$1"\n')
    (home / "pre.sh").chmod(0o755)
    for key, value in environment.items():
        monkeypatch.setenv(key, value)
    return root, markers


def system(
    root: Path, approver: ScriptedApprover, yolo: bool = False
) -> tuple[ToolSystem, RecordingChat]:
    return builtin_system(root, "files", "get_changed_files", approver=approver, yolo=yolo)


async def test_no_tool_runs_a_program_the_repository_configures(
    hostile: tuple[Path, Path],
) -> None:
    root, markers = hostile
    tools, chat = system(root, ScriptedApprover())
    search = {"query": "changed", "is_regexp": None, "include_pattern": None, "max_results": None}
    calls = [
        ToolCall("all", "get_changed_files", {"source_control_state": None}),
        ToolCall("files", "file_search", {"query": "*.txt", "max_results": None}),
        ToolCall("grep", "grep_search", search),
    ]
    for state in ("staged", "unstaged", "merge-conflicts"):
        calls.append(ToolCall(state, "get_changed_files", {"source_control_state": [state]}))
    await tools.run(calls)
    assert sorted(os.listdir(markers)) == []
    changes = chat.result("all").for_llm
    assert "+staged" in chat.result("staged").for_llm
    assert "+changed" in chat.result("unstaged").for_llm and "untracked.txt" in changes
    assert "c.txt" in chat.result("merge-conflicts").for_llm
    assert "a.txt" in chat.result("files").for_llm
    assert "a.txt" in chat.result("grep").for_llm


CONTROL_WRITES = [
    ("create_file", ".git/hooks/post-index-change"),
    ("create_file", ".gitattributes"),
    ("create_file", "sub/.gitattributes"),
    ("create_file", ".gitmodules"),
    ("create_file", ".GIT/hooks/pre-commit"),
    ("create_file", "sub/../.git/hooks/post-checkout"),
    ("create_file", "nested/.git/config"),
    ("create_file", "hooklink/post-merge"),
    ("insert_edit_into_file", ".git/config"),
    ("insert_edit_into_file", "configlink"),
    ("insert_edit_into_file", "./.git/../.git/info/attributes"),
    ("insert_edit_into_file", ".gitattributes"),
    ("delete_file", ".git/index"),
    ("delete_file", ".gitattributes"),
    ("delete_file", ".git/HEAD"),
]


@pytest.mark.parametrize("yolo", [False, True])
async def test_writes_to_git_control_files_ask_even_in_yolo(tmp_path: Path, yolo: bool) -> None:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    (root / ".gitattributes").write_text("*.txt text\n")
    (root / "configlink").symlink_to(root / ".git" / "config")
    (root / "hooklink").symlink_to(root / ".git" / "hooks")
    (root / "nested").mkdir()
    git(root / "nested", "init", "-q")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    approver = ScriptedApprover(default="approve", confirm_default=False)
    tools, chat = system(root, approver, yolo=yolo)
    calls = []
    for index, (name, path) in enumerate(CONTROL_WRITES):
        args: dict[str, object] = {"filepath": path}
        if name == "create_file":
            args["content"] = "#!/bin/sh\ntouch pwned\n"
        elif name == "insert_edit_into_file":
            edit = {"oldText": "", "newText": "[core]\n\tfsmonitor = touch pwned\n"}
            args.update(edits=[{**edit, "replaceAll": False}], explanation="x", mode="overwrite")
        calls.append(ToolCall(f"w{index}", name, args))
    await tools.run(calls)
    for call in calls:
        result = chat.result(call.id)
        assert result.is_error and "control files" in result.for_llm, (call, result.for_llm)
    assert len(approver.questions) == len(CONTROL_WRITES)
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert after == before


async def test_a_yes_lets_the_write_to_a_control_file_happen(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    approver = ScriptedApprover(confirms=(True,))
    tools, chat = system(root, approver, yolo=True)
    call = ToolCall("c", "create_file", {"filepath": ".gitattributes", "content": "*.md text\n"})
    await tools.run([call])
    assert not chat.result("c").is_error, chat.result("c").for_llm
    assert (root / ".gitattributes").read_text() == "*.md text\n"
    assert approver.questions and ".gitattributes" in approver.questions[0]


@pytest.mark.parametrize("yolo", [False, True])
async def test_writes_to_the_configured_hooks_folder_ask(tmp_path: Path, yolo: bool) -> None:
    root = tmp_path / "project"
    (root / ".husky").mkdir(parents=True)
    git(root, "init", "-q")
    git(root, "config", "core.hooksPath", ".husky")
    (root / ".husky" / "pre-commit").write_text("#!/bin/sh\nnpm test\n")
    approver = ScriptedApprover(confirm_default=False)
    tools, chat = system(root, approver, yolo=yolo)
    edit = {"oldText": "npm test", "newText": "touch pwned", "replaceAll": False}
    calls = [
        ToolCall("c", "create_file", {"filepath": ".husky/post-checkout", "content": "x\n"}),
        ToolCall(
            "e",
            "insert_edit_into_file",
            {"filepath": ".husky/pre-commit", "edits": [edit], "explanation": "x", "mode": None},
        ),  # fmt: skip
        ToolCall("d", "delete_file", {"filepath": ".husky/pre-commit"}),
        ToolCall("ok", "create_file", {"filepath": "husky.txt", "content": "fine\n"}),
    ]
    await tools.run(calls)
    for call_id in ("c", "e", "d"):
        assert "control files" in chat.result(call_id).for_llm, chat.result(call_id).for_llm
    assert (root / ".husky" / "pre-commit").read_text() == "#!/bin/sh\nnpm test\n"
    assert not (root / ".husky" / "post-checkout").exists()
    assert len(approver.questions) == 3
    assert (root / "husky.txt").exists()  # outside the hooks folder: no such question


async def _hooks_folder_write_asks(root: Path, target: str) -> bool:
    """Whether creating `target` (relative to `root`) is asked about as a git control file."""
    approver = ScriptedApprover(confirm_default=False)
    tools, chat = system(root, approver, yolo=True)
    await tools.run([ToolCall("c", "create_file", {"filepath": target, "content": "x\n"})])
    return "control files" in chat.result("c").for_llm


async def test_a_hooks_path_written_by_hand_in_any_case_is_seen(tmp_path: Path) -> None:
    # Git's names are case-insensitive; a config edited by hand is read as git reads it.
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    with (root / ".git" / "config").open("a") as config:
        config.write("[CORE]\n\tHOOKSPATH = hooks-here\n")
    assert await _hooks_folder_write_asks(root, "hooks-here/pre-commit")
    assert not await _hooks_folder_write_asks(root, "elsewhere/pre-commit")


async def test_a_worktrees_hooks_path_is_seen(tmp_path: Path) -> None:
    # A linked worktree has a `.git` file; its hooksPath lives in the main repository's config.
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q")
    git(main, "commit", "-q", "--allow-empty", "-m", "first")
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    git(main, "config", "core.hooksPath", ".husky")
    assert await _hooks_folder_write_asks(tmp_path / "linked", ".husky/pre-commit")


async def test_the_hooks_folder_follows_the_config_as_it_changes(tmp_path: Path) -> None:
    # Nothing is remembered between writes: a hooksPath set after a first write counts.
    root = tmp_path / "project"
    root.mkdir()
    assert not await _hooks_folder_write_asks(root, "hooks/a")  # no repository at all
    git(root, "init", "-q")
    assert not await _hooks_folder_write_asks(root, "hooks/b")
    git(root, "config", "core.hooksPath", "hooks")
    assert await _hooks_folder_write_asks(root, "hooks/c")
    git(root, "config", "--unset", "core.hooksPath")
    assert not await _hooks_folder_write_asks(root, "hooks/d")
