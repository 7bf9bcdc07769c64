"""Rules files on a real project tree: nesting, @ imports, a loop, and files outside refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codecompanion.context.rules import Rules, RulesOptions, touched_paths
from codecompanion.messages import Message, ToolCall


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """A project with root, nested and imported rules, and a home with a user rules file."""
    home = tmp_path / "home"
    project = tmp_path / "work" / "project"
    (project / "src" / "api").mkdir(parents=True)
    (project / "docs").mkdir()
    (project / ".github").mkdir()
    (project / "AGENTS.md").write_text("Use tabs.\n")
    (project / "CLAUDE.md").write_text(
        "Style: @docs/style.md and see @docs/loop-a.md.\n"
        "Mail me at dev@example.com; `@not/an/import` is code.\n"
        "```\n@docs/in-fence.md\n```\n"
        "Never @../../secret.md please.\n"
    )
    (project / "docs" / "style.md").write_text("Short functions.\n")
    (project / "docs" / "loop-a.md").write_text("A imports @loop-b.md\n")
    (project / "docs" / "loop-b.md").write_text("B imports @loop-a.md back\n")
    (project / "docs" / "in-fence.md").write_text("never loaded\n")
    (project / ".github" / "copilot-instructions.md").write_text("Copilot says hi.\n")
    (project / "src" / "AGENTS.md").write_text("src rules\n")
    (project / "src" / "api" / "AGENTS.md").write_text("api rules\n")
    (tmp_path / "secret.md").write_text("TOP SECRET\n")
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text("I am the user; import @prefs.md\n")
    (home / ".claude" / "prefs.md").write_text("Prefer pytest.\n")
    return project, home


def labels(rules: Rules, touched: list[str] | None = None) -> list[str]:
    return [f.label for f in rules.load(touched or []).files]


def test_root_and_user_files_load_with_their_imports(tree: tuple[Path, Path]) -> None:
    project, home = tree
    loaded = Rules(project, home=home).load()
    assert [f.label for f in loaded.files] == [
        "~/.claude/CLAUDE.md",
        "~/.claude/prefs.md",
        "AGENTS.md",
        "CLAUDE.md",
        "docs/style.md",
        "docs/loop-a.md",
        "docs/loop-b.md",
        ".github/copilot-instructions.md",
    ]
    prompt = loaded.prompt()
    assert "Use tabs." in prompt and "Short functions." in prompt and "Prefer pytest." in prompt
    assert "## docs/style.md (imported by CLAUDE.md)" in prompt


def test_a_loop_of_imports_reads_each_file_once(tree: tuple[Path, Path]) -> None:
    project, home = tree
    loaded = Rules(project, home=home).load()
    assert sum(1 for f in loaded.files if f.label == "docs/loop-a.md") == 1
    assert sum(1 for f in loaded.files if f.label == "docs/loop-b.md") == 1


def test_an_import_outside_the_project_is_refused_and_never_read(tree: tuple[Path, Path]) -> None:
    project, home = tree
    loaded = Rules(project, home=home).load()
    assert "TOP SECRET" not in loaded.prompt()
    assert any(note.startswith("refused") and "secret.md" in note for note in loaded.notes)
    assert "refused" in loaded.line()


def test_a_symlink_pointing_outside_is_refused(tree: tuple[Path, Path], tmp_path: Path) -> None:
    project, home = tree
    (project / "docs" / "style.md").unlink()
    os.symlink(tmp_path / "secret.md", project / "docs" / "style.md")
    loaded = Rules(project, home=home).load()
    assert "TOP SECRET" not in loaded.prompt()
    assert any("style.md" in note for note in loaded.notes)


def test_code_and_mail_addresses_are_not_imports(tree: tuple[Path, Path]) -> None:
    project, home = tree
    prompt = Rules(project, home=home).load().prompt()
    assert "never loaded" not in prompt
    assert not any("example.com" in n for n in Rules(project, home=home).load().notes)


def test_imports_stop_at_the_depth_limit(tree: tuple[Path, Path]) -> None:
    project, home = tree
    (project / "AGENTS.md").write_text("start @d1.md\n")
    for n in range(1, 5):
        (project / f"d{n}.md").write_text(f"level {n} @d{n + 1}.md\n")
    (project / "d5.md").write_text("too deep\n")
    rules = Rules(project, RulesOptions(files=("AGENTS.md",), user_files=(), import_depth=3))
    loaded = rules.load()
    assert [f.label for f in loaded.files] == ["AGENTS.md", "d1.md", "d2.md", "d3.md"]
    assert any("d4.md" in note and "deeper" in note for note in loaded.notes)


def test_subfolder_rules_apply_once_the_chat_works_there(tree: tuple[Path, Path]) -> None:
    project, home = tree
    rules = Rules(project, home=home)
    assert "src/AGENTS.md" not in labels(rules)
    touched = labels(rules, ["src/api/handler.py"])
    assert touched.index("src/AGENTS.md") < touched.index("src/api/AGENTS.md")
    prompt = rules.load(["src/api/handler.py"]).prompt()
    assert "(applies to files under src/api/)" in prompt
    assert "src/api/AGENTS.md" not in labels(rules, ["../elsewhere/x.py"])


def test_paths_the_chat_touched_come_from_its_tool_calls() -> None:
    messages = [
        Message(role="user", content="read it"),
        Message(
            role="llm",
            tool_calls=[
                ToolCall("c1", "read_file", {"filepath": "src/api/a.py"}),
                ToolCall("c2", "grep_search", {"query": "x"}),
            ],
        ),
    ]
    assert touched_paths(messages) == ["src/api/a.py"]


def test_a_change_on_disk_is_seen_by_the_next_load(tree: tuple[Path, Path]) -> None:
    project, home = tree
    rules = Rules(project, home=home)
    before = rules.load().prompt()
    (project / "AGENTS.md").write_text("Use spaces now.\n")
    after = rules.load().prompt()
    assert before != after and "Use spaces now." in after


def test_the_list_is_a_setting_and_files_can_be_turned_off(tree: tuple[Path, Path]) -> None:
    project, home = tree
    only = Rules(project, RulesOptions(files=(".cursorrules", "AGENTS.md"), user_files=()))
    assert labels(only) == ["AGENTS.md"]
    (project / ".cursorrules").write_text("cursor rules @docs/style.md\n")
    assert labels(only) == [".cursorrules", "AGENTS.md"]  # not Markdown: no imports
    only.disabled.add("AGENTS.md")
    assert labels(only) == [".cursorrules"]
    assert labels(Rules(project, RulesOptions(enabled=False), home=home)) == []


def test_the_chat_line_names_the_loaded_files(tree: tuple[Path, Path]) -> None:
    project, home = tree
    line = Rules(project, home=home).load().line()
    assert line.startswith("Rules: ~/.claude/CLAUDE.md, AGENTS.md, CLAUDE.md")
    assert "(+4 imported)" in line
    assert "\n" not in line


def test_touched_paths_resolve_through_links_as_realpath_does(
    tree: tuple[Path, Path], tmp_path: Path
) -> None:
    # Folders are found from where each touched path really is: a linked folder, a linked
    # file, a `..`, a missing file and a path leaving the project through a link.
    project, home = tree
    os.symlink(project / "src" / "api", project / "docs" / "api-link")
    os.symlink(project / "src" / "api" / "AGENTS.md", project / "docs" / "linked.md")
    os.symlink(tmp_path, project / "docs" / "out")
    (project / "docs" / "sub").mkdir()
    rules = Rules(project, home=home)
    for raw, folders in [
        ("docs/api-link/handler.py", ["src", "src/api"]),
        ("docs/linked.md", ["src", "src/api"]),
        ("docs/sub/../style.md", ["docs"]),
        ("docs/sub", ["docs", "docs/sub"]),
        ("docs/missing.py", ["docs"]),
        ("docs/out/secret.md", []),
        (str(project / "docs" / "api-link"), ["src", "src/api"]),
    ]:
        assert rules._folders([raw]) == folders, raw
    every = ["docs/api-link/handler.py", "docs/style.md", "docs/linked.md", "docs/style.md"]
    assert rules._folders(every) == ["docs", "src", "src/api"]
