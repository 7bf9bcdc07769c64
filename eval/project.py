"""A run's project: the task's repo/ copied into a fresh git repository, and its check."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .task import Task

CHECK_TIMEOUT_S = 300.0
GIT_ENV = {
    "GIT_AUTHOR_NAME": "eval",
    "GIT_AUTHOR_EMAIL": "eval@localhost",
    "GIT_COMMITTER_NAME": "eval",
    "GIT_COMMITTER_EMAIL": "eval@localhost",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def fresh_project(task: Task, dest: Path) -> Path:
    """`dest`: the task's repo/ copied (or an empty folder), committed in a new git repository."""
    if task.repo.is_dir():
        shutil.copytree(task.repo, dest, symlinks=True)
    else:
        dest.mkdir(parents=True)
    env = {**os.environ, **GIT_ENV, "HOME": str(dest.parent)}
    for argv in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "-A"],
        ["git", "commit", "-q", "--allow-empty", "-m", "task fixture"],
    ):
        subprocess.run(argv, cwd=dest, env=env, check=True, capture_output=True)
    return dest


@dataclass(frozen=True)
class Verdict:
    """What check.sh said: exit 0 is solved; its output is kept for the record."""

    solved: bool
    output: str


def run_check(task: Task, project: Path, answer: str) -> Verdict:
    """Run check.sh in the finished project with the chat's last answer in $ANSWER."""
    env = {**os.environ, "ANSWER": answer, "TASK_DIR": str(task.folder)}
    try:
        done = subprocess.run(
            ["bash", str(task.check.resolve())],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=CHECK_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return Verdict(False, f"check.sh timed out after {CHECK_TIMEOUT_S:.0f} s")
    output = (done.stdout + done.stderr).strip()
    return Verdict(done.returncode == 0, output[-2000:])
