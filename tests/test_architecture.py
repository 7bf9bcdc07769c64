"""The core never imports pynvim: only codecompanion/nvim/ (and the root's re-export) may."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rplugin" / "python3" / "codecompanion"


def imported_modules(path: Path) -> set[str]:
    """Top-level module names a file imports."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_only_nvim_package_imports_pynvim() -> None:
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "nvim" not in path.relative_to(PACKAGE).parts[:1]
        and {"pynvim", "greenlet"} & imported_modules(path)
    ]
    assert offenders == []


def test_the_check_sees_an_import() -> None:
    # Guard against a check that can never fail: the nvim package itself does import pynvim.
    assert "pynvim" in imported_modules(PACKAGE / "nvim" / "bridge.py")


def test_no_utils_modules() -> None:
    assert not [p for p in PACKAGE.rglob("*.py") if p.stem in ("utils", "helpers")]
