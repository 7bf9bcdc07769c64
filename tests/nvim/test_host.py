"""The host: started by the plugin, restarted after a crash, classic rplugin path, health."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pynvim
import pytest

from codecompanion.loopback.server import LoopbackServer, Turn, openai_text
from codecompanion.priority import autogroup_nice
from tests.support.nvim import INIT, Editor, nvim_binary, nvim_env, wait_for
from tests.support.sessions import at_nice

StartNvim = Callable[..., Editor]


def host_pid(ed: Editor) -> int:
    return int(ed.lua("return vim.fn.jobpid(require('codecompanion.host').channel())"))


def test_host_is_started_lazily_and_chat_works_without_setup_call(start_nvim: StartNvim) -> None:
    ed = start_nvim()
    assert ed.lua("return require('codecompanion.host').channel()") is None
    ed.open_chat()
    wait_for(lambda: ed.lua("return require('codecompanion.host').status().running"))
    ed.wait_event("CodeCompanionChatCreated")
    # Two malloc arenas, not one per thread (the checkpoints worker, the sandbox probe).
    environ = Path(f"/proc/{host_pid(ed)}/environ")
    if environ.exists() and "MALLOC_ARENA_MAX" not in os.environ:
        assert b"MALLOC_ARENA_MAX=2" in environ.read_bytes().split(b"\0")
    # and a heap that gives back what it freed (no 128 KiB spare kept above its top).
    if environ.exists() and "MALLOC_TOP_PAD_" not in os.environ:
        assert b"MALLOC_TOP_PAD_=0" in environ.read_bytes().split(b"\0")
    # Its modules' bytecode cached even where the shell says to write none: a start (and a
    # chat's first exchange) never compiles them again.
    if environ.exists():
        assert b"PYTHONDONTWRITEBYTECODE=" in environ.read_bytes().split(b"\0")


def test_killed_host_is_restarted_and_chat_restored(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(openai_text("before crash"), openai_text("after crash"))
    ed = start_nvim(config_file=config_file(""))
    bufnr = ed.open_chat()
    ed.send("one")
    ed.wait_event("CodeCompanionChatDone")
    pid = host_pid(ed)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: ed.lua("return require('codecompanion.host').channel()") is None)
    ed.send("two")
    ed.wait_event("CodeCompanionChatDone", 2)
    assert host_pid(ed) != pid
    messages = provider_server.requests[1].json()["messages"]
    assert [m["content"] for m in messages[1:]] == ["one", "before crash", "two"]
    assert "after crash" in ed.text(bufnr)
    messages_area = ed.nvim.exec_lua("return vim.fn.execute('messages')")
    assert "host restarted" in messages_area


def test_missing_python_gives_one_line_naming_the_fix(
    start_nvim: StartNvim, tmp_path: Path
) -> None:
    ed = start_nvim(setup={"python": str(tmp_path / "nope" / "python")})
    ed.open_chat()
    messages = wait_for(lambda: ed.nvim.exec_lua("return vim.fn.execute('messages')"))
    assert "make install" in messages and "codecompanion.log" in messages
    assert "Traceback" not in messages


def test_classic_rplugin_registration(tmp_path: Path, monkeypatch: object) -> None:
    env = dict(os.environ, **nvim_env(tmp_path, {"host": "rplugin"}))
    cmd = [nvim_binary(), "--headless", "-u", str(INIT), "-i", "NONE", "-n"]
    done = subprocess.run(
        [*cmd, "+UpdateRemotePlugins", "+qa!"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    manifest = (tmp_path / "rplugin.vim").read_text()
    assert "codecompanion" in manifest and "CodeCompanionHostInfo" in manifest
    probe = (
        "lua local ok, info = pcall(vim.fn.CodeCompanionHostInfo); "
        "io.stdout:write(vim.json.encode(info)); vim.cmd('qa!')"
    )
    done = subprocess.run([*cmd, "+" + probe], env=env, capture_output=True, text=True, timeout=60)
    assert '"host":"rplugin"' in done.stdout, done.stderr


def test_chat_through_the_classic_host(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    env = dict(os.environ, **nvim_env(tmp_path, {"host": "rplugin"}))
    cmd = [nvim_binary(), "--headless", "-u", str(INIT), "-i", "NONE", "-n"]
    subprocess.run([*cmd, "+UpdateRemotePlugins", "+qa!"], env=env, check=True, timeout=60)
    provider_server.enqueue(openai_text("via rplugin"))
    ed = start_nvim(setup={"host": "rplugin"}, config_file=config_file(""))
    bufnr = ed.open_chat()
    ed.send("hello")
    ed.wait_event("CodeCompanionChatDone")
    assert "via rplugin" in ed.text(bufnr)


def test_checkhealth_reports_host_and_adapter_without_the_key(
    start_nvim: StartNvim, config_file: Callable[[str], Path]
) -> None:
    ed = start_nvim(config_file=config_file(""))
    ed.nvim.command("checkhealth codecompanion")
    text = "\n".join(ed.nvim.current.buffer[:])
    assert "host alive" in text
    assert "adapter: openai" in text
    assert "httpx" in text
    assert "sk-test" not in text
    # Which command sandbox works here, or plainly that commands run unconfined.
    assert "command sandbox: landlock" in text or "commands run unconfined" in text
    assert "default mode ask" in text


def test_checkhealth_without_venv_names_the_fix(start_nvim: StartNvim, tmp_path: Path) -> None:
    ed = start_nvim(setup={"python": str(tmp_path / "missing" / "python")})
    ed.nvim.command("checkhealth codecompanion")
    text = "\n".join(ed.nvim.current.buffer[:])
    assert "make install" in text


def test_host_without_dependencies_names_the_fix(start_nvim: StartNvim, tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    ed = start_nvim(setup={"python": str(bare / "bin" / "python")})
    ed.open_chat()

    def failure() -> list[str]:
        lines = ed.nvim.exec_lua("return vim.fn.execute('messages')").splitlines()
        return [line for line in lines if "failed to start" in line]

    (line,) = wait_for(failure)
    assert "No module named" in line and "make install" in line and "codecompanion.log" in line


def test_reachable_ollama_is_the_default_without_keys(
    start_nvim: StartNvim, provider_server: LoopbackServer
) -> None:
    reply = {"model": "m", "message": {"role": "assistant", "content": "hi from ollama"}}
    provider_server.enqueue(
        Turn.ndjson([reply, {"model": "m", "done": True, "done_reason": "stop"}])
    )
    address = provider_server.url.split("://", 1)[1]
    ed = start_nvim(env={"OLLAMA_HOST": address})
    bufnr = ed.open_chat()
    ed.send("hello")
    ed.wait_event("CodeCompanionChatDone")
    assert "hi from ollama" in ed.text(bufnr)
    assert "## LLM (ollama" in ed.text(bufnr)
    assert provider_server.requests[-1].path == "/api/chat"


def test_host_takes_the_editors_cpu_priority_three_steps_lower(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Neovim in a session at nice 3, as a shell that lowered its editor's priority starts it.
    argv = at_nice(3, [nvim_binary(), "--embed", "--headless", "-u", str(INIT), "-i", "NONE", "-n"])
    for key, value in nvim_env(tmp_path, {}).items():
        monkeypatch.setenv(key, value)
    nvim = pynvim.attach("child", argv=argv)
    try:
        ed = Editor(nvim, tmp_path)
        editor = int(ed.lua("return vim.fn.getpid()"))
        assert autogroup_nice(editor) == 3
        ed.open_chat()
        wait_for(lambda: ed.lua("return require('codecompanion.host').status().running"))
        host = host_pid(ed)
        # Neovim starts its jobs in sessions of their own: the host is in another autogroup.
        assert os.getsid(host) != os.getsid(editor)
        # Three steps below the editor (setup's host_nice), so a busy machine slows the host first.
        assert wait_for(lambda: autogroup_nice(host) == 6, timeout=30)
    finally:
        with contextlib.suppress(OSError, EOFError, pynvim.NvimError):
            nvim.command("qa!")
        with contextlib.suppress(OSError, EOFError, RuntimeError):
            nvim.close()
