"""`python -m bench.callpath [--show] -- tool NAME --args JSON --cwd DIR`: how many of the
package's files one command-line run walks through, and how often it switches between them.

A `sys.setprofile`/`threading.setprofile` hook notes, for every Python call and return in the
package's own code, the file it is in, but only while an asyncio event loop runs in that thread
and no import is under way (module bodies and whatever they call are not counted). "files" is the
number of distinct files noted, "switches" the number of times the noted file changes from one
event to the next. `--show` prints the path of files as it was walked.

With no command after `--`, it measures the three reference calls on scratch files: a `read_file`
of a one-line file, an `insert_edit_into_file` of one line of a small file and a `run_command` of
`echo hi` (in the sandbox where this machine has one).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rplugin" / "python3" / "codecompanion"


@dataclass
class Walk:
    """The files the package's code was in, in the order the events came."""

    package: str
    files: list[str] = field(default_factory=list)

    def hook(self, frame: FrameType, event: str, arg: Any) -> None:
        """The profile hook: note package code run by the event loop, outside imports."""
        if event not in ("call", "return"):
            return
        name = frame.f_code.co_filename
        if not name.startswith(self.package) or asyncio._get_running_loop() is None:
            return
        if _importing(frame):
            return
        if not self.files or self.files[-1] != name:
            self.files.append(name)

    @property
    def switches(self) -> int:
        """How many times the file changed."""
        return max(len(self.files) - 1, 0)

    def distinct(self) -> list[str]:
        """The files entered, first entry first."""
        return list(dict.fromkeys(self.files))


def _importing(frame: FrameType | None) -> bool:
    """Whether this frame is a module body or runs inside an import (importlib's machinery is
    on the stack for every import statement, `importlib.import_module` and `__import__`)."""
    if frame is not None and frame.f_code.co_name == "<module>":
        return True
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def measure(argv: list[str]) -> tuple[Walk, int, str]:
    """Run `python -m codecompanion ARGV` in this process under the hook."""
    sys.path.insert(0, str(PACKAGE.parent))
    from codecompanion.__main__ import main

    walk = Walk(str(PACKAGE) + "/")
    out = io.StringIO()
    threading.setprofile(walk.hook)
    sys.setprofile(walk.hook)
    try:
        with contextlib.redirect_stdout(out):
            status = main(argv)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return walk, status, out.getvalue()


def _report(label: str, walk: Walk, status: int, output: str, show: bool) -> None:
    print(f"{label}: files={len(walk.distinct())} switches={walk.switches} (exit {status})")
    if status != 0:
        print(f"  output: {output.strip()[:300]}")
    if show:
        for name in walk.files:
            print("   ", Path(name).relative_to(PACKAGE))


def _reference(show: bool) -> None:
    """The three calls of the done-when figures, each in a fresh interpreter."""
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "one.txt").write_text("hello\n")
        Path(tmp, "edit.txt").write_text("alpha\nbeta\ngamma\n")
        edit = {
            "filepath": "edit.txt",
            "edits": [{"oldText": "beta", "newText": "BETA"}],
            "explanation": "capitalise",
        }
        read = {
            "filepath": "one.txt",
            "start_line_number_base_zero": 0,
            "end_line_number_base_zero": -1,
        }
        calls = {
            "read_file": ["tool", "read_file", "--args", json.dumps(read)],
            "insert_edit_into_file": ["tool", "insert_edit_into_file", "--args", json.dumps(edit)],
            "run_command": ["tool", "run_command", "--args", json.dumps({"cmd": "echo hi"})],
        }
        for label, argv in calls.items():
            command = [sys.executable, "-m", "bench.callpath"]
            command += ["--show"] if show else []
            command += ["--label", label, "--", *argv, "--cwd", tmp, "--yes"]
            subprocess.run(command, cwd=ROOT, check=False)


def main(argv: list[str] | None = None) -> int:
    """Measure the given command, or the three reference calls."""
    parser = argparse.ArgumentParser(prog="python -m bench.callpath", description=__doc__)
    parser.add_argument("--show", action="store_true", help="print the walk file by file")
    parser.add_argument("--label", default="command")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = [word for word in args.command if word != "--"] if args.command else []
    if not command:
        _reference(args.show)
        return 0
    walk, status, output = measure(command)
    _report(args.label, walk, status, output, args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
