"""The dependency list: declared = imported, licences fit Apache-2.0, lower bounds and pins agree,
`make install` uses the constraints, and :checkhealth reads the list from the package metadata."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from codecompanion.nvim.health import dependencies

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "rplugin" / "python3" / "codecompanion"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
RUNTIME = [Requirement(line) for line in PROJECT["dependencies"]]
DEV = [Requirement(line) for line in PROJECT["optional-dependencies"]["dev"]]


def imported_modules() -> set[str]:
    """Top-level modules the package imports (absolute imports only)."""
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"codecompanion"}


def distribution_of(module: str) -> set[str]:
    return {canonicalize_name(d) for d in importlib.metadata.packages_distributions()[module]}


def test_every_import_is_declared_and_every_declared_package_is_imported() -> None:
    declared = {canonicalize_name(req.name) for req in RUNTIME}
    used: set[str] = set()
    for module in imported_modules():
        owners = distribution_of(module)
        assert owners & declared, f"{module} is imported but {owners} is not a dependency"
        used |= owners & declared
    assert declared - used == set(), "declared but never imported"


def _licence(name: str) -> str:
    meta = importlib.metadata.metadata(name)
    parts = [meta.get("License-Expression") or "", (meta.get("License") or "")[:200]]
    parts += [c for c in meta.get_all("Classifier") or [] if c.startswith("License")]
    if not "".join(parts).strip():  # no field says it: the licence file the wheel ships does
        for file in importlib.metadata.distribution(name).files or []:
            if "licenses/" in str(file) or file.name.upper().startswith(("LICENSE", "COPYING")):
                parts.append(" ".join(file.read_text().split()[:6]))
    return " ".join(parts)


@pytest.mark.parametrize("requirement", RUNTIME, ids=lambda r: r.name)
def test_runtime_licences_fit_apache(requirement: Requirement) -> None:
    licence = _licence(requirement.name)
    assert licence.strip(), f"{requirement.name}: no licence metadata"
    assert not re.search(r"(?<!L)GPL|Affero", licence), f"{requirement.name}: {licence}"


def test_constraints_pin_every_dependency_within_its_bounds() -> None:
    pins: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version
    for requirement in RUNTIME + DEV:
        pinned = pins.get(canonicalize_name(requirement.name))
        assert pinned, f"{requirement.name} is not in constraints.txt"
        assert requirement.specifier.contains(pinned, prereleases=True), (requirement, pinned)
        installed = importlib.metadata.version(requirement.name)
        assert requirement.specifier.contains(installed, prereleases=True), (requirement, installed)


def test_dev_tools_are_pinned_exactly_and_bounds_match_use() -> None:
    dev = {canonicalize_name(r.name): str(r.specifier) for r in DEV}
    assert dev["ruff"].startswith("==") and dev["mypy"].startswith("==")
    # asyncio_default_fixture_loop_scope (pyproject) is a pytest-asyncio 0.24 option.
    assert Requirement("pytest-asyncio" + dev["pytest-asyncio"]).specifier.contains("0.24")
    assert not Requirement("pytest-asyncio" + dev["pytest-asyncio"]).specifier.contains("0.23")


def test_make_install_uses_the_constraints() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "CONSTRAINTS ?= constraints.txt" in makefile
    assert makefile.count("pip install -q $(PIN) -e") == 2


def test_health_lists_the_declared_runtime_dependencies() -> None:
    assert dependencies() == [req.name for req in RUNTIME]


def test_py_typed_and_console_script_ship() -> None:
    assert (PACKAGE / "py.typed").exists()
    scripts = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="console_scripts")}
    assert scripts.get("codecompanion") == "codecompanion.__main__:main"
