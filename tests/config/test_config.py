"""The user's Python config file: valid files, syntax errors, exceptions and wrong types."""

from __future__ import annotations

import textwrap
from pathlib import Path

from codecompanion.config import Config, load_config
from codecompanion.tools import Tool


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "codecompanion.py"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def test_a_missing_file_gives_defaults_without_error(tmp_path: Path) -> None:
    assert load_config(None) == Config()
    config = load_config(tmp_path / "nope.py")
    assert config.error is None and config.tools == {} and config.adapter is None


def test_a_valid_file_with_every_tool_form(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        from codecompanion.tools import Tool, tool

        adapter = "anthropic"
        adapters = {"anthropic": {"model": "claude-x"}}

        @tool(requires_approval=True)
        def shout(text: str) -> str:
            '''Upper-case the text.'''
            return text.upper()

        def calculate(self, args, input):
            return {"status": "success", "data": args["a"] * 2}

        tools = {
            "shout": shout,
            "double": {"description": "Double", "callback": {"cmds": [calculate]}},
            "plain": Tool(name="plain"),
            "run_command": {"opts": {"allow": ["git status"]}},
        }
        groups = {"loud": {"tools": ["shout"], "description": "Loud"}}
        opts = {
            "tool_system": {"auto_submit": False, "timeout": 30},
            "tools": {"run_command": {"deny": ["rm *"]}},
        }
        """,
    )
    config = load_config(path)
    assert config.error is None, config.error
    assert config.adapter == "anthropic" and config.adapters == {"anthropic": {"model": "claude-x"}}
    assert set(config.tools) == {"shout", "double", "plain", "run_command"}
    assert isinstance(config.tools["shout"], Tool)
    assert config.groups["loud"]["tools"] == ["shout"]
    assert config.opts["tool_system"]["timeout"] == 30 and config.path == str(path)


def test_a_syntax_error_is_one_line_with_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'adapter = "openai"\n\ntools = {\n  "x": ,\n}\n')
    config = load_config(path)
    assert config.error is not None and "\n" not in config.error
    assert config.error.startswith(f"{path}:4: SyntaxError")
    assert config.tools == {} and config.adapter is None


def test_an_exception_points_at_the_line_in_the_config_file(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        adapter = "openai"

        def helper():
            return {}["missing"]

        tools = helper()
        """,
    )
    config = load_config(path)
    assert config.error == f"{path}:4: KeyError: 'missing'"


def test_sys_exit_in_the_file_does_not_stop_the_plugin(tmp_path: Path) -> None:
    path = write(tmp_path, "import sys\nsys.exit(3)\n")
    config = load_config(path)
    assert config.error is not None and config.error.startswith(f"{path}:2: SystemExit")


def test_wrong_types_name_the_setting_and_its_line_and_keep_the_rest(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        adapter = "ollama"
        opts = {"tool_system": {"timeout": -1, "auto_submit": True}, "tools": []}
        tools = {
            "broken": {"callback": {"name": "broken", "cmds": [1]}},
            "typo": {"callback": {"name": "typo"}, "enabeld": False},
            "fine": {"callback": {"name": "fine"}},
        }
        groups = ["not", "a", "dict"]
        """,
    )
    config = load_config(path)
    assert config.error == (
        f"{path}:2: opts['tools'] must be a dict of tool name → opts dict (and 4 more)"
    )
    assert config.adapter == "ollama"
    assert config.opts == {"tool_system": {"auto_submit": True}}
    assert list(config.tools) == ["fine"]
    assert config.groups == {}


def test_a_bad_tool_entry_reports_the_tools_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'adapter = 3\n\n\ntools = {"x": {"callback": 42}}\n')
    config = load_config(path)
    assert config.error == f"{path}:1: adapter must be a name (a string), not int (and 1 more)"
    assert config.tools == {}


def test_after_edit_checks_and_editor_options_are_checked(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "after_edit = {'*.py': 'ruff check {files}', '*': ['make -q lint'], '*.js': [1]}\n"
        "opts = {'editor': {'diagnostics': 'errors', 'diagnostics_wait': 'soon'}}\n",
    )
    config = load_config(path)
    assert config.after_edit == {"*.py": ["ruff check {files}"], "*": ["make -q lint"]}
    assert config.opts["editor"] == {"diagnostics": "errors"}
    assert config.error is not None and ":1: after_edit['*.js'] must be a command line" in (
        config.error
    )
    assert "(and 1 more)" in config.error
