"""`python -m codecompanion tool … --args X`: whatever X is (nested past the recursion limit,
not UTF-8, huge numbers, half characters), stdout is one JSON object and there is no
traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "rplugin" / "python3"

INPUTS: dict[str, bytes] = {
    "deep-arrays": b"[" * 50_000 + b"]" * 50_000,
    "deep-objects": b'{"a":' * 5_000 + b"1" + b"}" * 5_000,
    "deep-unclosed": b"[{" * 30_000,
    "deep-inside-an-argument": b'{"filepath": ' + b"[" * 20_000 + b"]" * 20_000 + b"}",
    "not-utf8": b'{"filepath": "\xff\xfe\x80"}',
    "lone-surrogate-escape": b'{"filepath": "\\ud800"}',
    "huge-number": b'{"filepath": 1e999999, "start_line_number_base_zero": 1' + b"0" * 5000 + b"}",
    "nan": b'{"filepath": NaN}',
    "unterminated": b'{"filepath": "a.txt',
    "empty": b"",
    "a list": b'["filepath", "a.txt"]',
    "long-string": b'{"filepath": "' + b"x" * 100_000 + b'"}',
}


@pytest.mark.parametrize("name", list(INPUTS))
def test_every_input_gives_one_json_result(name: str, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT), "HOME": str(tmp_path)}
    argv = [sys.executable, "-m", "codecompanion", "tool", "read_file", "--cwd", str(tmp_path)]
    done = subprocess.run(
        [os.fsencode(a) for a in argv] + [b"--args", INPUTS[name]],
        capture_output=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")[-2000:]
    lines = done.stdout.decode("utf-8").splitlines()
    assert len(lines) == 1, done.stdout[-500:]
    result = json.loads(lines[0])
    assert result["status"] == "error"
    assert result["for_llm"]
    assert done.returncode == 1
