"""`python -m codecompanion tool`: one call through the real orchestrator, result as JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "rplugin" / "python3"

CONFIG = '''
from codecompanion.tools import tool

def calculate(self, args, input):
    ops = {"multiply": lambda a, b: a * b, "add": lambda a, b: a + b}
    return {"status": "success", "data": ops[args["operation"]](args["num1"], args["num2"])}

SCHEMA = {
    "type": "function",
    "function": {
        "name": "calculator",
        "description": "Perform calculations",
        "parameters": {
            "type": "object",
            "properties": {
                "num1": {"type": "integer"},
                "num2": {"type": "integer"},
                "operation": {"type": "string", "enum": ["add", "multiply"]},
            },
            "required": ["num1", "num2", "operation"],
        },
    },
}

@tool
def where(tools) -> str:
    """Say where the project is."""
    return str(tools.cwd)

tools = {
    "calculator": {
        "description": "Perform calculations",
        "callback": {"name": "calculator", "cmds": [calculate], "schema": SCHEMA},
        "opts": {"requires_approval": True},
    },
    "where": where,
}
'''


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "codecompanion.py"
    path.write_text(CONFIG)
    return path


def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, object], str]:
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT), **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "codecompanion", "tool", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        timeout=60,
    )
    return done.returncode, json.loads(done.stdout), done.stderr


def test_runs_a_config_tool_with_yes(config_file: Path) -> None:
    args = json.dumps({"num1": 100, "num2": 50, "operation": "multiply"})
    code, result, _ = run_cli("calculator", "--config", str(config_file), "--args", args, "--yes")
    assert (code, result) == (0, {"status": "success", "for_llm": "5000", "for_user": None})


def test_without_yes_and_without_a_terminal_approval_is_rejected(config_file: Path) -> None:
    args = json.dumps({"num1": 1, "num2": 2, "operation": "add"})
    code, result, _ = run_cli("calculator", "--config", str(config_file), "--args", args)
    assert code == 1 and result["status"] == "rejected"
    assert "no terminal" in str(result["for_llm"])


def run_on_a_terminal(project: Path, name: str, args: dict[str, object], typed: bytes) -> str:
    """The CLI with a pseudo-terminal as stdin, `typed` at its question; stderr and stdout."""
    import pty

    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    command = [sys.executable, "-m", "codecompanion", "tool", name, "--cwd", str(project)]
    command += ["--config", str(project / "none.py"), "--args", json.dumps(args)]
    with subprocess.Popen(
        command, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as proc:
        os.close(slave)
        os.write(master, typed)
        out, err = proc.communicate(timeout=60)
    os.close(master)
    return err.decode() + out.decode()


@pytest.mark.parametrize("typed", [b"y\n", b"n\n"])
def test_a_file_change_is_shown_and_asked_about_like_a_command(
    tmp_path: Path, typed: bytes
) -> None:
    (tmp_path / "notes.md").write_text("alpha\nbeta\n")
    edit = {"oldText": "beta", "newText": "BETA", "replaceAll": False}
    args = {"filepath": "notes.md", "explanation": "x", "mode": None, "edits": [edit]}
    shown = run_on_a_terminal(tmp_path, "insert_edit_into_file", args, typed)
    assert "-beta\n+BETA" in shown and "Write this change to" in shown and "[y/N]" in shown
    assert (tmp_path / "notes.md").read_text() == (
        "alpha\nBETA\n" if typed == b"y\n" else "alpha\nbeta\n"
    )
    made = {"filepath": "new.txt", "content": "one\ntwo\n"}
    shown = run_on_a_terminal(tmp_path, "create_file", made, typed)
    assert "+one\n+two" in shown and "[y/N]" in shown
    assert (tmp_path / "new.txt").exists() == (typed == b"y\n")


def test_without_yes_and_without_a_terminal_a_file_is_not_written(tmp_path: Path) -> None:
    code, result, _ = run_cli(
        "create_file",
        "--cwd",
        str(tmp_path),
        "--args",
        json.dumps({"filepath": "a.txt", "content": "x\n"}),
    )
    assert code == 1 and "no terminal" in str(result["for_llm"])
    assert not (tmp_path / "a.txt").exists()


def test_invalid_arguments_and_unknown_tools_exit_1(config_file: Path, tmp_path: Path) -> None:
    code, result, _ = run_cli("calculator", "--config", str(config_file), "--args", '{"num1": "x"}')
    assert code == 1 and result["status"] == "error" and "(at num1)" in str(result["for_llm"])
    code, result, _ = run_cli("nope", "--config", str(config_file))
    assert code == 1 and "no enabled tool named 'nope'" in str(result["for_llm"])


def test_cwd_is_the_project_root(config_file: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    code, result, _ = run_cli("where", "--config", str(config_file), "--cwd", str(project))
    assert code == 0 and result["for_llm"] == str(project.resolve())


def test_a_broken_config_is_reported_on_stderr_and_builtins_still_work(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text("tools = {\n")
    code, result, stderr = run_cli("nope", "--config", str(path))
    assert f"{path}:1: SyntaxError" in stderr
    assert code == 1 and result["status"] == "error"


def test_without_config_it_reads_the_file_neovim_reads_and_says_which(
    config_file: Path, tmp_path: Path
) -> None:
    # Neovim's order: $CODECOMPANION_CONFIG, else stdpath("config")/codecompanion.py.
    code, result, stderr = run_cli("where", env={"CODECOMPANION_CONFIG": str(config_file)})
    assert code == 0 and result["status"] == "success"
    assert f"config: {config_file}\n" in stderr
    xdg = tmp_path / "xdg"
    (xdg / "nvim").mkdir(parents=True)
    (xdg / "nvim" / "codecompanion.py").write_text(CONFIG)
    without = {"CODECOMPANION_CONFIG": "", "XDG_CONFIG_HOME": str(xdg), "NVIM_APPNAME": ""}
    code, result, stderr = run_cli("where", env=without)
    assert code == 0 and f"config: {xdg / 'nvim' / 'codecompanion.py'}\n" in stderr
    missing = {**without, "XDG_CONFIG_HOME": str(tmp_path / "none")}
    code, result, stderr = run_cli("where", env=missing)
    assert code == 1 and "no enabled tool named 'where'" in str(result["for_llm"])
    assert "(not found: the defaults)" in stderr


def test_a_tool_process_gets_no_key_a_configured_adapter_reads(tmp_path: Path) -> None:
    # The README's promise, on the command line as in the chat: `env:` keys never reach a tool.
    config = tmp_path / "codecompanion.py"
    config.write_text(
        "adapters = {'mine': {'url': 'http://127.0.0.1:9/v1', 'api_key': 'env:MY_PROVIDER_CRED'}}\n"
        "tools = {'show_env': {'description': 'env', 'cmds': [['env']],"
        " 'schema': {'type': 'function', 'function': {'name': 'show_env', 'description': 'env',"
        " 'parameters': {'type': 'object', 'properties': {}}}}}}\n"
    )
    secrets = {"MY_PROVIDER_CRED": "cred-value-1234", "OPENAI_API_KEY": "sk-value-5678"}
    code, result, _ = run_cli(
        "show_env",
        "--config",
        str(config),
        "--cwd",
        str(tmp_path),
        "--yes",
        env={**secrets, "PLAIN_SETTING": "plain-9"},
    )
    assert code == 0 and "PLAIN_SETTING=plain-9" in str(result["for_llm"])
    assert not [value for value in secrets.values() if value in json.dumps(result)]
