"""The after-edit checks: which files a check covers, its command line, those found in a
project's files, the remembered answer, and the message a failure becomes."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from codecompanion.after_edit.checks import Check, configured, found
from codecompanion.after_edit.runs import CheckRun, ChecksOptions, ProjectChecks, failures
from codecompanion.after_edit.trust import TrustStore


def test_a_glob_without_a_slash_matches_the_name_anywhere_and_braces_expand() -> None:
    check = Check("*.{py,pyi}", "ruff check {files}", "config")
    assert check.matches("app.py") and check.matches("pkg/deep/mod.pyi")
    assert not check.matches("app.js") and not check.matches("py")
    nested = Check("src/*.py", "x", "config")
    assert nested.matches("src/a.py") and not nested.matches("a.py")


def test_files_are_shell_quoted_and_a_check_without_them_runs_once() -> None:
    check = Check("*.py", "ruff check {files}", "config")
    assert check.line_for(["a b.py", "x.js", "c;rm -rf ~.py"]) == (
        "ruff check 'a b.py' 'c;rm -rf ~.py'"
    )
    assert check.line_for(["x.js"]) is None
    assert Check("*", "make -q lint", "config").line_for(["x.js", "y.py"]) == "make -q lint"


def test_configured_checks_keep_their_order_and_accept_one_line() -> None:
    checks = configured({"*.py": ["ruff check {files}", "mypy {files}"], "*": "make -q lint"})
    assert [(c.glob, c.command) for c in checks] == [
        ("*.py", "ruff check {files}"),
        ("*.py", "mypy {files}"),
        ("*", "make -q lint"),
    ]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="no TOML reader before Python 3.11")
def test_ruff_is_found_from_pyproject_and_the_projects_own_venv(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert found(tmp_path) == []  # no [tool.ruff]: not a ruff project
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    ruff = tmp_path / ".venv" / "bin" / "ruff"
    ruff.parent.mkdir(parents=True)
    ruff.write_text("#!/bin/sh\n")
    ruff.chmod(0o755)
    [check] = found(tmp_path)
    assert check == Check(
        "*.py", ".venv/bin/ruff check --quiet --output-format=concise {files}", "pyproject.toml"
    )


def test_broken_project_files_find_nothing(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff\n")
    (tmp_path / "package.json").write_text("{not json")
    assert found(tmp_path) == []


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_lint_and_type_check_scripts_are_found_in_package_json(tmp_path: Path) -> None:
    scripts = {"test": "jest", "lint": "eslint .", "typecheck": "tsc --noEmit", "build": "x"}
    (tmp_path / "package.json").write_text(json.dumps({"scripts": scripts}))
    assert [c.command for c in found(tmp_path)] == [
        "npm run --silent lint",
        "npm run --silent typecheck",
    ]


def test_the_answer_is_remembered_per_project_until_the_list_changes(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "data" / "checks.json")
    one = [Check("*.py", "ruff check {files}", "config")]
    two = [*one, Check("*", "make -q lint", "config")]
    assert store.answer(tmp_path, one) is None
    store.remember(tmp_path, one, True)
    assert store.answer(tmp_path, one) is True
    assert store.answer(tmp_path, two) is None  # a new command is asked about again
    assert store.answer(tmp_path / "other", one) is None
    store.remember(tmp_path, two, False)
    assert TrustStore(tmp_path / "data" / "checks.json").answer(tmp_path, two) is False


def test_an_unreadable_store_asks_again(tmp_path: Path) -> None:
    path = tmp_path / "checks.json"
    path.write_text("[broken")
    assert TrustStore(path).answer(tmp_path, []) is None


class Runs:
    """A runner that answers from a table of command line → exit code."""

    def __init__(self, codes: dict[str, int]) -> None:
        self.codes = codes
        self.ran: list[str] = []

    async def __call__(self, command: str, timeout: float) -> CheckRun:
        self.ran.append(command)
        return CheckRun(command, "", self.codes.get(command, 0), f"output of {command}")


async def test_a_round_asks_once_runs_the_checks_for_its_files_and_reports_failures(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text("x\n")
    (tmp_path / "b.js").write_text("y\n")
    value = {"*.py": ["lint-py {files}"], "*.js": ["lint-js {files}"], "*": ["missing-tool"]}
    checks = ProjectChecks(tmp_path, value, TrustStore(tmp_path / "t.json"), ChecksOptions(False))
    runner = Runs({"lint-py a.py": 1, "missing-tool": 127})
    asked: list[str] = []

    async def ask(question: str) -> bool:
        asked.append(question)
        return True

    runs = await checks.after_round(
        [tmp_path / "a.py", tmp_path / "gone.py"], runner, ask, lambda: "sandbox"
    )
    assert runner.ran == ["lint-py a.py", "missing-tool"]  # gone.py was deleted: not checked
    assert len(asked) == 1 and "lint-py {files} for *.py (config)" in asked[0]
    text = failures(runs)
    assert text is not None and "$ lint-py a.py\n(exit code 1)\noutput of lint-py a.py" in text
    assert "missing-tool" not in text  # a program missing here is no failure of the edit
    await checks.after_round([tmp_path / "a.py"], runner, ask, lambda: "sandbox")
    assert len(asked) == 1  # remembered
    assert failures([CheckRun("ok", "", 0, "")]) is None


async def test_a_no_is_remembered_and_nothing_runs(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n")
    checks = ProjectChecks(tmp_path, {"*.py": "lint {files}"}, TrustStore(tmp_path / "t.json"))
    runner = Runs({})

    async def no(question: str) -> bool:
        return False

    assert await checks.after_round([tmp_path / "a.py"], runner, no, lambda: "x") == []
    assert runner.ran == [] and checks.trust.answer(tmp_path, checks.listed()) is False
