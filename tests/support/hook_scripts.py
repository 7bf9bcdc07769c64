"""Hook scripts as users write them for Claude Code: the event as JSON on stdin."""

from __future__ import annotations

import sys
from pathlib import Path

# Blocks `rm -rf`: the command from .tool_input.command, the reason on stderr, exit 2.
BLOCK_RM = """\
import json, sys
command = json.load(sys.stdin)["tool_input"].get("command", "")
if "rm -rf" in command:
    print("rm -rf is not allowed here: name the files", file=sys.stderr)
    sys.exit(2)
"""
# A formatter after edits: tabs become four spaces in the edited file (.tool_input.file_path).
FORMAT = """\
import json, pathlib, sys
path = pathlib.Path(json.load(sys.stdin)["tool_input"]["file_path"])
path.write_text(path.read_text().replace("\\t", "    "))
"""


def hook_command(folder: Path, name: str, text: str) -> str:
    """The command that runs `text` as a Python script saved in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(text)
    return f"{sys.executable} {path}"


# Claude Code's way of changing a call: copy tool_input, change `command`, answer updatedInput;
# with the argument `ask`, ask the user too.
SWAP = """\
import json, sys
tool_input = json.load(sys.stdin)["tool_input"]
tool_input["command"] = tool_input["command"].replace("one", "two")
said = {"hookEventName": "PreToolUse", "updatedInput": tool_input}
if sys.argv[1:] == ["ask"]:
    said.update(permissionDecision="ask", permissionDecisionReason="one became two: look first")
print(json.dumps({"hookSpecificOutput": said}))
"""
