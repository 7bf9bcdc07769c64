"""No function is over cyclomatic complexity 15, counting `and`/`or` as branches (radon).

A function over it is split by meaning: named steps, or a table of rules.
"""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class, Function

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 15
FOLDERS = (ROOT / "rplugin" / "python3" / "codecompanion", ROOT / "bench")


def complexities(source: str) -> dict[str, int]:
    """Every function of `source` with its complexity: methods as `Class.method`, nested
    functions as `outer.inner` (radon measures each on its own)."""
    found: dict[str, int] = {}

    def visit(block: Function | Class, prefix: str) -> None:
        if isinstance(block, Class):
            for inner in [*block.methods, *block.inner_classes]:
                visit(inner, f"{prefix}{block.name}.")
            return
        name = block.fullname if block.is_method else prefix + block.name
        found[name] = block.complexity
        for closure in block.closures:
            visit(closure, f"{name}.")

    for block in cc_visit(source):
        visit(block, "")
    return found


def measured() -> dict[str, int]:
    """file::function → complexity, over the package and bench/."""
    found: dict[str, int] = {}
    for folder in FOLDERS:
        for path in sorted(folder.rglob("*.py")):
            name = path.relative_to(folder).as_posix()
            for function, value in complexities(path.read_text(encoding="utf-8")).items():
                found[f"{name}::{function}"] = value
    return found


def test_no_function_is_over_the_limit() -> None:
    over = {name: value for name, value in measured().items() if value > LIMIT}
    assert over == {}


def test_and_or_count_as_branches() -> None:
    # A check that cannot fail is a defect: 16 conditions joined by `and` are over the limit.
    source = "def f(a):\n    return " + " and ".join(f"a[{i}]" for i in range(16)) + "\n"
    assert complexities(source)["f"] == 16


def test_nested_functions_are_measured_too() -> None:
    # Moving a method's branches into a closure does not hide them from the check.
    ifs = "".join(f"            if a[{i}]:\n                return {i}\n" for i in range(15))
    head = "class C:\n    def m(self, a):\n        def inner():\n"
    source = head + ifs + "        return inner\n"
    assert complexities(source)["C.m.inner"] > LIMIT
