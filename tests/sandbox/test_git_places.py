"""Git's control files wherever git finds them: a nested repository, a submodule, a worktree, a
`--separate-git-dir`, a `.bare` layout, a bare clone in the project, `$GIT_DIR`, and a
repository a command makes. Real git, a real sandbox: each write that would make git run a
program outside it fails (commands) or asks (file tools), in `sandboxed` and `yolo` modes."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from codecompanion.messages import ToolCall
from codecompanion.sandbox.commands import CommandSandbox
from codecompanion.sandbox.gitdirs import GitWalk
from codecompanion.sandbox.probe import Detector, detect
from codecompanion.sandbox.settings import read_permissions
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import ScriptedApprover
from tests.support.git_repos import git, repository
from tests.support.tools import builtin_system

FOUND = detect()
needs_sandbox = pytest.mark.skipif(
    FOUND.kind != "landlock", reason=f"no Landlock sandbox here: {FOUND.reason}"
)
MODES = ["sandboxed", "yolo"]
PLANTED = "[core]\n\tfsmonitor = touch /tmp/planted\n"


def system(
    project: Path,
    mode: str,
    approver: ScriptedApprover | None = None,
    writable: tuple[str, ...] = (),
) -> ToolSystem:
    permissions = read_permissions({"writable": list(writable)})
    box = CommandSandbox(permissions, Detector(), project=project)
    tools, _chat = builtin_system(
        project,
        "run_command",
        "create_file",
        "insert_edit_into_file",
        approver=approver or ScriptedApprover(default="reject"),
        sandbox=box,
        mode=mode,
    )
    return tools


async def call(tools: ToolSystem, name: str, args: dict[str, object]) -> tuple[str, str]:
    call_id = f"c{uuid.uuid4().hex[:6]}"
    outcome = await tools.run([ToolCall(call_id, name, args)])
    return outcome.statuses[call_id], tools.chat.result(call_id).for_llm


@pytest.fixture
def base(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path


def layouts(base: Path) -> dict[str, tuple[Path, list[Path]]]:
    """Each layout: the project, and the control files a command must not change there."""
    nested = repository(base / "nested")
    repository(nested / "vendor" / "lib")
    separate = base / "separate"
    separate.mkdir()
    git(separate, "init", "-q", "--separate-git-dir=.repo")
    bare_layout = base / "bare-layout"
    bare_layout.mkdir()
    git(bare_layout, "init", "-q", "--bare", ".bare")
    (bare_layout / ".git").write_text("gitdir: ./.bare\n")
    clone = base / "with-bare-clone"
    clone.mkdir()
    git(clone, "clone", "-q", "--bare", str(nested), "mirror.git")
    library = repository(base / "library")
    submodule = repository(base / "submodule")
    git(submodule, "submodule", "add", "-q", str(library), "lib")
    main = repository(base / "main")
    git(main, "worktree", "add", "-q", str(base / "worktree"))
    return {
        "nested repository": (nested, [nested / "vendor/lib/.git/config"]),
        "separate git dir": (separate, [separate / ".repo/config", separate / ".git"]),
        "bare layout": (bare_layout, [bare_layout / ".bare/config", bare_layout / ".git"]),
        "bare clone": (clone, [clone / "mirror.git/config"]),
        "submodule": (submodule, [submodule / "lib/.git", submodule / ".git/modules/lib/config"]),
        "worktree": (base / "worktree", [base / "worktree/.git", main / ".git/config"]),
    }


def attack(target: Path) -> str:
    """A command line that plants a program in `target` (a config or a `.git` file)."""
    if target.name == ".git":
        return f"printf 'gitdir: /tmp/evil\\n' > {target}"
    return f"printf '{PLANTED}' >> {target} && mkdir -p {target.parent}/hooks"


LAYOUTS = [
    "nested repository",
    "separate git dir",
    "bare layout",
    "bare clone",
    "submodule",
    "worktree",
]


def test_the_walk_finds_every_layout(base: Path) -> None:
    for name, (project, targets) in layouts(base).items():
        places = GitWalk(str(project)).places()
        for target in targets:
            real = os.path.realpath(target)
            assert any(real == p or real.startswith(p + "/") for p in places), (name, places)


def test_the_walk_sees_a_repository_made_since_and_git_dir(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = base / "p"
    (project / "src/deep").mkdir(parents=True)
    walk = GitWalk(str(project))
    assert [r.entry for r in walk.repositories()] == []
    git(project / "src/deep", "init", "-q")
    assert [r.entry for r in walk.repositories()] == [str(project / "src/deep/.git")]
    dotfiles = base / "dotfiles"
    git(base, "init", "-q", "--bare", str(dotfiles))
    monkeypatch.setenv("GIT_DIR", str(dotfiles))
    assert str(dotfiles) in GitWalk(str(project)).places()


@needs_sandbox
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout", LAYOUTS)
async def test_a_command_cannot_plant_a_program_in_any_git_folder(
    base: Path, layout: str, mode: str
) -> None:
    project, targets = layouts(base)[layout]
    before = {t: t.read_bytes() for t in targets}
    tools = system(project, mode)
    for target in targets:
        status, text = await call(tools, "run_command", {"cmd": attack(target)})
        assert status == "error", text
        assert tools.approver.requests == []
    assert {t: t.read_bytes() for t in targets} == before


@needs_sandbox
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout", LAYOUTS)
async def test_a_file_tool_asks_before_writing_any_git_folder(
    base: Path, layout: str, mode: str
) -> None:
    project, targets = layouts(base)[layout]
    approver = ScriptedApprover(default="approve")
    tools = system(project, mode, approver)
    for target in targets:
        if not target.is_relative_to(project):
            continue  # outside the project: asked about as such, and refused
        status, text = await call(
            tools, "create_file", {"filepath": str(target.relative_to(project)), "content": "x"}
        )
        assert status == "error" and "git's control files" in text, text
    assert approver.questions and all("git's control files" in q for q in approver.questions)


@needs_sandbox
async def test_a_writable_folder_holding_the_main_repository_keeps_its_git_read_only(
    base: Path,
) -> None:
    main = repository(base / "main")
    git(main, "worktree", "add", "-q", str(base / "worktree"))
    tools = system(base / "worktree", "sandboxed", writable=(str(main),))
    status, text = await call(tools, "run_command", {"cmd": f"echo x > {main}/made.txt"})
    assert status == "success", text  # the setting holds...
    status, text = await call(tools, "run_command", {"cmd": attack(main / ".git/config")})
    assert status == "error", text  # ...but not for its git folder
    assert "fsmonitor" not in (main / ".git/config").read_text()


@needs_sandbox
async def test_the_hosts_git_dir_is_read_only_even_in_a_writable_folder(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, extra = base / "project", base / "extra"
    project.mkdir()
    extra.mkdir()
    git(extra, "init", "-q", "--bare", "dotfiles")  # as `GIT_DIR=~/dotfiles git …` users do
    monkeypatch.setenv("GIT_DIR", str(extra / "dotfiles"))
    tools = system(project, "sandboxed", writable=(str(extra),))
    status, text = await call(tools, "run_command", {"cmd": f"echo x > {extra}/ok.txt"})
    assert status == "success", text
    status, text = await call(tools, "run_command", {"cmd": attack(extra / "dotfiles/config")})
    assert status == "error", text
    assert "fsmonitor" not in (extra / "dotfiles/config").read_text()


@needs_sandbox
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "made",
    [
        "git init -q",
        "mkdir -p sub && git init -q sub",
        "git init -q --bare hidden && printf 'gitdir: hidden\\n' > .git",
        "git init -q --bare .",
    ],
    ids=["git init", "git init in a subfolder", "a .git file", "a bare project"],
)
async def test_a_repository_a_command_makes_is_removed_unless_the_user_keeps_it(
    base: Path, made: str, mode: str
) -> None:
    project = base / "fresh"
    project.mkdir()
    approver = ScriptedApprover(default="reject", confirms=(False,))
    tools = system(project, mode, approver)
    status, text = await call(tools, "run_command", {"cmd": made})
    assert status == "success", text
    assert approver.questions and "made a git repository" in approver.questions[0]
    assert "the user did not keep it" in text
    assert GitWalk(str(project)).repositories() == ()
    done = subprocess.run(["git", "rev-parse", "--git-dir"], cwd=project, capture_output=True)
    assert done.returncode != 0 or not done.stdout.startswith(str(project).encode())


@needs_sandbox
async def test_a_kept_repository_is_read_only_for_the_next_command(base: Path) -> None:
    project = base / "kept"
    project.mkdir()
    approver = ScriptedApprover(default="reject", confirms=(True,))
    tools = system(project, "sandboxed", approver)
    status, text = await call(tools, "run_command", {"cmd": "git init -q && echo made"})
    assert status == "success" and "the user kept it" in text, text
    status, text = await call(tools, "run_command", {"cmd": attack(project / ".git/config")})
    assert status == "error" and "fsmonitor" not in (project / ".git/config").read_text()
    assert len(approver.questions) == 1


@needs_sandbox
async def test_ordinary_git_work_still_works(base: Path) -> None:
    project = repository(base / "work")
    repository(project / "vendor/lib")
    (project / "a.txt").write_text("a\nb\n")
    approver = ScriptedApprover(default="approve")
    tools = system(project, "sandboxed", approver)
    for cmd in ("git status --short", "git diff", "git -C vendor/lib log --oneline", "make -v"):
        status, text = await call(tools, "run_command", {"cmd": cmd})
        assert status == "success", text
    commit = "git -c user.name=t -c user.email=t@t commit -qam two"
    status, text = await call(tools, "run_command", {"cmd": commit})
    assert status == "error" and "Read-only file system" in text, text
    status, text = await call(tools, "run_command", {"cmd": commit, "unconfined": True})
    assert status == "success", text  # asked for, approved: it leaves the sandbox
    assert approver.prompts == [f"Run the command `{commit}` OUTSIDE the sandbox (unconfined)?"]
    assert git(project, "log", "--format=%s") == "two\none\n"
    assert approver.questions == []


@needs_sandbox
async def test_a_user_tools_cmds_are_held_to_the_same(base: Path) -> None:
    from codecompanion.tools import tool_registry

    project = base / "tool"
    project.mkdir()
    maker = {
        "name": "maker",
        "cmds": [["git", "init", "-q", "made"]],
        "schema": {
            "type": "function",
            "function": {"name": "maker", "parameters": {"type": "object", "properties": {}}},
        },
    }
    approver = ScriptedApprover(default="approve", confirms=(False,))
    tools, _chat = builtin_system(
        project,
        "maker",
        registry=tool_registry({"maker": maker}),
        approver=approver,
        sandbox=CommandSandbox(read_permissions({}), Detector(), project=project),
        mode="sandboxed",
    )
    status, text = await call(tools, "maker", {})
    assert status == "success", text
    assert approver.questions and "made a git repository at made/.git" in approver.questions[0]
    assert not (project / "made/.git").exists()


def test_the_walk_keeps_up_with_folders_made_moved_and_removed(base: Path) -> None:
    project = base / "moving"
    (project / "a/b").mkdir(parents=True)
    walk = GitWalk(str(project))
    assert walk.repositories() == ()
    repository(project / "a/b/c")
    (project / "a/b").rename(project / "a/z")
    assert [r.entry for r in walk.repositories()] == [str(project / "a/z/c/.git")]
    (project / "a/z/c/.git").rename(project / "a/z/c/.git-old")  # a folder git does not read
    assert [r.entry for r in walk.repositories()] == [str(project / "a/z/c/.git-old")]  # bare
    shutil.rmtree(project / "a")
    assert walk.repositories() == ()


@needs_sandbox
async def test_landlock_alone_keeps_every_git_folder_too(base: Path) -> None:
    from dataclasses import replace

    project = repository(base / "alone")
    repository(project / "vendor/lib")
    (project / "src").mkdir()
    git(project, "init", "-q", f"--separate-git-dir={project}/sep-repo", str(project / "mod"))
    found = replace(FOUND, mounts=False)  # as where user namespaces are refused
    tools = system(project, "sandboxed")
    tools.sandbox = CommandSandbox(read_permissions({}), Detector(found), project=project)
    for target in (
        project / "vendor/lib/.git/config",
        project / "sep-repo/config",
        project / "mod/.git",
    ):
        status, text = await call(tools, "run_command", {"cmd": attack(target)})
        assert status == "error", text
    status, text = await call(tools, "run_command", {"cmd": "echo ok > src/made.txt"})
    assert status == "success", text  # a folder on no git folder's way takes new files
