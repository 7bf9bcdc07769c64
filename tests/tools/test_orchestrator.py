"""Running calls: function cmds in every form, outputs, errors, timeouts, events, validation."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from codecompanion.errors import ToolError
from codecompanion.tools import tool
from tests.support.fakes import ScriptedApprover
from tests.support.tools import calculator, call, make, raw_call, simple


async def test_codecompanion_calculator_as_a_dict_asks_and_answers_5000() -> None:
    h = make({"calculator": calculator(requires_approval=True)})
    c = call("calculator", {"num1": 100, "num2": 50, "operation": "multiply"})
    outcome = await h.run(c)
    assert h.approver.prompts == ["Perform the calculation `100 multiply 50`?"]
    result = h.chat.result(c.id)
    assert (result.for_llm, result.is_error) == ("5000", False)
    assert outcome.status == "success" and outcome.auto_submit and outcome.results == 1


async def test_the_decorated_function_runs_with_the_models_arguments() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    h = make({"add": add})
    c = call("add", {"a": 2, "b": 3})
    await h.run(c)
    assert h.chat.result(c.id).for_llm == "5"


async def test_async_cmd_and_default_success_output_includes_the_data() -> None:
    async def fetch(self: Any, args: dict[str, Any], input: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"status": "success", "data": {"rows": [1, 2]}}

    h = make({"t": simple(fetch)})
    c = call("t")
    await h.run(c)
    assert '"rows"' in h.chat.result(c.id).for_llm


async def test_output_handler_from_another_thread_and_a_second_call_is_ignored() -> None:
    def later(self: Any, args: dict[str, Any], input: Any, output_handler: Any) -> None:
        def work() -> None:
            output_handler({"status": "success", "data": "first"})
            output_handler({"status": "success", "data": "second"})

        threading.Thread(target=work).start()

    h = make({"t": simple(later)})
    c = call("t")
    await h.run(c)
    result = h.chat.result(c.id)
    assert result.for_llm == "first" and not result.is_error


async def test_an_exception_becomes_an_error_result_and_stops_the_remaining_cmds() -> None:
    ran: list[str] = []

    def boom(self: Any, args: dict[str, Any], input: Any) -> None:
        ran.append("boom")
        raise ToolError("the disk is full")

    def never(self: Any, args: dict[str, Any], input: Any) -> str:
        ran.append("never")
        return "no"

    spec = simple(boom)
    spec["cmds"].append(never)
    h = make({"t": spec})
    c = call("t")
    outcome = await h.run(c)
    result = h.chat.result(c.id)
    assert ran == ["boom"]
    assert result.is_error and "the disk is full" in result.for_llm
    assert outcome.status == "error" and outcome.auto_submit


async def test_an_unexpected_exception_names_its_type() -> None:
    def bad(self: Any, args: dict[str, Any], input: Any) -> None:
        raise KeyError("num1")

    h = make({"t": simple(bad)})
    c = call("t")
    await h.run(c)
    assert "KeyError" in h.chat.result(c.id).for_llm


async def test_error_status_stops_the_remaining_cmds_and_error_output_gets_only_this_error() -> (
    None
):
    seen: dict[str, Any] = {}

    def fails(self: Any, args: dict[str, Any], input: Any) -> dict[str, Any]:
        return {"status": "error", "data": "nope"}

    def on_error(self: Any, tools: Any, cmd: Any, stderr: list[Any], stdout: list[Any]) -> None:
        seen.update(stderr=stderr, stdout=stdout)
        tools.chat.add_tool_output(self, f"failed: {stderr[0]}", "it failed")

    spec = simple(lambda self, args, input: "ok")
    spec["cmds"] += [fails, lambda self, args, input: "unreachable"]
    spec["output"] = {"error": on_error}
    h = make({"t": spec, "u": simple(fails, "u")})
    first, second = call("u"), call("t")
    await h.run(first, second)
    assert seen == {"stderr": ["nope"], "stdout": ["ok"]}
    result = h.chat.result(second.id)
    assert (result.for_llm, result.for_user, result.is_error) == ("failed: nope", "it failed", True)


async def test_input_chaining_passes_the_previous_result() -> None:
    inputs: list[Any] = []

    def first(self: Any, args: dict[str, Any], input: Any) -> dict[str, Any]:
        inputs.append(input)
        return {"status": "success", "data": "Hello, World"}

    def second(self: Any, input: Any) -> None:  # CodeCompanion's older 2-argument form
        inputs.append(input)

    spec = simple(first)
    spec["cmds"].append(lambda self, args, input: inputs.append(input) or "done")
    h = make({"t": spec, "old": {"name": "old", "cmds": [first, second]}})
    await h.run(call("t"), call("old"))
    # A 2-argument cmd whose second parameter is `input` gets the previous output itself.
    assert inputs == [None, {"status": "success", "data": "Hello, World"}, None, "Hello, World"]


async def test_function_tool_timeout_gives_a_timeout_result() -> None:
    async def hangs(self: Any, args: dict[str, Any], input: Any, output_handler: Any) -> None:
        return None  # accepts output_handler but never calls it

    h = make({"t": simple(hangs, timeout=50)})
    c = call("t")
    outcome = await h.run(c)
    result = h.chat.result(c.id)
    assert result.is_error and "timed out" in result.for_llm and "never reported" in result.for_llm
    assert h.chat.final_status(c.id) == "timeout"
    assert outcome.statuses[c.id] == "timeout"


async def test_a_tool_raising_timeouterror_itself_is_an_error_not_our_timeout() -> None:
    def raises(self: Any, args: dict[str, Any], input: Any) -> None:
        raise TimeoutError("upstream slow")

    h = make({"t": simple(raises)})
    c = call("t")
    await h.run(c)
    assert h.chat.final_status(c.id) == "error"


async def test_use_handlers_once_shares_setup_and_on_exit_but_asks_per_call() -> None:
    log: list[str] = []
    spec = simple(lambda self, args, input: log.append(f"run {args['n']}") or args["n"])
    spec["schema"]["function"]["parameters"]["properties"] = {"n": {"type": "integer"}}
    spec["opts"] = {"use_handlers_once": True, "requires_approval": True}
    spec["handlers"] = {
        "setup": lambda self, tools: log.append("setup"),
        "on_exit": lambda self, tools: log.append("on_exit"),
    }
    other = simple(lambda self, args, input: log.append("other"), "other")
    h = make({"t": spec, "other": other})
    calls = [call("t", {"n": 1}), call("t", {"n": 2}), call("other"), call("t", {"n": 3})]
    await h.run(*calls)
    assert log == [
        "setup", "run 1", "run 2", "on_exit", "other", "setup", "run 3", "on_exit",
    ]  # fmt: skip
    assert len(h.approver.requests) == 3


async def test_events_and_statuses_in_order() -> None:
    h = make({"calculator": calculator()})
    c = call("calculator", {"num1": 1, "num2": 2, "operation": "add"})
    assert h.events.names() == ["ChatToolAdded"]
    h.events.fired.clear()
    await h.run(c)
    assert h.events.names() == ["ToolsStarted", "ToolStarted", "ToolFinished", "ToolsFinished"]
    finished = h.events.of("ToolFinished")[0]
    assert finished == {"id": "chat-1", "name": "calculator", "call_id": c.id, "status": "success"}
    assert h.events.of("ToolsFinished") == [{"id": "chat-1", "status": "success"}]
    assert [s for cid, s, _ in h.chat.statuses if cid == c.id] == ["pending", "running", "success"]


async def test_a_tool_not_offered_in_this_chat_gets_an_error_and_does_not_run() -> None:
    ran: list[int] = []
    h = make(
        {
            "t": simple(lambda self, args, input: ran.append(1)),
            "secret": simple(lambda self, args, input: ran.append(2), "secret"),
        },
        offer=False,
    )
    h.system.add_tool("t")
    unknown, hidden, ok = call("nope"), call("secret"), call("t")
    outcome = await h.run(unknown, hidden, ok)
    for c in (unknown, hidden):
        result = h.chat.result(c.id)
        assert result.is_error and "not available in this chat" in result.for_llm
        assert "`t`" in result.for_llm
    assert ran == [1] and outcome.status == "error"


async def test_malformed_json_is_repaired_and_the_model_is_told() -> None:
    h = make({"calculator": calculator()})
    c = raw_call("calculator", '{\'num1\': 6, num2: 7, "operation": "multiply"')
    await h.run(c)
    result = h.chat.result(c.id)
    assert not result.is_error
    assert result.for_llm.startswith("Note: your arguments for calculator were not valid JSON")
    assert result.for_llm.endswith("42")


async def test_unrepairable_arguments_are_an_error() -> None:
    h = make({"calculator": calculator()})
    c = raw_call("calculator", "[1, 2]")
    await h.run(c)
    result = h.chat.result(c.id)
    assert result.is_error and "could not be repaired" in result.for_llm


async def test_schema_violation_reports_message_and_path_and_does_not_run() -> None:
    h = make({"calculator": calculator(requires_approval=True)})
    c = call("calculator", {"num1": "a hundred", "num2": 5, "operation": "power", "x": 1})
    await h.run(c)
    result = h.chat.result(c.id)
    assert result.is_error and h.approver.requests == []
    assert "'a hundred' is not of type 'integer' (at num1)" in result.for_llm
    assert "(at operation)" in result.for_llm
    assert "Additional properties are not allowed" in result.for_llm


async def test_output_is_capped_and_the_full_text_kept() -> None:
    h = make({"t": simple(lambda self, args, input: "x" * 5000)}, opts={"max_output": 1000})
    c = call("t")
    await h.run(c)
    result = h.chat.result(c.id)
    assert len(result.for_llm) < 1100 and "characters cut" in result.for_llm
    assert result.full_output == "x" * 5000


async def test_output_added_after_the_call_was_answered_is_ignored() -> None:
    kept: list[Any] = []

    def remember(self: Any, args: dict[str, Any], input: Any) -> str:
        kept.append(self)
        return "done"

    h = make({"t": simple(remember)})
    c = call("t")
    await h.run(c)
    kept[0].tools.chat.add_tool_output(kept[0], "late")
    assert len(h.chat.results) == 1 and h.chat.result(c.id).for_llm == "done"


async def test_callbacks_see_self_and_tools_with_attribute_access() -> None:
    seen: dict[str, Any] = {}

    def look(self: Any, args: dict[str, Any], input: Any) -> str:
        tools = self.tools
        seen.update(name=self.name, num=self.args["n"], cwd=tools.cwd, chat=tools.chat_id)
        seen.update(entry=self.entry["name"], yolo=tools.yolo, chat_id=tools.chat.id)
        seen.update(tool=self.tool)  # CodeCompanion's name for the entry
        return "ok"

    spec = simple(look, properties={"n": {"type": "integer"}})
    h = make({"t": spec})
    await h.run(call("t", {"n": 4}))
    assert seen["name"] == "t" and seen["num"] == 4 and seen["cwd"] == h.system.cwd
    assert seen["chat"] == seen["chat_id"] == "chat-1" and seen["entry"] == "t"
    assert seen["tool"]["name"] == "t"
    assert seen["yolo"] is False


async def test_setup_may_set_cmds_and_a_failing_setup_is_an_error() -> None:
    def setup(self: Any, tools: Any) -> None:
        self.cmds = [lambda self, args, input: "from setup"]

    spec = simple(lambda self, args, input: "original")
    spec["handlers"] = {"setup": setup}
    broken = simple(lambda self, args, input: "never", "broken")
    broken["handlers"] = {"setup": lambda self, tools: 1 / 0}
    h = make({"t": spec, "broken": broken})
    ok, bad = call("t"), call("broken")
    await h.run(ok, bad)
    assert h.chat.result(ok.id).for_llm == "from setup"
    assert h.chat.result(bad.id).is_error and "setup step failed" in h.chat.result(bad.id).for_llm


async def test_confirm_reaches_the_approver() -> None:
    async def ask(self: Any, args: dict[str, Any], input: Any) -> str:
        return "yes" if await self.tools.confirm("Outside the project. Go on?") else "no"

    h = make({"t": simple(ask)}, approver=ScriptedApprover(confirms=(True,)))
    c = call("t")
    await h.run(c)
    assert h.chat.result(c.id).for_llm == "yes"
    assert h.approver.questions == ["Outside the project. Go on?"]
