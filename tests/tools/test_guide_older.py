"""Tools written for CodeCompanion's older guides load and run, each older field mapped onto
today's model with a log line saying what it became."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.support.guides import call, load, run


def mapped(caplog: pytest.LogCaptureFixture, field: str) -> str:
    """The log line that says what the older `field` maps to."""
    lines = [r.getMessage() for r in caplog.records if f"`{field}`" in r.getMessage()]
    assert lines, f"no log line for {field}: {[r.getMessage() for r in caplog.records]}"
    return lines[0]


async def test_handlers_approved_decides_the_approval(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = """
def approved(self):
    return self.args.get("ok", False)

tools = {"guarded": {"callback": {"name": "guarded", "cmds": [["echo", "ran"]],
    "handlers": {"approved": approved}}}}
"""
    caplog.set_level(logging.INFO, "codecompanion.tools")
    ran = await run(
        tmp_path, text, call("guarded", {"ok": True}, "yes"), call("guarded", {"ok": False}, "no")
    )
    assert ran.approver.requests == []  # it decided itself
    assert ran.outcome.statuses == {"yes": "success", "no": "rejected"}
    assert ran.result("yes").for_llm == "ran"
    assert "approval step" in " ".join(r.getMessage() for r in caplog.records)


async def test_handlers_approved_may_ask_the_user_itself(tmp_path: Path) -> None:
    text = """
async def approved(self):
    return await self.tools.confirm("Really?")

tools = {"asks": {"callback": {"name": "asks", "cmds": [["echo", "ran"]],
    "handlers": {"approved": approved}}}}
"""
    ran = await run(tmp_path, text, call("asks"))
    assert ran.approver.questions == ["Really?"]
    assert ran.outcome.statuses == {"c1": "rejected"}  # the fake says no to questions


async def test_output_prompt_is_the_text_sent_to_the_model(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = """
def output_prompt(output):
    if isinstance(output, list):
        output = "\\n".join(output)
    return "After the tool completed the output was:\\n" + output

tools = {"runner": {"callback": {"name": "runner", "cmds": [["printf", "a\\\\nb\\\\n"]],
    "output_prompt": output_prompt}}}
"""
    caplog.set_level(logging.INFO, "codecompanion.tools")
    ran = await run(tmp_path, text, call("runner"))
    assert ran.result().for_llm == "After the tool completed the output was:\na\nb"
    assert "output.output_prompt" in mapped(caplog, "output_prompt")


async def test_pre_cmd_runs_before_the_cmds_with_env_and_args(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The code_runner flow: env names a file, pre_cmd writes the code there, the cmd runs it.
    text = """
import os, tempfile

def env(self):
    return {"temp_input": os.path.join(tempfile.mkdtemp(), "code.sh"), "code": self.args["code"]}

def pre_cmd(env, args):
    with open(env["temp_input"], "w") as handle:
        handle.write(env["code"])

tools = {"code_runner": {"callback": {"name": "code_runner",
    "cmds": [["sh", "${temp_input}"]], "env": env, "pre_cmd": pre_cmd}}}
"""
    caplog.set_level(logging.INFO, "codecompanion.tools")
    ran = await run(tmp_path, text, call("code_runner", {"code": "echo from pre_cmd"}))
    assert ran.result().for_llm == "from pre_cmd"
    assert "handlers.pre_cmd" in mapped(caplog, "pre_cmd")


async def test_override_cmds_returns_the_cmds_to_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = """
def override_cmds(cmds):
    return [["echo", "instead"]] + cmds

tools = {"over": {"callback": {"name": "over", "cmds": [["echo", "first"]],
    "override_cmds": override_cmds}}}
"""
    caplog.set_level(logging.INFO, "codecompanion.tools")
    ran = await run(tmp_path, text, call("over"))
    assert ran.result().for_llm == "instead\nfirst"
    assert "handlers.override_cmds" in mapped(caplog, "override_cmds")


async def test_request_is_the_parsed_call(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    text = """
def cmd(self, args, input):
    call = self.request
    return {"status": "success", "data": call["function"]["name"] + " " + call["id"]}

tools = {"req": {"callback": {"name": "req", "cmds": [cmd], "request": {}}}}
"""
    caplog.set_level(logging.INFO, "codecompanion.tools")
    ran = await run(tmp_path, text, call("req", {}, "id-9"))
    assert ran.result("id-9").for_llm == "req id-9"
    assert "filled when the tool runs" in mapped(caplog, "request")


async def test_002_prompt_is_the_system_prompt_and_cmd_is_cmds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = """
SCHEMA = {"type": "function", "function": {"name": "code_runner", "parameters": {
    "type": "object", "properties": {"code": {"type": "string"}}}}}

