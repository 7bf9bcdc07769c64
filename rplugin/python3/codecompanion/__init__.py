"""codecompanion: an LLM chat buffer for Neovim whose model calls tools under your control.

Neovim's classic python3 host imports this package and looks for the plugin class, so it is
re-exported here when pynvim is importable; the core itself never needs pynvim.
"""

from __future__ import annotations

import importlib.util

from .tools.compat.decorator import tool
from .tools.compat.table import Tool

__all__ = ["Tool", "tool"]

if importlib.util.find_spec("pynvim") is not None:  # the classic host path
    from .nvim.rplugin import CodeCompanionRplugin

    __all__ += ["CodeCompanionRplugin"]
