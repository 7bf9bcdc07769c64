"""What the host loads for a chat without tools, completion cache included: nothing it only needs
to run tools, the demo, a proxy (httpx), prompt-mode XML, checkpoints or the command sandbox
(each costs megabytes of the host's memory)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "rplugin" / "python3"

SCRIPT = """
import json, sys
from codecompanion.nvim.__main__ import skip_httpx_cli
skip_httpx_cli()
import codecompanion.nvim.app
from codecompanion.chat.chat import Chat
from codecompanion.workspace import HostOptions, Workspace
workspace = Workspace(HostOptions(config_file=sys.argv[1], data_dir=sys.argv[2]))
adapter, notice = workspace.make_adapter("openai_compatible")
assert notice is None, notice
from codecompanion.nvim.completion import completion_payload
assert completion_payload(workspace)["items"]  # the host fills Lua's completion cache at start
print(json.dumps(sorted(sys.modules)))
"""

NOT_FOR_A_PLAIN_CHAT = (
    "jsonschema",
    "json_repair",
    "rapidfuzz",
    "re2",
    "click",
    "rich",
    "pygments",
    "http.server",
    "httpx",
    "http.client",
    "urllib.request",
    "xml.etree.ElementTree",
    "xml.sax",
    "importlib.metadata",
    "codecompanion.adapters.anthropic",
    "shutil",
    "tempfile",
    "difflib",
    "hashlib",
    # Checkpoints load with the first chat that keeps them (their worker thread with its
    # first capture), rewinds when the user asks for one; the sandbox's probe and launcher
    # (ctypes, system calls) with the first command; each chat keeps a CommandSandbox.
    "codecompanion.checkpoints",
    "codecompanion.checkpoints.manager",
    "codecompanion.checkpoints.rewind",
    "codecompanion.nvim.rewind",
    "concurrent.futures.thread",
    "codecompanion.sandbox.probe",
    "codecompanion.sandbox.launcher",
    "ctypes",
    # The completion menu lists the builtin tools from a table; their modules load when a
    # request offers tools.
    "codecompanion.tools.builtin.read_file",
    "codecompanion.tools.builtin.run_command",
    "codecompanion.tools.builtin.insert_edit_into_file",
    "codecompanion.tools.builtin.fetch_webpage",
    "codecompanion.tools.builtin._support",
)


def test_a_plain_chat_loads_no_tool_demo_or_cli_modules(tmp_path: Path) -> None:
    config = tmp_path / "config.py"
    config.write_text(
        "adapters = {'openai_compatible': {'url': 'http://127.0.0.1:9/v1', 'model': 'm'}}\n"
    )
    env = {
        "PYTHONPATH": str(PACKAGE_ROOT),
        "HOME": str(tmp_path),
        "CODECOMPANION_CONFIG": str(config),
    }
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(config), str(tmp_path / "data")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(json.loads(out.stdout.splitlines()[-1]))
    assert {
        "codecompanion.transport.fast_http",
        "codecompanion.chat.chat",
    } <= loaded  # the script did load a chat
    assert sorted(loaded & set(NOT_FOR_A_PLAIN_CHAT)) == []
