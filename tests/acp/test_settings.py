"""The `acp` setting: presets, overrides, agents of one's own, one line per mistake."""

from __future__ import annotations

from pathlib import Path

from codecompanion.acp.process import agent_env
from codecompanion.acp.settings import PRESETS, agents, parse_agent
from codecompanion.config import load_config


def test_a_preset_is_an_agent_and_the_config_overrides_its_keys() -> None:
    found = agents({"claude_code": {"env": {"CLAUDE_CODE_OAUTH_TOKEN": "cmd:pass cc"}}})
    assert set(PRESETS) <= set(found)
    claude = found["claude_code"]
    assert claude.cmd == ("claude-code-acp",)
    assert claude.env == {"CLAUDE_CODE_OAUTH_TOKEN": "cmd:pass cc"}
    assert "cmd:pass cc" not in repr(claude)  # values never shown


def test_an_agent_of_ones_own_needs_a_command() -> None:
    mine = parse_agent("mine", {"cmd": "~/bin/agent --acp", "pass_env": ["KEY"]})
    assert mine.cmd[0].endswith("/bin/agent") and mine.cmd[1:] == ("--acp",)
    assert mine.pass_env == ("KEY",)


def test_mistakes_in_the_config_file_are_one_line_each(tmp_path: Path) -> None:
    path = tmp_path / "codecompanion.py"
    path.write_text(
        "acp = {'good': {'cmd': ['x']}, 'nocmd': {}, 'odd': {'cmd': ['x'], 'colour': 1}}\n"
    )
    config = load_config(path)
    assert config.error is not None
    assert config.error.startswith(f"{path}:1: acp: agent nocmd: set cmd")
    assert "(and 1 more)" in config.error
    assert set(config.acp) == {"good"}


def test_the_agent_gets_a_short_environment_plus_what_it_is_given() -> None:
    inherited = {"PATH": "/bin", "HOME": "/h", "SECRET_TOKEN": "s", "MY_KEY": "k"}
    env = agent_env(inherited, ("MY_KEY", "MISSING"), {"SET": "v"})
    assert env == {"PATH": "/bin", "HOME": "/h", "MY_KEY": "k", "SET": "v"}
