"""Performance bench: real headless Neovim, the loopback provider, and the measured figures.

`make bench` (`python -m bench`) runs every scenario, prints median/min/max per figure with its
target, and writes bench/results.json.
"""

from __future__ import annotations

from .figures import SPECS, Results, Spec

__all__ = ["SPECS", "Results", "Spec"]
