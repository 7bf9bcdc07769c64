"""The builtin package: every module's TOOL, strict-compatible schemas, groups."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from codecompanion.tools import builtin
from codecompanion.tools.builtin import BUILTIN_TOOLS, FILE_TOOLS, GROUPS
from codecompanion.tools.model.function_tool import NativeTool

MODULES = sorted(
    m.name for m in pkgutil.iter_modules(builtin.__path__) if not m.name.startswith("_")
)


def test_every_module_is_listed() -> None:
    assert sorted(BUILTIN_TOOLS) == MODULES


def _strict(schema: dict[str, Any], where: str) -> None:
    """OpenAI strict mode: objects list every property as required and allow no others."""
    if "anyOf" in schema:
        for option in schema["anyOf"]:
            _strict(option, where)
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        assert schema.get("additionalProperties") is False, where
        assert sorted(schema.get("required", [])) == sorted(properties), where
        for key, value in properties.items():
            assert value.get("description") or where.count("/") > 1, f"{where}/{key}"
            _strict(value, f"{where}/{key}")
    if "items" in schema:
        _strict(schema["items"], f"{where}[]")


@pytest.mark.parametrize("name", BUILTIN_TOOLS)
def test_tool_module_shape(name: str) -> None:
    module = importlib.import_module(f"codecompanion.tools.builtin.{name}")
    tool = module.TOOL
    assert isinstance(tool, NativeTool)  # `async run(ctx, args)`, no CodeCompanion table
    assert tool.name == name
    assert inspect.iscoroutinefunction(tool.run)
    for key, value in getattr(module, "DEFAULT_OPTS", {}).items():
        assert tool.opts[key] == value
    schema = tool.openai_schema()
    function = schema["function"]
    assert function["name"] == name
    assert function["strict"] is True
    assert 40 < len(function["description"]) < 600
    Draft202012Validator.check_schema(function["parameters"])
    _strict(function["parameters"], name)


def test_argument_names_match_codecompanion() -> None:
    expected = {
        "read_file": ["filepath", "start_line_number_base_zero", "end_line_number_base_zero"],
        "create_file": ["filepath", "content"],
        "insert_edit_into_file": ["filepath", "edits", "explanation", "mode"],
        "delete_file": ["filepath"],
        "run_command": ["cmd", "unconfined"],  # ours: asking to leave the command sandbox
        "grep_search": ["query", "is_regexp", "include_pattern", "max_results"],
        "file_search": ["query", "max_results"],
        "get_changed_files": ["source_control_state"],
        "get_diagnostics": ["filepath", "severity"],
        "fetch_webpage": ["url"],
        "web_search": ["query", "domains"],
    }
    for name, properties in expected.items():
        module = importlib.import_module(f"codecompanion.tools.builtin.{name}")
        assert list(module.TOOL.parameters["properties"]) == properties


def test_groups() -> None:
    assert set(GROUPS) == {"files", "agent"}
    assert list(GROUPS["files"]["tools"]) == list(FILE_TOOLS)
    assert set(FILE_TOOLS) == {
        "read_file",
        "create_file",
        "insert_edit_into_file",
        "delete_file",
        "file_search",
        "grep_search",
    }
    assert list(GROUPS["agent"]["tools"]) == list(BUILTIN_TOOLS)
    assert len(GROUPS["agent"]["system_prompt"]) > 200
    for group in GROUPS.values():
        assert group["description"]
        assert set(group) <= {"description", "tools", "system_prompt", "prompt", "opts"}
    with pytest.raises(TypeError):
        GROUPS["files"]["tools"] = ()  # type: ignore[index]