tools = {"code_runner": {"callback": {
    "name": "code_runner",
    "schema": SCHEMA,
    "prompt": lambda schema: "Run code. Schema: " + schema["function"]["name"],
    "cmd": [["echo", "ran"]],
}}}
"""
    caplog.set_level(logging.INFO, "codecompanion.tools")
    ran = await run(tmp_path, text, call("code_runner", {"code": "x"}))
    assert ran.result().for_llm == "ran"
    assert ran.system.system_prompts() == [
        ("<tool>code_runner</tool>", "Run code. Schema: code_runner")
    ]
    assert "read as `system_prompt`" in mapped(caplog, "prompt")
    assert "read as `cmds`" in mapped(caplog, "cmd")


async def test_the_001_function_form_passes_the_previous_output(tmp_path: Path) -> None:
    text = """
def hello(self, input):
    return "Hello, World"

def last(self, input):
    return {"status": "success", "msg": f"got {input!r}"}

tools = {"hello": {"callback": {"name": "hello", "cmds": [hello, last]}}}
"""
    ran = await run(tmp_path, text, call("hello"))
    assert ran.result().for_llm == "Hello, World\ngot 'Hello, World'"


async def test_the_001_output_form_self_cmd_output(tmp_path: Path) -> None:
    text = """
def success(self, cmd, output):
    self.tools.chat.add_tool_output(self, f"{cmd} -> {output[-1]}")

tools = {"old": {"callback": {"name": "old", "cmds": [["echo", "hi"]],
    "output": {"success": success}}}}
"""
    ran = await run(tmp_path, text, call("old"))
    assert ran.result().for_llm == "['echo', 'hi'] -> ['hi']"


MODULE = """
def cmd(self, args, input):
    return {"status": "success", "data": "from the module"}

name = "code_runner"
cmds = [cmd]
"""


async def test_location_as_a_file_a_module_and_a_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    package = tmp_path / "mytools"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "code_runner.py").write_text(MODULE)
    (tmp_path / "single.py").write_text(MODULE.replace("from the module", "from a file"))
    monkeypatch.syspath_prepend(str(tmp_path))
    text = f"""
tools = {{
    "code_runner": {{"name": "Code Runner", "description": "Run code", "enabled": True,
                     "location": "mytools"}},
    "single": {{"description": "A file", "path": {str(tmp_path / "single.py")!r}}},
    "dotted": {{"location": "mytools.code_runner"}},
}}
"""
    caplog.set_level(logging.INFO, "codecompanion.tools")
    ran = await run(
        tmp_path,
        text,
        call("code_runner", {}, "a"),
        call("single", {}, "b"),
        call("dotted", {}, "c"),
    )
    assert ran.result("a").for_llm == "from the module"
    assert ran.result("b").for_llm == "from a file"
    assert ran.result("c").for_llm == "from the module"
    assert "loaded from location" in " ".join(r.getMessage() for r in caplog.records)


def test_a_location_that_does_not_import_is_one_clear_config_error(tmp_path: Path) -> None:
    from codecompanion.config import load_config

    path = tmp_path / "codecompanion.py"
    path.write_text('tools = {"x": {"location": "no.such.module"}}\n')
    config = load_config(path)
    assert config.error is not None and "cannot import 'no.such.module'" in config.error
    assert config.tools == {}


def test_older_fields_load_without_errors(tmp_path: Path) -> None:
    registry = load(
        tmp_path,
        """
tools = {"all_old": {"callback": {
    "name": "all_old", "cmd": [["true"]], "prompt": lambda schema: "p", "request": None,
    "pre_cmd": lambda env, args: None, "override_cmds": lambda cmds: cmds,
    "output_prompt": lambda output: "x", "handlers": {"approved": lambda self: True},
}}}
""",
    )
    assert registry.get("all_old") is not None


async def test_a_command_tool_is_asked_about_only_when_it_sets_requires_approval(
    tmp_path: Path,
) -> None:
    # As in CodeCompanion: approval is off unless the tool asks for it (the mode table says so).
    text = """
tools = {
    "quiet": {"callback": {"name": "quiet", "cmds": [["echo", "ran"]]}},
    "careful": {"callback": {"name": "careful", "cmds": [["echo", "ran"]]},
                "opts": {"requires_approval": True}},
}
"""
    ran = await run(tmp_path, text, call("quiet", {}, "q"), call("careful", {}, "c"))
    assert [r.tool_name for r in ran.approver.requests] == ["careful"]
    assert ran.outcome.statuses == {"q": "success", "c": "success"}
