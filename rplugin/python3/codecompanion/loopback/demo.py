"""The offline demo provider: a loopback server that answers like a model, from the request.

It is used when no provider is configured, so a fresh install shows the whole tool loop: the
model creates and reads a file, asks to run a command (the approval prompt), and edits it.
Each answer follows from the conversation the request carries (how many results came back since
the last message), so any number of demo chats, messages and clears each get the whole demo.
A tool of your own offered to a demo chat (`@{name}`) is called instead, with example arguments
made from its schema: a way to try a tool without a provider.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..chat.transcript import USER_HEADER, block
from ..render_ops import Ready, RenderOp, Replace
from ..tools.builtin import BUILTIN_TOOLS
from .server import LoopbackServer, RecordedRequest, Turn, openai_text, openai_tool_calls

DEMO_FILE = "codecompanion-demo.md"
DEMO_TOOLS = ("create_file", "read_file", "run_command", "insert_edit_into_file")
CONTENT = "# Demo\n\nhello world\n"

FINAL = (
    "That was the offline demo: a file was created, read, measured with a command and edited, "
    "all in its temporary folder. Configure a real provider (see `:help codecompanion-adapters`) "
    "to chat for real."
)
STOPPED = (
    "The demo stopped: the last tool call did not succeed (its result is above). Send another "
    "message to run the demo again."
)
# How a result that is not a success begins (the tool system's texts for failures).
_FAILED = re.compile(r"The user (rejected|cancelled)|The \S+ tool (failed|timed out)|Error")


def demo_file(run: int) -> str:
    """The file the `run`-th demo of a chat works on (each run has its own)."""
    return DEMO_FILE if run <= 1 else DEMO_FILE.replace(".md", f"-{run}.md")


def demo_turns(run: int = 1) -> list[Turn]:
    """The scripted answers of one demo run, one per request."""
    name = demo_file(run)
    whole = {"filepath": name, "start_line_number_base_zero": 0, "end_line_number_base_zero": -1}
    edit = {"oldText": "hello world", "newText": "hello codecompanion", "replaceAll": False}
    return [
        openai_tool_calls(
            [("demo_1", "create_file", {"filepath": name, "content": CONTENT})],
            text="This is the offline demo. I'll create a small file to work with.",
        ),
        openai_tool_calls([("demo_2", "read_file", whole)], text="Now I'll read it back."),
        openai_tool_calls(
            [("demo_3", "run_command", {"cmd": f"wc -l {name}"})],
            text="Let me count its lines with a command (in the `ask` mode you are asked first).",
        ),
        openai_tool_calls(
            [
                (
                    "demo_4",
                    "insert_edit_into_file",
                    {
                        "filepath": name,
                        "edits": [edit],
                        "explanation": "Greet the plugin",
                        "mode": "append",
                    },
                )
            ],
            text="Finally, an edit.",
        ),
        openai_text(FINAL, chunks=12),
    ]


def example_value(schema: Mapping[str, Any]) -> Any:
    """A value that fits a JSON schema: its example, default or first choice, else by type."""
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    choices = schema.get("enum")
    if isinstance(choices, list) and choices:
        return choices[0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object" or "properties" in schema:
        return example_arguments(schema)
    if kind == "array":
        items = schema.get("items")
        return [example_value(items)] if isinstance(items, Mapping) else []
    simple = {"integer": 2, "number": 1.5, "boolean": True, "null": None}
    return simple.get(str(kind), "example")


def example_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments for a function schema: every required property (every one when none is)."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    required = schema.get("required")
    names = [n for n in required if n in properties] if isinstance(required, list) else None
    return {
        name: example_value(properties[name] if isinstance(properties[name], Mapping) else {})
        for name in (names if names else list(properties))
    }


def _offered(body: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The user's own tools the request offers (not builtins): (name, parameters). A builtin
    offered with a group (`@{files}`) is not called: the demo runs its own script."""
    found = []
    for entry in body.get("tools") or []:
        function = entry.get("function") if isinstance(entry, Mapping) else None
        if isinstance(function, Mapping) and function.get("name") not in BUILTIN_TOOLS:
            parameters = function.get("parameters")
            found.append(
                (str(function.get("name")), parameters if isinstance(parameters, dict) else {})
            )
    return found


def _try_tools(tools: list[tuple[str, dict[str, Any]]], results: list[Mapping[str, Any]]) -> Turn:
    """Call each offered tool once with example arguments, then report what came back."""
    if len(results) < len(tools):
        name, parameters = tools[len(results)]
        args = example_arguments(parameters)
        text = f"Demo: calling `{name}` with example arguments from its schema: {json.dumps(args)}"
        return openai_tool_calls([(f"demo_try_{len(results) + 1}", name, args)], text=text)
    lines = [
        f"- `{name}` answered: {str(result.get('content'))[:300]}"
        for (name, _), result in zip(tools, results, strict=False)
    ]
    return openai_text(
        "The demo called your own tools with example arguments:\n" + "\n".join(lines), chunks=4
    )


def respond(request: RecordedRequest) -> Turn:
    """The demo model's answer to one request (Chat Completions), from its messages."""
    body = request.json() if request.body else {}
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    after = messages[users[-1] + 1 :] if users else []
    results = [m for m in after if m.get("role") == "tool"]
    tools = _offered(body)
    if tools:
        return _try_tools(tools, results)
    if results and _FAILED.match(str(results[-1].get("content") or "")):
        return openai_text(STOPPED, chunks=4)
    turns = demo_turns(len(users))
    return turns[min(len(results), len(turns) - 1)]


def start_demo_server() -> LoopbackServer:
    """Start the demo server in a background thread; the caller stops it."""
    server = LoopbackServer().start()
    server.set_responder(respond)
    return server


def demo_project() -> Path:
    """A fresh temporary folder for a demo chat: the demo never writes into the user's project."""
    return Path(tempfile.mkdtemp(prefix="codecompanion-demo-"))


def hint(folder: Path, project: Path | None = None) -> str:
    """What the chat buffer says before the first message of a demo chat: what it does, and
    where."""
    rules = (
        f" Rules files are read from your project `{project}` (`/rules` lists them)."
        if project is not None
        else ""
    )
    return (
        "_Offline demo (no provider is configured): type anything under `## Me` and press "
        f"<CR>. The demo model creates, reads, measures (with a command) and edits `{DEMO_FILE}` "
        f"in the temporary folder `{folder}`, never in your project.{rules} Offer a tool of "
        "your own (`@{name}`) and the demo calls it once with example arguments, in that "
        "folder too; builtins you offer (`@{files}`) are left to a real model._"
    )


def intro_ops(folder: Path, project: Path | None = None) -> list[RenderOp]:
    """A demo chat's buffer: what to type, above `## Me`."""
    return [
        Replace(lines=[""], keep_message=True),
        block(hint(folder, project)),
        Ready(text=USER_HEADER),
    ]
