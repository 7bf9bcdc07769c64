"""The real-agent tier: real ACP agents (installed by `make agents`) in real Neovim, offline.

Run with `make test-agents`: it installs the agents in folders of their own (.venv-agents/) and runs
these tests in a network namespace with only loopback (`unshare -rn`), where the agents' model is
a scripted OpenAI-compatible server on 127.0.0.1: no connection can leave the machine. Without
CODECOMPANION_AGENTS=1 (set by `make test-agents`) every test skips with a line saying why.
"""

from __future__ import annotations

from tests.support.agent_tier import model  # noqa: F401  (the scripted model on 127.0.0.1)
from tests.support.nvim_fixtures import start_nvim  # noqa: F401  (the real-Neovim fixture)
