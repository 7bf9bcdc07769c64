"""CodeCompanion's tool API since February 2026 (`meta`, `opts.output_cb`, fields in the entry),
written into config files in Python, beside the older callback form."""

from __future__ import annotations

from pathlib import Path

from tests.support.guides import CALCULATOR, call, run

# The calculator as today's docs write it: fields straight in the entry, no `callback`.
TODAY = (
    CALCULATOR
    + """
log = []

def cmd(self, args, opts):
    assert opts["input"] is None and opts.input is None and callable(opts.output_cb)
    return {"status": "success", "data": calculate(args["num1"], args["num2"], args["operation"])}

def setup(self, meta):
    log.append(f"setup {meta['tools'].chat.id} {meta.tools is not None}")

def on_exit(self, meta):
    log.append("on_exit")

def success(self, stdout, meta):
    meta["tools"].chat.add_tool_output(self, f"{stdout[0]} cmd={meta.cmd is cmd} {log}")

def error(self, stderr, meta):
    meta.tools.chat.add_tool_output(self, f"error: {stderr[0]} cmd={meta['cmd'] is cmd}")

def prompt(self, meta):
    return f"Perform `{self.args['num1']} {self.args['operation']} {self.args['num2']}`?"

def rejected(self, meta):
    meta.tools.chat.add_tool_output(self, f"declined ({meta.cmd is cmd})")

def cancelled(self, meta):
    meta.tools.chat.add_tool_output(self, "cancelled by the user")

tools = {
    "calculator": {
        "description": "Perform calculations",
        "name": "calculator",
        "cmds": [cmd],
        "schema": SCHEMA,
        "handlers": {"setup": setup, "on_exit": on_exit},
        "output": {"success": success, "error": error, "prompt": prompt,
                   "rejected": rejected, "cancelled": cancelled},
        "opts": {"require_approval_before": True},
    },
}
"""
)


async def test_todays_calculator_runs_with_meta_and_fields_in_the_entry(tmp_path: Path) -> None:
    ran = await run(
        tmp_path, TODAY, call("calculator", {"num1": 100, "num2": 50, "operation": "multiply"})
    )
    assert ran.approver.prompts == ["Perform `100 multiply 50`?"]
    assert ran.result().for_llm == "5000 cmd=True ['setup chat-1 True']"


async def test_todays_rejected_and_cancelled_outputs_get_meta(tmp_path: Path) -> None:
    args = {"num1": 1, "num2": 2, "operation": "add"}
    ran = await run(tmp_path, TODAY, call("calculator", args), default="reject")
    assert ran.result().for_llm == "declined (True)"
    ran = await run(tmp_path, TODAY, call("calculator", args), default="cancel")
    assert ran.result().for_llm == "cancelled by the user"


async def test_todays_error_output_gets_stderr_then_meta(tmp_path: Path) -> None:
    text = """
def divide(self, args, opts):
    if args["b"] == 0:
        return {"status": "error", "data": "Cannot divide by zero"}
    return {"status": "success", "data": args["a"] / args["b"]}

def error(self, stderr, meta):
    meta.tools.chat.add_tool_output(self, f"error: {stderr[0]} cmd={meta['cmd'] is divide}")

tools = {"divide": {"description": "Divide", "cmds": [divide], "output": {"error": error}}}
"""
    ran = await run(tmp_path, text, call("divide", {"a": 1, "b": 0}))
    assert ran.result().is_error
    assert ran.result().for_llm == "error: Cannot divide by zero cmd=True"


async def test_output_cb_reports_an_async_result_and_input_chains(tmp_path: Path) -> None:
    text = """
import threading

def first(self, args, opts):
    threading.Timer(0.01, opts.output_cb, [{"status": "success", "data": "from a thread"}]).start()

def second(self, args, opts):
    return {"status": "success", "data": f"got {opts['input']['data']}"}

def success(self, stdout, meta):
    if len(stdout) == 2:
        meta.tools.chat.add_tool_output(self, " / ".join(stdout))

tools = {"chain": {"description": "Two steps", "cmds": [first, second],
                   "output": {"success": success}}}
"""
    ran = await run(tmp_path, text, call("chain"))
    assert ran.result().for_llm == "from a thread / got from a thread"


async def test_a_third_parameter_with_another_name_reads_as_input_and_as_opts(
    tmp_path: Path,
) -> None:
    text = """
def first(self, args, x):
    return {"status": "success", "data": "one"}

def second(self, args, x):
    return {"status": "success", "data": f"{x['data']}|{x['input']['data']}|{x.input['status']}"}

tools = {"both": {"callback": {"name": "both", "cmds": [first, second]}}}
"""
    ran = await run(tmp_path, text, call("both"))
    assert ran.result().for_llm == "one\none|one|success"


async def test_prompt_condition_with_meta(tmp_path: Path) -> None:
    text = TODAY.replace(
        '"handlers": {"setup": setup, "on_exit": on_exit},',
        '"handlers": {"setup": setup, "prompt_condition": lambda self, meta: '
        'meta.tools.chat.id != "chat-1"},',
    )
    ran = await run(tmp_path, text, call("calculator", {"num1": 1, "num2": 2, "operation": "add"}))
    assert ran.approver.requests == [] and ran.result().for_llm.startswith("3 ")


async def test_approval_events_fire_once_each_with_codecompanions_data(tmp_path: Path) -> None:
    args = {"num1": 1, "num2": 2, "operation": "add"}
    ran = await run(tmp_path, TODAY, call("calculator", args), default="reject")
    requested = ran.events.of("ToolApprovalRequested")
    finished = ran.events.of("ToolApprovalFinished")
    assert len(requested) == 1 and requested[0]["name"] == "calculator"
    assert len(finished) == 1 and finished[0]["choice"] == "reject"


def test_todays_form_through_the_headless_tool_command(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    config = tmp_path / "codecompanion.py"
    config.write_text(TODAY)
    package = Path(__file__).resolve().parents[2] / "rplugin" / "python3"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "codecompanion",
            "tool",
            "calculator",
            "--config",
            str(config),
            "--args",
            json.dumps({"num1": "100", "num2": 50, "operation": "multiply"}),
            "--yes",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(package)},
    )
    result = json.loads(done.stdout)
    assert result["status"] == "success", done.stderr
    assert result["for_llm"].endswith("5000 cmd=True ['setup cli True']")
    assert 'the text "100": read as a number' in result["for_llm"]
