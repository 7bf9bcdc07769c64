"""CodeCompanion's current tool guide, written into config files in Python: each promise holds."""

from __future__ import annotations

import json
from pathlib import Path

from codecompanion.messages import Message, MessageStore, ToolCall
from tests.support.guides import CALCULATOR, call, run

APPROVAL = (
    CALCULATOR
    + """
def cmd(self, args, input):
    return {"status": "success", "data": calculate(args["num1"], args["num2"], args["operation"])}

def success(self, tools, cmd, stdout):
    tools.chat.add_tool_output(self, str(stdout[0]))
"""
)


async def test_prompt_condition_with_three_parameters_gets_the_config_entry(
    tmp_path: Path,
) -> None:
    text = (
        APPROVAL
        + """
def only_big(self, tools, config):
    assert config["name"] == "calculator" and config["opts"]["limit"] == 10
    assert tools.chat is not None
    return self.args["num1"] > config["opts"]["limit"]

tools = {"calculator": {
    "description": "Perform calculations",
    "callback": {"name": "calculator", "cmds": [cmd], "schema": SCHEMA,
                 "handlers": {"prompt_condition": only_big},
                 "output": {"success": success}},
    "opts": {"requires_approval": True, "limit": 10},
}}
"""
    )
    small = call("calculator", {"num1": 2, "num2": 3, "operation": "add"}, "small")
    big = call("calculator", {"num1": 20, "num2": 3, "operation": "add"}, "big")
    ran = await run(tmp_path, text, small, big)
    assert [r.call_id for r in ran.approver.requests] == ["big"]
    assert (ran.result("small").for_llm, ran.result("big").for_llm) == ("5", "23")


async def test_prompt_condition_with_two_parameters_still_works(tmp_path: Path) -> None:
    text = (
        APPROVAL
        + """
tools = {"calculator": {
    "description": "Perform calculations",
    "callback": {"name": "calculator", "cmds": [cmd], "schema": SCHEMA,
                 "handlers": {"prompt_condition": lambda self, tools: False},
                 "output": {"success": success}},
    "opts": {"requires_approval": True},
}}
"""
    )
    ran = await run(tmp_path, text, call("calculator", {"num1": 2, "num2": 3, "operation": "add"}))
    assert ran.approver.requests == [] and ran.result().for_llm == "5"


async def test_function_call_is_the_call_as_the_model_sent_it(tmp_path: Path) -> None:
    text = """
import json

def cmd(self, args, input):
    call = self.function_call
    return {"status": "success", "data": json.dumps(
        [call["id"], call["name"], call["arguments"], call["function"]["name"]])}

tools = {"echo": {"callback": {"name": "echo", "cmds": [cmd],
    "schema": {"type": "function", "function": {"name": "echo", "parameters": {
        "type": "object", "properties": {"x": {"type": "string"}}}}}}}}
"""
    raw = '{"x": "hi"}'
    ran = await run(tmp_path, text, ToolCall("call-7", "echo", {"x": "hi"}))
    assert json.loads(ran.result("call-7").for_llm) == ["call-7", "echo", raw, "echo"]


async def test_tools_stdout_and_stderr_hold_what_the_call_collected(tmp_path: Path) -> None:
    text = """
seen = []

def success(self, tools, cmd, stdout):
    seen.append(f"success: {len(tools.stdout)} {tools.stdout == stdout}")

def error(self, tools, cmd, stderr, stdout):
    tools.chat.add_tool_output(self, "\\n".join(seen + [
        f"error: stdout={tools.stdout} failed={'exit code 3' in tools.stderr[0]}"]))

tools = {"steps": {"callback": {"name": "steps",
    "cmds": [["echo", "one"], ["echo", "two"], ["sh", "-c", "exit 3"]],
    "output": {"success": success, "error": error}}}}
"""
    ran = await run(tmp_path, text, call("steps"))
    assert ran.result().for_llm == (
        "success: 1 True\nsuccess: 2 True\nerror: stdout=[['one'], ['two']] failed=True"
    )


