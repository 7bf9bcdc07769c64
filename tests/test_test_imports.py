"""Tests share helpers only through `tests/support/`: no module under tests/ imports another test
module (a `test_*.py`, a `conftest.py`, or any other module outside tests/support/)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"


def module_name(path: Path) -> str:
    """`tests/nvim/test_host.py` → `tests.nvim.test_host` (a package is its `__init__`'s name)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, name: str, is_package: bool = False) -> list[tuple[int, str]]:
    """Every module `source` (the module `name`) imports, at any depth, as (line, dotted name);
    relative imports resolved, `from package import module` counted as that module."""
    package = name if is_package else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
            found.extend((node.lineno, f"{base}.{alias.name}") for alias in node.names)
    return found


def outside_support(target: str, modules: set[str]) -> bool:
    """Whether `target` is a module of tests/ other than tests/support/ and the tests package."""
    is_module = target in modules
    return is_module and target != "tests" and not (target + ".").startswith("tests.support.")


def modules_of_tests() -> dict[str, Path]:
    """Every module under tests/, by dotted name."""
    return {module_name(path): path for path in sorted(TESTS.rglob("*.py"))}


def test_no_test_module_imports_another() -> None:
    modules = modules_of_tests()
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {target}"
        for name, path in modules.items()
        for line, target in imported(
            path.read_text(encoding="utf-8"), name, path.name == "__init__.py"
        )
        if outside_support(target, set(modules))
    ]
    assert wrong == [], "move what they share into tests/support/"


def test_the_check_sees_every_kind_of_import() -> None:
    # A check that cannot fail is a defect: each of these imports a test module.
    modules = {
        "tests",
        "tests.nvim",
        "tests.nvim.test_host",
        "tests.nvim.conftest",
        "tests.support",
    }
    modules |= {"tests.support.nvim"}
    sources = [
        "from tests.nvim.test_host import x\n",
        "import tests.nvim.conftest\n",
        "from tests.nvim import test_host\n",
        "from .test_host import x\n",
        "from . import conftest\n",
        "def f():\n    from tests.nvim.conftest import start\n",
    ]
    for source in sources:
        targets = [target for _, target in imported(source, "tests.nvim.test_other")]
        assert any(outside_support(target, modules) for target in targets), source
    fine = "from tests.support.nvim import Editor\nfrom tests.support import nvim\n"
    targets = [target for _, target in imported(fine, "tests.nvim.test_other")]
    assert not any(outside_support(target, modules) for target in targets)
