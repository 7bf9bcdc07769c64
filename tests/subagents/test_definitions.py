"""Subagent definitions: Claude Code's files and the config file's table."""

from __future__ import annotations

from pathlib import Path

from codecompanion.config import load_config
from codecompanion.subagents import GENERAL, discover
from codecompanion.subagents.parts import narrower


def _write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text)


def test_claude_code_definitions_are_read_with_our_tool_names(tmp_path: Path) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    _write(
        root / ".claude/agents",
        "reviewer",
        "---\nname: reviewer\ndescription: Reviews diffs.\ntools: Read, Grep, Bash, Task\n"
        "model: sonnet\n---\nYou review code.\n",
    )
    _write(root / ".agents/agents", "bad", "---\nname: two words\ndescription: x\n---\n")
    _write(home / ".claude/agents", "reviewer", "---\nname: reviewer\ndescription: mine\n---\n")
    _write(
        home / ".claude/agents",
        "local",
        "---\nname: local\ndescription: Cheap.\n"
        "adapter: ollama\nmodel: qwen2.5-coder\nmode: ask\n---\n",
    )
    configured = {"docs": {"description": "Writes docs.", "tools": ["read_file"], "prompt": "Doc."}}
    found = discover(root, configured, home)
    assert [a.name for a in found.agents] == ["docs", "reviewer", "local", "general"]
    reviewer = found.get("reviewer")
    assert reviewer is not None
    assert reviewer.tools == ("read_file", "grep_search", "run_command")  # never `agent`
    assert reviewer.model is None and reviewer.prompt == "You review code."
    local = found.get("local")
    assert local is not None and (local.adapter, local.model, local.mode) == (
        "ollama",
        "qwen2.5-coder",
        "ask",
    )
    assert found.get("docs").tools == ("read_file",)  # type: ignore[union-attr]
    assert found.problems == [
        "skipped .agents/agents/bad.md: `name` 'two words' must be one word",
        "skipped ~/.claude/agents/reviewer.md: another subagent is called reviewer",
    ]
    assert GENERAL.tools == ("read_file", "file_search", "grep_search", "get_changed_files")


def test_a_subagents_mode_is_never_wider_than_its_parents() -> None:
    assert narrower("ask", "yolo") == "ask"
    assert narrower("sandboxed", "edits") == "edits"
    assert narrower("edits", None) == "edits"


def test_the_config_file_checks_agents_and_their_options(tmp_path: Path) -> None:
    path = tmp_path / "codecompanion.py"
    path.write_text(
        "agents = {'ok': {'description': 'Fine.'}, 'bad': {'mode': 'wild'}}\n"
        "opts = {'agents': {'max_concurrent': 0}}\n"
    )
    config = load_config(path)
    assert config.error is not None and "agents['bad']" in config.error
    assert "(and 1 more)" in config.error
    assert "ok" in config.agents


def test_the_documented_definition_is_read_as_written(tmp_path: Path) -> None:
    import re

    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text()
    section = readme[readme.index("**Subagents.**") :]
    texts = [re.findall(r"```markdown\n(.*?)```", section, re.S)[0]]
    help_text = (root / "doc" / "codecompanion.txt").read_text()
    block = re.findall(
        r">markdown\n(.*?)\n<", help_text[help_text.index("*codecompanion-subagents*") :], re.S
    )[0]
    texts.append("\n".join(line[4:] for line in block.splitlines()))
    for text in texts:
        _write(tmp_path / ".claude/agents", "reader", text)
        found = discover(tmp_path, {}, tmp_path / "home")
        reader = found.get("reader")
        assert reader is not None and not found.problems
        assert reader.tools == ("read_file", "grep_search", "file_search")
        assert reader.prompt.startswith("Read what the task names")


def test_the_documented_config_loads_without_a_problem(tmp_path: Path) -> None:
    import re
    import textwrap

    root = Path(__file__).resolve().parents[2]
    help_text = (root / "doc" / "codecompanion.txt").read_text()
    section = help_text[help_text.index("*codecompanion-subagents*") :]
    block = re.findall(r">python\n(.*?)\n<", section, re.S)[0]
    path = tmp_path / "codecompanion.py"
    path.write_text(textwrap.dedent(block))
    config = load_config(path)
    assert config.error is None
    local = discover(tmp_path, config.agents, tmp_path / "home").get("local-reader")
    assert local is not None and (local.adapter, local.model) == ("ollama", "qwen2.5-coder:7b")