async def test_chat_add_message_reaches_the_history_after_the_results(tmp_path: Path) -> None:
    text = """
import threading

def lookup(self, args, input, output_handler):
    def later():  # as an LSP callback would, from another thread
        self.tools.chat.add_message({"role": "user", "content": '{"result": 42}'})
        self.tools.chat.add_message({"role": "user", "content": "hidden"}, {"visible": False})
        output_handler({"status": "success", "data": 42})
    threading.Timer(0.01, later).start()

tools = {"lookup": {"callback": {"name": "lookup", "cmds": [lookup]}}}
"""
    ran = await run(tmp_path, text, call("lookup"))
    assert ran.result().for_llm == "42"
    assert ran.chat.messages == [("user", '{"result": 42}', True), ("user", "hidden", False)]


async def test_cmd_is_the_argv_for_commands_and_the_function_for_functions(
    tmp_path: Path,
) -> None:
    text = """
def command_success(self, tools, cmd, stdout):
    tools.chat.add_tool_output(self, f"{cmd} args={self.args}")

def rejected(self, tools, cmd):
    tools.chat.add_tool_output(self, f"rejected {cmd}")

def double(self, args, input):
    return {"status": "success", "data": args["n"] * 2}

def function_success(self, tools, cmd, stdout):
    tools.chat.add_tool_output(self, f"{cmd is double} {stdout[0]}")

SCHEMA = {"type": "function", "function": {"name": "x", "parameters": {
    "type": "object", "properties": {"n": {"type": "integer"}}}}}

tools = {
    "say": {"callback": {"name": "say", "cmds": [["echo", "${word}"]], "schema": SCHEMA,
        "env": lambda self: {"word": "hi"},
        "output": {"success": command_success, "rejected": rejected}}},
    "double": {"callback": {"name": "double", "cmds": [double], "schema": SCHEMA,
        "output": {"success": function_success}}},
    "ask": {"callback": {"name": "ask", "cmds": [["echo", "x"]],
        "output": {"rejected": rejected}}, "opts": {"requires_approval": True}},
}
"""
    ran = await run(
        tmp_path,
        text,
        call("say", {"n": 1}, "a"),
        call("double", {"n": 4}, "b"),
        call("ask", {}, "c"),
        default="reject",
    )
    assert ran.result("a").for_llm == "['echo', 'hi'] args={'n': 1}"
    assert ran.result("b").for_llm == "True 8"
    assert ran.result("c").for_llm == "rejected ['echo', 'x']"


async def test_cmd_of_a_decorated_function_is_that_function(tmp_path: Path) -> None:
    text = """
from codecompanion import tool

@tool
def shout(text: str) -> str:
    \"\"\"Shout the text.\"\"\"
    return text.upper()

def success(self, tools, cmd, stdout):
    tools.chat.add_tool_output(self, f"{cmd.__name__}: {stdout[0]}")

shout.output["success"] = success
tools = {"shout": shout}
"""
    ran = await run(tmp_path, text, call("shout", {"text": "hi"}))
    assert ran.result().for_llm == "shout: HI"


async def test_a_commands_stdout_is_a_list_of_lines(tmp_path: Path) -> None:
    text = """
def success(self, tools, cmd, stdout):
    tools.chat.add_tool_output(self, f"first={stdout[0][0]} all={stdout[0]}")

tools = {"lines": {"callback": {"name": "lines", "cmds": [["printf", "a\\\\nb\\\\n"]],
    "output": {"success": success}}}}
"""
    ran = await run(tmp_path, text, call("lines"))
    assert ran.result().for_llm == "first=a all=['a', 'b']"


async def test_opts_timeout_is_in_milliseconds_for_user_tools(tmp_path: Path) -> None:
    text = """
import asyncio

async def slow(self, args, input):
    await asyncio.sleep(30)

tools = {"slow": {"callback": {"name": "slow", "cmds": [slow]}, "opts": {"timeout": 200}}}
"""
    ran = await run(tmp_path, text, call("slow"))
    assert ran.outcome.statuses == {"c1": "timeout"}
    assert "timed out after 0.2s" in ran.result().for_llm


