"""Neovim's real TUI in tmux with the stock vim.ui.select: keys in, the screen out."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from codecompanion.loopback.server import LoopbackServer
from tests.support.nvim import INIT, nvim_binary, nvim_env, wait_for

HAVE_TMUX = shutil.which("tmux") is not None


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


class Tui:
    """One Neovim in a tmux session of its own (closed by `close`)."""

    def __init__(self, tmp: Path, width: int = 100, height: int = 30) -> None:
        self.tmp = tmp
        self.session = f"cc-{uuid.uuid4().hex[:8]}"
        # Sockets live in /tmp: a test's own folder can be longer than a socket path may be.
        self.socket = f"/tmp/{self.session}.tmux"
        self.listen = f"/tmp/{self.session}.nvim"
        self.width, self.height = width, height
        self.server_pid = 0  # Neovim's server process, once started

    def tmux(self, *args: str) -> str:
        """Run a tmux command on this session's server."""
        return subprocess.run(
            ["tmux", "-S", self.socket, *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=20,
        ).stdout

    def start(
        self,
        setup: dict[str, Any] | None = None,
        config_file: Path | None = None,
        cwd: Path | None = None,
        stock_ui: bool = True,
        extra_env: dict[str, str] | None = None,
        init: Path = INIT,
    ) -> Tui:
        """Start Neovim with the plugin (and, by default, Neovim's own vim.ui.select); `init`
        is the test init unless given (`make run`'s is scripts/run_init.lua)."""
        env = nvim_env(self.tmp, setup or {}, config_file)
        env["CC_TEST_STOCK_UI"] = "1" if stock_ui else ""
        env["CODECOMPANION_PYTHON"] = sys.executable  # what `make run` passes its init
        env.update(extra_env or {})
        exports = " ".join(f"{k}={_quote(v)}" for k, v in env.items())
        nvim = f"{nvim_binary()} -u {init} -i NONE -n --listen {self.listen}"
        command = f"cd {_quote(str(cwd or self.tmp))} && env {exports} {nvim}"
        size = ("-x", str(self.width), "-y", str(self.height))
        self.tmux("new-session", "-d", "-s", self.session, *size, command)
        wait_for(lambda: "~" in self.screen() or "[No Name]" in self.screen(), 15)
        self.server_pid = int(self.lua("return vim.fn.getpid()"))
        return self

    def screen(self) -> str:
        """The visible screen, one string."""
        return self.tmux("capture-pane", "-p", "-t", self.session)

    def keys(self, *keys: str) -> None:
        """Send keys (tmux names: Enter, Escape, C-w …)."""
        self.tmux("send-keys", "-t", self.session, *keys)

    def command(self, text: str) -> None:
        """Type an Ex command and run it."""
        self.keys("Escape")
        self.keys(":" + text, "Enter")

    def wait_screen(self, *needles: str, timeout: float = 15) -> str:
        """Wait until every needle is on the screen; the screen."""

        def shown() -> str | None:
            text = self.screen()
            return text if all(n in text for n in needles) else None

        try:
            return wait_for(shown, timeout)
        except TimeoutError as exc:
            raise TimeoutError(f"{needles} not on screen:\n{self.screen()}") from exc

    def lua(self, code: str) -> Any:
        """Run Lua in the TUI's Neovim (a separate `nvim --remote-expr`) and return its value."""
        literal = "'" + code.replace("'", "''") + "'"
        run = "(function(v) return vim.json.encode(v == nil and vim.NIL or v) end)"
        expr = f"luaeval('{run}(assert(loadstring(_A))())', {literal})"
        out = subprocess.run(
            [nvim_binary(), "--server", self.listen, "--remote-expr", expr],
            capture_output=True,
            text=True,
            check=True,
            timeout=20,
        ).stdout
        return json.loads(out)

    def close(self) -> None:
        """Kill the session's tmux server and Neovim in it: its server process too, which a
        prompt waiting for keys (a question left open) keeps alive once the terminal is gone."""
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=20)
        if self.server_pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.server_pid, signal.SIGKILL)
        Path(self.socket).unlink(missing_ok=True)
        Path(self.listen).unlink(missing_ok=True)


def write_config(tmp_path: Path, server: LoopbackServer, extra: str = "") -> Path:
    path = tmp_path / "codecompanion.py"
    path.write_text(
        "adapter = 'openai'\n"
        f"adapters = {{'openai': {{'url': '{server.url}/v1', 'api_key': 'k', 'model': 'm'}}}}\n"
        + extra
    )
    return path


def layout(screen: Tui) -> list[object]:
    """Windows of the tab (buffer names) and which one has the cursor."""
    return list(
        screen.lua(
            "local r = {} for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do "
            "local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)) "
            "table.insert(r, vim.fn.fnamemodify(name, ':t') "
            ".. (w == vim.api.nvim_get_current_win() and '*' or '')) end return r"
        )
    )
