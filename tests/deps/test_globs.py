"""Globs of file_search and grep_search (braces expanded, matched by RE2): nested braces and
the old cases."""

from __future__ import annotations

import pytest

from codecompanion.tools.builtin._support.project_files import compile_glob, glob_filter

FILES = ["a.py", "b.py", "c.py", "d.py", "src/b.py", "web/x.tsx", "web/y.ts", "web/z.js", ".env"]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("{a,{b,c}}.py", ["a.py", "b.py", "c.py", "src/b.py"]),
        ("src/{a,{b,c}}.py", ["src/b.py"]),
        ("*.{js,{ts,tsx}}", ["web/x.tsx", "web/y.ts", "web/z.js"]),
        ("web/*.{ts,tsx}", ["web/x.tsx", "web/y.ts"]),
        ("{a,b", []),  # an unclosed brace is literal, not an error
        ("*.PY", ["a.py", "b.py", "c.py", "d.py", "src/b.py"]),
        (".env", [".env"]),
        ("[!ab].py", ["c.py", "d.py"]),
        ("**/b.py", ["b.py", "src/b.py"]),
    ],
)
def test_glob_filter(pattern: str, expected: list[str]) -> None:
    assert glob_filter(pattern, FILES) == expected


def test_empty_patterns_keep_everything() -> None:
    assert compile_glob("  ") is None and compile_glob("./") is None
    assert glob_filter("", FILES) == FILES and glob_filter(None, FILES) == FILES
