"""One task of a suite: a folder with task.toml, repo/ and check.sh."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 has no tomllib
    import tomli as tomllib

MODES = ("ask", "edits", "sandboxed", "yolo")
DEFAULT_MODE = "sandboxed"
DEFAULT_MAX_ROUNDS = 8
DEFAULT_TIMEOUT_S = 1200.0


class TaskError(ValueError):
    """A task folder that cannot be run, with one line saying why."""


@dataclass(frozen=True)
class Task:
    """What a task asks and how long it may take."""

    name: str
    folder: Path
    prompt: str
    tools: str
    mode: str
    max_rounds: int
    timeout_s: float

    @property
    def repo(self) -> Path:
        """The fixture project copied into every run."""
        return self.folder / "repo"

    @property
    def check(self) -> Path:
        """The script that says whether a finished run solved the task."""
        return self.folder / "check.sh"

    def message(self) -> str:
        """What is typed under `## Me`: the tools as the user types them, then the prompt."""
        return f"{self.tools} {self.prompt}".strip()


def load_task(folder: Path) -> Task:
    """Read one task folder; a TaskError names what is wrong."""
    spec = folder / "task.toml"
    try:
        data = tomllib.loads(spec.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TaskError(f"{spec}: {exc}") from exc
    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise TaskError(f"{spec}: `prompt` must be a non-empty string")
    tools = data.get("tools", "")
    mode = data.get("mode", DEFAULT_MODE)
    rounds = data.get("max_rounds", DEFAULT_MAX_ROUNDS)
    timeout = data.get("timeout_s", DEFAULT_TIMEOUT_S)
    if not isinstance(tools, str):
        raise TaskError(f'{spec}: `tools` must be a string such as "@{{files}}"')
    if mode not in MODES:
        raise TaskError(f"{spec}: `mode` must be one of {', '.join(MODES)}")
    if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
        raise TaskError(f"{spec}: `max_rounds` must be a positive integer")
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise TaskError(f"{spec}: `timeout_s` must be a positive number")
    if not (folder / "check.sh").is_file():
        raise TaskError(f"{folder}: check.sh is missing")
    return Task(folder.name, folder, prompt.strip(), tools.strip(), mode, rounds, float(timeout))


def load_suite(folder: Path) -> list[Task]:
    """Every task in `folder` (a folder holding task.toml is one task), sorted by name."""
    if (folder / "task.toml").is_file():
        return [load_task(folder)]
    found = sorted(p for p in folder.iterdir() if (p / "task.toml").is_file())
    if not found:
        raise TaskError(f"{folder}: no task folders (each needs a task.toml)")
    return [load_task(p) for p in found]
