"""The classic remote-plugin entry (`:UpdateRemotePlugins`): a thin shell over the same App."""

from __future__ import annotations

from typing import Any

import pynvim

from ..outside import Json
from .logsetup import setup_logging


@pynvim.plugin
class CodeCompanionRplugin:
    """Registered by Neovim's python3 host; forwards to the App the job host uses."""

    def __init__(self, nvim: pynvim.Nvim) -> None:
        self.nvim = nvim
        self._app: Any = None

    def _get_app(self) -> Any:
        # Created on first use: no side effects at import (the host imports every rplugin).
        if self._app is None:
            setup_logging()
            from .app import App
            from .bridge import Bridge

            self._app = App(Bridge(self.nvim))
        return self._app

    @pynvim.rpc_export("codecompanion")  # type: ignore[untyped-decorator]
    def on_notification(self, method: str, args: Json = None) -> None:
        """Lua's notifications (same protocol as the job host; questions come as `request`)."""
        self._get_app().on_notification(str(method), args or {})

    @pynvim.function("CodeCompanionHostInfo", sync=True)  # type: ignore[untyped-decorator]
    def host_info(self, args: list[Any]) -> dict[str, Any]:
        """Which host serves codecompanion (for :checkhealth and the smoke test)."""
        return {"host": "rplugin", "channel": self.nvim.channel_id}
