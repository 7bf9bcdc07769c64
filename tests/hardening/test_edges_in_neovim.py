# ruff: noqa: E501 - the tables of calls below read best one line per call

"""The boundary's edges tried as an attacker would, in a real Neovim with the real plugin, in
`sandboxed` and `yolo` modes: the model's calls come from the loopback provider, the commands
run in the real sandbox, and what they leave behind is checked with the user's own git."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from codecompanion.sandbox.probe import detect
from tests.hardening.test_git_places import git, repository
from tests.support.nvim import Editor

StartNvim = Callable[..., Editor]
FOUND = detect()
pytestmark = pytest.mark.skipif(
    FOUND.kind != "landlock" or not FOUND.mounts, reason=f"no full sandbox here: {FOUND.reason}"
)
MODES = ["sandboxed", "yolo"]


def chat_turn(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    server: LoopbackServer,
    project: Path,
    mode: str,
    calls: list[tuple[str, str, dict[str, object]]],
    answers: tuple[str, ...] = (),
) -> tuple[Editor, dict[str, str]]:
    """One turn in `project` whose model makes `calls`; `answers` go to the questions asked.
    The editor, and each call's result as the provider got it."""
    server.enqueue(openai_tool_calls(calls), openai_text("done"))
    ed = start_nvim(config_file=config_file(""), cwd=project, setup={"permissions": {"mode": mode}})
    ed.answer(*answers)
    ed.open_chat()
    tools = " ".join("@{" + name + "}" for name in sorted({c[1] for c in calls}))
    ed.send(f"{tools} go")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    sent = server.wait_for_requests(2)[1].body
    results = {m["tool_call_id"]: m["content"] for m in sent["messages"] if m["role"] == "tool"}
    return ed, results


def user_git_runs(folder: Path, marker: Path) -> bool:
    """Whether the user's next `git status` there runs a program the sandbox planted."""
    subprocess.run(["git", "status"], cwd=folder, capture_output=True, timeout=30)
    return marker.exists()


@pytest.mark.parametrize("mode", MODES)
def test_no_command_or_edit_plants_a_program_in_any_git_folder(
    mode: str,
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    project = repository(tmp_path / "project")
    repository(project / "vendor/lib")
    (project / "mod").mkdir()
    git(project, "init", "-q", f"--separate-git-dir={project}/mod-repo", "mod")
    marker = tmp_path / "planted-ran"
    planted = f"printf '[core]\\n\\tfsmonitor = touch {marker}\\n' >>"
    calls: list[tuple[str, str, dict[str, object]]] = [
        ("nested", "run_command", {"cmd": f"git -C vendor/lib config core.fsmonitor 'touch {marker}'"}),
        ("separate", "run_command", {"cmd": f"{planted} mod-repo/config"}),
        ("made", "run_command", {"cmd": f"git init -q new && {planted} new/.git/config"}),
        ("edit", "create_file", {"filepath": "mod-repo/hooks/pre-commit", "content": f"touch {marker}"}),
    ]  # fmt: skip
    ed, results = chat_turn(
        start_nvim, config_file, provider_server, project, mode, calls, ("No", "No")
    )
    questions = [p["prompt"] for p in ed.prompts()]
    assert len(questions) == 2, questions
    assert "made a git repository at new/.git" in questions[0]
    assert "git's control files: mod-repo/hooks/pre-commit" in questions[1]
    assert "Read-only file system" in results["nested"]
    assert "Read-only file system" in results["separate"]
    assert "the user did not keep it" in results["made"]
    assert "the user did not allow" in results["edit"]
    for folder in (project, project / "vendor/lib", project / "mod", project / "new"):
        folder.mkdir(exist_ok=True)
        assert not user_git_runs(folder, marker), folder
    assert not (project / "mod-repo/hooks/pre-commit").exists()


@pytest.mark.parametrize("mode", MODES)
def test_git_init_in_a_fresh_project_is_kept_only_when_the_user_says_so(
    mode: str,
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    project = tmp_path / "fresh"
    project.mkdir()
    calls: list[tuple[str, str, dict[str, object]]] = [
        ("init", "run_command", {"cmd": "git init -q && echo ok > a.txt"}),
        ("next", "run_command", {"cmd": "git config core.fsmonitor 'touch /tmp/x' || echo refused"}),
    ]  # fmt: skip
    ed, results = chat_turn(
        start_nvim, config_file, provider_server, project, mode, calls, ("Yes",)
    )
    assert "the user kept it" in results["init"], results
    assert "Read-only file system" in results["next"] or "refused" in results["next"]
    assert "fsmonitor" not in (project / ".git/config").read_text()
    assert (project / "a.txt").read_text() == "ok\n"
    assert len(ed.prompts()) == 1
    assert os.path.isdir(project / ".git")
