"""What the real host imports for a plain text chat: none of the tool machinery, the schema
library or what only some chats use; once a chat offers a tool, the modules of a first tool
round (nvim/preload.py), before any call. The host's `sys.modules` is read through a
`sitecustomize` on its PYTHONPATH that writes them to a file when the host gets SIGUSR1."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text
from tests.support.nvim import Editor, wait_for

StartNvim = Callable[..., Editor]

NOT_FOR_A_PLAIN_CHAT = (
    "jsonschema",  # tool arguments: only those not plainly valid
    "pydantic",  # the ACP SDK's, for an external agent's chat
    "acp",
    "mcp",  # MCP servers, when the config names some
    "yaml",  # front matter of skills and agent files
    "json_repair",  # a model's broken JSON
    "httpx",  # a proxy (its CLI module's stand-in, httpx._main, is there from the start)
    "codecompanion.tools.builtin.read_file",  # the registry loads builtins when a tool is looked up
    "codecompanion.hooks.run",  # a chat's hooks, when the config has some
    "codecompanion.tools.runtime.shell_rules",  # a command's approval rules
    "codecompanion.sandbox.launcher",  # a first tool round's (preload.MODULES)
    "codecompanion.sandbox.aftermath",
    "codecompanion.after_edit.diagnostics",
    "codecompanion.after_edit.runs",  # the project's checks, made at a chat's first edit
    "codecompanion.after_edit.trust",
)

SITECUSTOMIZE = """
import json, os, signal, sys

def _dump(signum, frame):
    path = os.environ["CC_TEST_MODULES"]
    with open(path + ".part", "w") as out:
        json.dump(sorted(sys.modules), out)
    os.replace(path + ".part", path)

if os.environ.get("CC_TEST_MODULES"):
    signal.signal(signal.SIGUSR1, _dump)
"""


def host_modules(ed: Editor, out: Path) -> set[str]:
    """The host's `sys.modules` now."""
    out.unlink(missing_ok=True)
    pid = int(ed.lua("return vim.fn.jobpid(require('codecompanion.host').channel())"))
    os.kill(pid, signal.SIGUSR1)
    wait_for(out.exists)
    return set(json.loads(out.read_text()))


def test_a_plain_chat_loads_no_tool_machinery_until_a_tool_is_offered(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    out = tmp_path / "modules.json"
    provider_server.enqueue(openai_text("plain answer"), openai_text("no call"))
    ed = start_nvim(
        setup={"start": "deferred"},
        config_file=config_file(""),
        env={"PYTHONPATH": str(site), "CC_TEST_MODULES": str(out)},
    )
    ed.open_chat()
    ed.send("hello")
    ed.wait_event("CodeCompanionChatDone")
    loaded = host_modules(ed, out)
    assert "codecompanion.chat.chat" in loaded  # the chat did run in this host
    assert [name for name in NOT_FOR_A_PLAIN_CHAT if name in loaded] == []
    ed.send("@{read_file} which files are there?")
    ed.wait_event("CodeCompanionChatDone", 2)
    wait_for(lambda: "codecompanion.sandbox.launcher" in host_modules(ed, out))
    loaded = host_modules(ed, out)
    assert "codecompanion.tools.builtin.read_file" in loaded
    assert "jsonschema" not in loaded
