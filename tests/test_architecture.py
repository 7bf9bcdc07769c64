"""The core never imports pynvim: only codecompanion/nvim/ (and the root's re-export) may."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
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


def module_name(path: Path) -> str:
    """The dotted name of a package file (`codecompanion.tools.model.contract`)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def dynamic_imports(tree: ast.AST, package: str) -> tuple[set[str], int]:
    """`importlib.import_module` calls: the modules named by a literal (relative ones resolved
    against `__package__`), and how many name their module some other way."""
    named: set[str] = set()
    unnamed = 0
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "import_module" or not node.args:
            continue
        first = node.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            unnamed += 1
            continue
        target = first.value
        if target.startswith("."):
            level = len(target) - len(target.lstrip("."))
            anchor = package.split(".")[: len(package.split(".")) - level + 1]
            target = ".".join([*anchor, *([target.lstrip(".")] if target.lstrip(".") else [])])
        named.add(target)
    return named, unnamed


def package_imports(path: Path, modules: set[str]) -> set[str]:
    """The package modules a file imports anywhere: top level, in functions, under
    TYPE_CHECKING, and through `importlib.import_module` with a literal name."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found, _ = dynamic_imports(tree, package)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.add(target if target in modules else base)
    return found & modules - {name}


def import_graph() -> dict[str, set[str]]:
    """Every package module and the package modules it imports."""
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return {name: package_imports(path, modules) for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


# Imports every module first in a clean module table, each in turn; prints those that fail.
_IMPORT_EACH_FIRST = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m.split(".")[0] == "codecompanion"]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except ImportError as exc:
        failed.append(f"{name}: {exc}")
print("\\n".join(failed))
"""


def test_every_module_imports_first() -> None:
    # Importing a module runs its packages' __init__ first, an edge the graph above does not
    # see: streams.parser -> adapters (package) -> http_adapter -> streams.parser failed so.
    names = sorted(module_name(path) for path in PACKAGE.rglob("*.py"))
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH_FIRST, *names],
        capture_output=True,
        text=True,
        cwd=PACKAGE.parent,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_the_cycle_check_finds_a_cycle() -> None:
    # A check that can never fail is a defect: a two-module and a three-module loop are found.
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert cycles(graph) == [["a", "b"], ["c", "d", "e"]]


def test_the_graph_sees_type_checking_and_relative_imports() -> None:
    graph = import_graph()
    assert "codecompanion.tools.compat.table" in graph["codecompanion.tools"]
    assert "codecompanion.errors" in graph["codecompanion.tools.builtin._support.paths"]
    assert "codecompanion.messages" in graph["codecompanion.tools.model.contract"]


def test_tools_layers_point_one_way() -> None:
    # builtin → model/runtime, runtime → model; the model knows neither runtime nor builtins.
    graph = import_graph()
    model, runtime = "codecompanion.tools.model", "codecompanion.tools.runtime"
    builtin = "codecompanion.tools.builtin"
    wrong = [
        (name, target)
        for name, targets in graph.items()
        for target in targets
        if (name.startswith(model) and target.startswith((runtime, builtin)))
        or (name.startswith(runtime) and target.startswith(builtin))
    ]
    assert wrong == []


def test_architecture_doc_names_files_that_exist() -> None:
    # doc/architecture.md walks a call through these files: each must still be there.
    text = (PACKAGE.parents[2] / "doc" / "architecture.md").read_text(encoding="utf-8")
    folders = "tools|adapters|nvim|chat|context|persistence|transport|streams|cli|loopback"
    paths = set(re.findall(rf"(?<![\w/])((?:{folders})/[\w/]+\.py)\b", text))
    names = set(re.findall(r"\b(\w+\.py)\b", text)) - {"<provider>.py"}
    assert len(paths) > 3 and len(names) > 15
    tests = PACKAGE.parents[2] / "tests"
    existing = {path.name for path in [*PACKAGE.rglob("*.py"), *tests.rglob("*.py")]}
    missing = sorted(p for p in paths if not (PACKAGE / p).is_file())
    missing += sorted(name for name in names if name not in existing)
    assert missing == []


# The only files that import a module named at run time: each from its own package, or user code.
DYNAMIC_IMPORTERS = {
    "adapters/catalog.py",  # a provider's module, when its adapter is first looked up
    "tools/builtin/__init__.py",  # the builtin tools, found by listing the package
    "tools/compat/legacy.py",  # a user tool's `location`
    "nvim/preload.py",  # what a first tool round imports, loaded when a chat offers a tool
}


def test_run_time_imports_are_seen_or_known() -> None:
    unnamed = set()
    for path in PACKAGE.rglob("*.py"):
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        _, count = dynamic_imports(ast.parse(path.read_text(encoding="utf-8")), package)
        if count:
            unnamed.add(str(path.relative_to(PACKAGE)))
    assert unnamed == DYNAMIC_IMPORTERS


def test_the_graph_sees_importlib_and_imports_in_functions() -> None:
    tree = ast.parse(
        "import importlib\n"
        "def f():\n"
        "    from ..builtin import read_file\n"
        "    importlib.import_module('..runtime.system', __package__)\n"
        "    importlib.import_module('codecompanion.errors')\n"
    )
    named, unnamed = dynamic_imports(tree, "codecompanion.tools.model")
    assert named == {"codecompanion.tools.runtime.system", "codecompanion.errors"}
    assert unnamed == 0
    graph = import_graph()
    # in-function imports are edges too: the workspace builds the registry inside a method
    assert "codecompanion.tools" in graph["codecompanion.workspace"]


def test_tools_import_no_chat_provider_or_host_module() -> None:
    # The tool system sits below the chat: it reaches the chat through protocol.ToolChat and gets
    # what providers know (key names, TLS) from the builder, never by importing them.
    graph = import_graph()
    above = tuple(
        f"codecompanion.{name}"
        for name in ("chat", "adapters", "nvim", "workspace", "cli", "loopback", "persistence")
    )
    wrong = [
        (name, target)
        for name, targets in graph.items()
        if name.startswith("codecompanion.tools")
        for target in targets
        if target.startswith(above)
    ]
    assert wrong == []


def test_one_recorder_makes_every_tool_result_message() -> None:
    # A call's result enters a history in one place (MessageStore.record_result): the tool
    # system's results, repeated calls', owed ones after a stop or crash, and a restored chat's.
    makers = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for call in ast.walk(node):
                    if (
                        isinstance(call, ast.Call)
                        and isinstance(call.func, ast.Name)
                        and call.func.id == "Message"
                        and any(
                            k.arg == "role"
                            and isinstance(k.value, ast.Constant)
                            and k.value.value == "tool"
                            for k in call.keywords
                        )
                    ):
                        makers.append(f"{module_name(path)}.{node.name}")
    assert makers == ["codecompanion.messages.record_result"]
