"""The offline demo: run again in the same chat and after `gx` (its own file each time, its
intro back), honest when a step fails, and a way to try a tool of your own without a provider."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.demo import example_arguments
from tests.support.e2e import CALCULATOR
from tests.support.nvim import Editor, wait_for

StartNvim = Callable[..., Editor]


def folder_of(text: str) -> Path:
    return Path(text.split("temporary folder `")[1].split("`")[0])


def test_demo_runs_again_in_the_same_chat_and_after_clear(
    start_nvim: StartNvim, tmp_path: Path
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    ed = start_nvim(cwd=tmp_path, env={"TMPDIR": str(temp)})
    ed.nvim.command("set columns=300")
    bufnr = ed.open_chat()
    first = folder_of(wait_for(lambda: "Offline demo" in ed.text(bufnr) and ed.text(bufnr)))
    for run in (1, 2):
        ed.answer("Accept all", "approve", "Accept all")
        ed.send("show me")
        ed.wait_event("CodeCompanionChatDone", count=run, timeout=30)
    assert (first / "codecompanion-demo.md").read_text().endswith("hello codecompanion\n")
    assert (first / "codecompanion-demo-2.md").read_text().endswith("hello codecompanion\n")
    text = ed.text(bufnr)
    assert text.count("That was the offline demo") == 2 and "already exists" not in text
    # gx: the intro is back, in a new folder, and the demo runs whole again.
    ed.nvim.input("gx")
    cleared = lambda: "That was" not in ed.text(bufnr) and ed.text(bufnr)  # noqa: E731
    again = wait_for(lambda: "Offline demo" in ed.text(bufnr) and cleared())
    second = folder_of(again)
    assert second != first
    ed.answer("Accept all", "approve", "Accept all")
    ed.send("again")
    ed.wait_event("CodeCompanionChatDone", count=3, timeout=30)
    assert (second / "codecompanion-demo.md").read_text().endswith("hello codecompanion\n")
    assert "That was the offline demo" in ed.text(bufnr)


def test_demo_says_it_stopped_when_a_step_is_rejected(
    start_nvim: StartNvim, tmp_path: Path
) -> None:
    ed = start_nvim(cwd=tmp_path, env={"TMPDIR": str(tmp_path)})
    bufnr = ed.open_chat()
    wait_for(lambda: "Offline demo" in ed.text(bufnr))
    ed.answer("Accept all", "reject")  # the command is rejected
    ed.send("show me")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    text = ed.text(bufnr)
    assert "The demo stopped" in text and "That was the offline demo" not in text


def test_demo_calls_your_own_tool_with_example_arguments(
    start_nvim: StartNvim, tmp_path: Path
) -> None:
    config = tmp_path / "codecompanion.py"
    config.write_text(CALCULATOR)  # tools, and no provider: the demo
    ed = start_nvim(config_file=config, cwd=tmp_path, env={"TMPDIR": str(tmp_path)})
    bufnr = ed.open_chat()
    wait_for(lambda: "Offline demo" in ed.text(bufnr))
    ed.answer("approve")
    ed.send("@{calculator} try it")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    text = ed.text(bufnr)
    assert '{"num1": 2, "num2": 2, "operation": "add"}' in text
    assert "`calculator` answered: 4" in text
    prompts = [str(p["prompt"]) for p in ed.prompts()]
    assert any("Perform the calculation `2 add 2`?" in p for p in prompts)


def test_demo_says_where_it_works_reads_the_projects_rules_and_leaves_builtins_alone(
    start_nvim: StartNvim, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Answer in haiku.\n")
    (project / "keep.txt").write_text("mine\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    ed = start_nvim(cwd=project, env={"TMPDIR": str(temp)})
    ed.nvim.command("set columns=400")
    bufnr = ed.open_chat()
    intro = wait_for(lambda: "Offline demo" in ed.text(bufnr) and ed.text(bufnr))
    folder = folder_of(intro)
    assert "never in your project" in intro
    assert f"Rules files are read from your project `{project}`" in intro
    ed.answer("Accept all", "approve", "Accept all")
    ed.send("@{files} show me")  # the group offers delete_file: the demo does not call it
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    text = ed.text(bufnr)
    assert "> Rules: AGENTS.md" in text
    prompts = " ".join(str(p["prompt"]) for p in ed.prompts())
    assert "elete" not in prompts and "your own tools" not in text
    assert "a command you approved" not in text and "That was the offline demo" in text
    assert (folder / "codecompanion-demo.md").exists() and (project / "keep.txt").exists()
    assert not (project / "codecompanion-demo.md").exists()


def test_example_arguments_follow_the_schema() -> None:
    schema = {
        "type": "object",
        "required": ["path", "count", "mode", "tags", "opts"],
        "properties": {
            "path": {"type": "string", "examples": ["src/a.py"]},
            "count": {"type": "integer"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}},
            "unused": {"type": "number"},
        },
    }
    assert example_arguments(schema) == {
        "path": "src/a.py",
        "count": 2,
        "mode": "fast",
        "tags": ["example"],
        "opts": {"deep": True},
    }
    assert example_arguments({"properties": {"x": {"type": ["number", "null"]}}}) == {"x": 1.5}


def test_text_typed_before_the_demo_intro_arrives_is_kept(
    start_nvim: StartNvim, tmp_path: Path
) -> None:
    ed = start_nvim(cwd=tmp_path, env={"TMPDIR": str(tmp_path)})
    ed.nvim.command("CodeCompanionChat")  # the host starts now: the intro comes later
    ed.nvim.current.buffer.append("typed early")
    bufnr = ed.nvim.current.buffer.number
    text = wait_for(lambda: "Offline demo" in ed.text(bufnr) and ed.text(bufnr))
    assert text.rstrip().endswith("## Me\n\ntyped early"), text
