"""No internal object crosses a package seam typed `Any`.

A public function, method or class attribute of one package (`chat/`, `tools/`, `adapters/`, a
root module…) that a module of another package imports may not type a parameter, a return or
an attribute with a bare `Any`: what crosses is a class or protocol of ours. Data from outside
(JSON, msgpack, the user's config and callbacks) is typed with the named aliases of
`codecompanion/outside.py` (`Json`, `UserValue`), which say what it is and that its reader
checks it piece by piece; they are the allowlist.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rplugin" / "python3" / "codecompanion"

Def = ast.FunctionDef | ast.AsyncFunctionDef


def _bare_any(annotation: ast.expr | None) -> bool:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.strip() == "Any"
    if isinstance(annotation, ast.Name):
        return annotation.id == "Any"
    return isinstance(annotation, ast.Attribute) and annotation.attr == "Any"


def _function_spots(node: Def, owner: str) -> Iterator[str]:
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    every += [arg for arg in (args.vararg, args.kwarg) if arg is not None]
    for arg in every:
        if _bare_any(arg.annotation):
            yield f"{owner}{node.name}({arg.arg})"
    if _bare_any(node.returns):
        yield f"{owner}{node.name} -> Any"


def _public(name: str) -> bool:
    return not name.startswith("_") or name == "__init__"


def _class_spots(node: ast.ClassDef) -> Iterator[str]:
    for item in node.body:
        if isinstance(item, Def) and _public(item.name):
            yield from _function_spots(item, f"{node.name}.")
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            if _public(item.target.id) and _bare_any(item.annotation):
                yield f"{node.name}.{item.target.id}"


def any_spots(tree: ast.Module) -> dict[str, list[str]]:
    """The module's public names whose signature (or attributes) hold a bare `Any`."""
    spots: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, Def) and _public(node.name):
            found = list(_function_spots(node, ""))
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            found = list(_class_spots(node))
        else:
            continue
        if found:
            spots[node.name] = found
    return spots


def _seam(module: str) -> str:
    """The package a module belongs to: `tools` for `codecompanion.tools.runtime.system`,
    the module itself for a root module (`codecompanion.workspace`)."""
    return module.split(".")[1] if "." in module else module


def module_name(path: Path, package: Path) -> str:
    """The dotted name of a file of `package` (`codecompanion.tools.model.contract`)."""
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path, root: Path) -> Iterator[tuple[str, str]]:
    """(module, name) for each `from module import name` of a package file, relative ones
    resolved, and each `module.name` read through a module it imported."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                yield base, alias.name
                aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in aliases:
                yield aliases[node.value.id], node.attr


def seam_offenders(package: Path) -> list[str]:
    """Every bare `Any` of a public name that a module of another package uses."""
    files = sorted(package.rglob("*.py"))
    spots = {
        module_name(p, package): any_spots(ast.parse(p.read_text(encoding="utf-8"))) for p in files
    }
    offenders: set[str] = set()
    for path in files:
        user = module_name(path, package)
        for module, name in imported_names(path, package):
            found = spots.get(module, {}).get(name)
            if found and _seam(module) != _seam(user):
                offenders.update(f"{module}: {spot} (used by {_seam(user)})" for spot in found)
    return sorted(offenders)


def test_no_internal_object_crosses_a_package_seam_typed_any() -> None:
    assert seam_offenders(PACKAGE) == []


def test_the_rule_finds_a_bare_any_across_a_seam_and_lets_an_alias_pass(tmp_path: Path) -> None:
    root = tmp_path / "codecompanion"
    (root / "chat").mkdir(parents=True)
    (root / "tools").mkdir()
    for folder in (root, root / "chat", root / "tools"):
        (folder / "__init__.py").write_text("")
    (root / "tools" / "system.py").write_text(
        "from typing import Any\n"
        "from ..outside import Json\n"
        "def plan(adapter: Any, data: Json) -> Any: ...\n"
        "def read(data: Json) -> dict[str, Any]: ...\n"
        "class Kept:\n    tools: Any\n    def get(self, *args: Any) -> None: ...\n"
    )
    (root / "chat" / "loop.py").write_text(
        "from ..tools.system import plan, read\nfrom ..tools import system\nsystem.Kept\n"
    )
    (root / "tools" / "same.py").write_text("from .system import plan\n")
    assert seam_offenders(root) == [
        "codecompanion.tools.system: Kept.get(args) (used by chat)",
        "codecompanion.tools.system: Kept.tools (used by chat)",
        "codecompanion.tools.system: plan -> Any (used by chat)",
        "codecompanion.tools.system: plan(adapter) (used by chat)",
    ]
