"""The offline demo provider: a loopback server replaying a short scripted conversation.

It is used when no provider is configured, so a fresh install shows the whole tool loop:
the model creates and reads a file, asks to run a command (the approval prompt), and edits it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from .loopback import LoopbackServer, Turn, openai_text, openai_tool_calls
from .ports import RenderOp
from .transcript import USER_HEADER, block

DEMO_FILE = "codecompanion-demo.md"
DEMO_TOOLS = ("create_file", "read_file", "run_command", "insert_edit_into_file")
CONTENT = "# Demo\n\nhello world\n"

FINAL = (
    "That was the offline demo: a file was created, read, measured with a command you approved, "
    "and edited. Configure a real provider (see `:help codecompanion-adapters`) to chat for real."
)


def demo_turns() -> list[Turn]:
    """The scripted answers, one per request."""
    return [
        openai_tool_calls(
            [("demo_1", "create_file", {"filepath": DEMO_FILE, "content": CONTENT})],
            text="This is the offline demo. I'll create a small file to work with.",
        ),
        openai_tool_calls(
            [
                (
                    "demo_2",
                    "read_file",
                    {
                        "filepath": DEMO_FILE,
                        "start_line_number_base_zero": 0,
                        "end_line_number_base_zero": -1,
                    },
                )
            ],
            text="Now I'll read it back.",
        ),
        openai_tool_calls(
            [("demo_3", "run_command", {"cmd": f"wc -l {DEMO_FILE}"})],
            text="Let me count its lines with a command (you will be asked first).",
        ),
        openai_tool_calls(
            [
                (
                    "demo_4",
                    "insert_edit_into_file",
                    {
                        "filepath": DEMO_FILE,
                        "edits": [
                            {
                                "oldText": "hello world",
                                "newText": "hello codecompanion",
                                "replaceAll": False,
                            }
                        ],
                        "explanation": "Greet the plugin",
                        "mode": "append",
                    },
                )
            ],
            text="Finally, an edit.",
        ),
        openai_text(FINAL, chunks=12),
    ]


OVER = (
    "The demo is over: configure a provider to chat for real. "
    "Open a new chat (or clear this one with gx) to see the demo again."
)


def start_demo_server() -> LoopbackServer:
    """Start the demo server in a background thread; the caller stops it."""
    server = LoopbackServer().start()
    server.set_default(openai_text(OVER, chunks=4))
    return server


def rewind(server: LoopbackServer) -> None:
    """Script the demo again for a new demo chat (unless one is still running it)."""
    if server.pending() == 0:
        server.enqueue(*demo_turns())


def demo_project() -> Path:
    """A fresh temporary folder for a demo chat: the demo never writes into the user's project."""
    return Path(tempfile.mkdtemp(prefix="codecompanion-demo-"))


def hint(folder: Path) -> str:
    """What the chat buffer says before the first message of a demo chat."""
    return (
        "_Offline demo (no provider is configured): type anything under `## Me` and press "
        "<CR>. The model will create, read, measure (with your approval) and edit "
        f"`{DEMO_FILE}` in the temporary folder `{folder}`._"
    )


def intro_ops(folder: Path) -> list[RenderOp]:
    """A demo chat's buffer: what to type, above `## Me`."""
    return [
        RenderOp("replace", {"lines": [""]}),
        block(hint(folder)),
        RenderOp("ready", {"text": USER_HEADER}),
    ]
