"""`make test` (and any pytest run with the project's settings) says why each test skipped."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_skipped_test_prints_its_reason(tmp_path: Path) -> None:
    (tmp_path / "test_one.py").write_text(
        "import pytest\n\ndef test_here():\n    pytest.skip('tmux is not installed')\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "SKIPPED [1]" in out.stdout and "tmux is not installed" in out.stdout, out.stdout