async def test_opts_timeout_is_in_milliseconds_for_builtins(tmp_path: Path) -> None:
    text = """
opts = {"tools": {"run_command": {"timeout": 600, "allowed_in_yolo_mode": True}}}
"""
    ran = await run(tmp_path, text, call("run_command", {"cmd": "echo started; sleep 20"}))
    result = ran.result()
    assert result.is_error and "timed out (limit 0.6s)" in result.for_llm
    assert "started" in result.for_llm


def test_stored_tool_calls_carry_their_index(tmp_path: Path) -> None:
    calls = [ToolCall("a", "x", {"n": 1}), ToolCall("b", "y", {})]
    store = MessageStore([Message(role="llm", visible=False, tool_calls=calls)])
    saved = json.loads(json.dumps(store.to_list()))
    assert [c["_index"] for c in saved[0]["tools"]["calls"]] == [0, 1]
    assert saved[0]["tools"]["calls"][0]["function"] == {"name": "x", "arguments": '{"n": 1}'}
    again = MessageStore.from_list(saved)
    assert [c.id for c in again[0].tool_calls] == ["a", "b"]


async def test_a_number_sent_as_text_is_read_as_the_number_with_a_note(tmp_path: Path) -> None:
    text = (
        APPROVAL
        + """
tools = {"calculator": {"callback": {"name": "calculator", "cmds": [cmd], "schema": SCHEMA,
    "output": {"success": success}}}}
"""
    )
    good = call("calculator", {"num1": "100", "num2": 50, "operation": "multiply"}, "good")
    bad = call("calculator", {"num1": "lots", "num2": 50, "operation": "multiply"}, "bad")
    fraction = call("calculator", {"num1": "1.5", "num2": 1, "operation": "add"}, "frac")
    ran = await run(tmp_path, text, good, bad, fraction)
    result = ran.result("good")
    assert not result.is_error and result.for_llm.endswith("5000")
    assert 'Note: `num1` was sent as the text "100": read as a number.' in result.for_llm
    assert ran.result("bad").is_error and "(at num1)" in ran.result("bad").for_llm
    # 1.5 is no integer: still a clear error, not a silent rounding.
    assert ran.result("frac").is_error and "(at num1)" in ran.result("frac").for_llm


async def test_builtins_accept_calls_without_codecompanions_optional_fields(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    text = """
opts = {"tools": {"insert_edit_into_file": {"requires_approval": False}}}
"""
    edit = {"filepath": "notes.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}
    ran = await run(
        tmp_path,
        text,
        call("grep_search", {"query": "alpha"}, "grep"),
        call("file_search", {"query": "*.txt"}, "files"),
        call(
            "read_file",
            {
                "filepath": "notes.txt",
                "start_line_number_base_zero": "0",
                "end_line_number_base_zero": "-1",
            },
            "read",
        ),
        call("insert_edit_into_file", edit, "edit"),
    )
    for call_id in ("grep", "files", "read", "edit"):
        assert not ran.result(call_id).is_error, ran.result(call_id).for_llm
    assert "notes.txt" in ran.result("grep").for_llm
    assert "read as a number" in ran.result("read").for_llm
    assert (tmp_path / "notes.txt").read_text() == "alpha\ngamma\n"


async def test_a_raising_success_output_says_the_exception_in_one_line(tmp_path: Path) -> None:
    text = """
def cmd(self, args, input):
    return {"status": "success", "data": 1}

def success(self, tools, cmd, stdout):
    raise ValueError("no chat here\\nsecond line")

tools = {"boom": {"callback": {"name": "boom", "cmds": [cmd], "output": {"success": success}}}}
"""
    ran = await run(tmp_path, text, call("boom"))
    result = ran.result()
    assert result.is_error
    assert result.for_llm == (
        "The boom tool ran, but its success output failed: ValueError: no chat here"
    )
