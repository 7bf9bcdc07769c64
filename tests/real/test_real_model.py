"""End-to-end scenarios on real Neovim against a real local model (temperature 0).

Each scenario opens a chat with the plugin configured as `openai_compatible` at the model's
URL, sends what a user would type, answers the approval prompts, and checks what happened on
disk and in the saved chat. The model is small: a scenario it cannot do fails with what it
answered, so the summary shows where it stands.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.e2e import CALCULATOR
from tests.support.nvim import Editor
from tests.support.real_model import TURN_TIMEOUT, config

StartNvim = Callable[..., Editor]
pytestmark = [pytest.mark.nvim, pytest.mark.timeout(1800)]


def chat_turn(
    start_nvim: StartNvim,
    tmp_path: Path,
    text: str,
    config_text: str,
    *,
    yolo: bool = False,
    answers: int = 4,
) -> tuple[Editor, dict[str, Any]]:
    """Send `text` in a new chat in `tmp_path/project`; the editor and the saved chat."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    path = tmp_path / "codecompanion.py"
    path.write_text(config_text)
    ed = start_nvim(config_file=path, cwd=project, setup={"yolo": yolo})
    ed.open_chat()
    # Approvals (and the question after the automatic rounds) get these answers, in order.
    ed.answer(*(["approve"] * answers + ["No"]))
    ed.send(text)
    ed.wait_event("CodeCompanionChatDone", timeout=TURN_TIMEOUT)
    saved = sorted((tmp_path / "data" / "nvim" / "codecompanion" / "chats").glob("*.json"))
    assert saved, "the chat was not saved"
    return ed, json.loads(saved[-1].read_text())


def results(chat: dict[str, Any], tool: str) -> list[dict[str, Any]]:
    """The saved results of calls to `tool`."""
    return [
        m
        for m in chat["messages"]
        if m["role"] == "tool" and (m.get("tools") or {}).get("name") == tool
    ]


def how_called(chat: dict[str, Any]) -> str:
    """native, recovered or prompt: how the answer's calls were made."""
    kinds = {
        (m.get("extra") or {}).get("text_calls") or "native"
        for m in chat["messages"]
        if m["role"] == "llm" and (m.get("tools") or {}).get("calls")
    }
    return "+".join(sorted(kinds)) or "no call"


def answer_text(chat: dict[str, Any]) -> str:
    """Everything the model wrote as text."""
    return "\n".join(m["content"] or "" for m in chat["messages"] if m["role"] == "llm")


def brief(chat: dict[str, Any]) -> str:
    text = " ".join(answer_text(chat).split())
    return text[:160]


CALC_TEXT = "Use the @{calculator} tool for 100*50"


def _calculated(chat: dict[str, Any]) -> bool:
    return any("5000" in (r["content"] or "") for r in results(chat, "calculator"))


def test_calculator_natively(
    start_nvim: StartNvim, tmp_path: Path, model_url: str, scenario: dict[str, Any]
) -> None:
    _ed, chat = chat_turn(
        start_nvim, tmp_path, CALC_TEXT, config(model_url, "native", False, CALCULATOR)
    )
    scenario["note"] = f"{how_called(chat)}; answer: {brief(chat)}"
    if not _calculated(chat):
        pytest.xfail("the model wrote its call as text; recovery is off in this scenario")


def test_calculator_by_recovery(
    start_nvim: StartNvim, tmp_path: Path, model_url: str, scenario: dict[str, Any]
) -> None:
    ed, chat = chat_turn(start_nvim, tmp_path, CALC_TEXT, config(model_url, extra=CALCULATOR))
    scenario["note"] = how_called(chat)
    assert _calculated(chat), brief(chat)
    assert how_called(chat) in ("recovered", "native")
    assert "**calculator**" in ed.text()
    assert '"name": "calculator"' not in ed.text()  # the block is folded into the tool line


def test_calculator_in_prompt_mode(
    start_nvim: StartNvim, tmp_path: Path, model_url: str, scenario: dict[str, Any]
) -> None:
    ed, chat = chat_turn(
        start_nvim, tmp_path, CALC_TEXT, config(model_url, "prompt", extra=CALCULATOR)
    )
    scenario["note"] = how_called(chat)
    assert _calculated(chat), brief(chat)
    assert how_called(chat) == "prompt"
    assert "**calculator**" in ed.text() and "<name>calculator</name>" not in ed.text()


@pytest.mark.parametrize("mode", ["auto", "prompt"])
def test_reading_a_file(
    start_nvim: StartNvim, tmp_path: Path, model_url: str, scenario: dict[str, Any], mode: str
) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text("The code word is PELICAN.\n")
    text = "Use the @{read_file} tool to read notes.txt and tell me the code word."
    _ed, chat = chat_turn(start_nvim, tmp_path, text, config(model_url, mode))
    scenario["note"] = how_called(chat)
    assert any("PELICAN" in (r["content"] or "") for r in results(chat, "read_file")), brief(chat)
    finals = [m["content"] for m in chat["messages"] if m["role"] == "llm" and m["content"]]
    assert finals and "PELICAN" in finals[-1].upper(), brief(chat) or chat["messages"][-1]


def test_editing_a_file(
    start_nvim: StartNvim, tmp_path: Path, model_url: str, scenario: dict[str, Any]
) -> None:
    (tmp_path / "project").mkdir()
    target = tmp_path / "project" / "greet.py"
    target.write_text('print("Hello")\n')
    text = "Use the @{insert_edit_into_file} tool to replace Hello with Goodbye in greet.py."
    _ed, chat = chat_turn(start_nvim, tmp_path, text, config(model_url), yolo=True)
    scenario["note"] = how_called(chat)
    assert target.read_text() == 'print("Goodbye")\n', brief(chat)


def test_running_a_command(
    start_nvim: StartNvim, tmp_path: Path, model_url: str, scenario: dict[str, Any]
) -> None:
    text = "Use the @{run_command} tool to run the command: echo real-model-ok"
    _ed, chat = chat_turn(start_nvim, tmp_path, text, config(model_url))
    scenario["note"] = how_called(chat)
    outputs = [r["content"] or "" for r in results(chat, "run_command")]
    assert any("real-model-ok" in o and "exit code 0" in o for o in outputs), brief(chat)


def test_read_then_write(
    start_nvim: StartNvim, tmp_path: Path, model_url: str, scenario: dict[str, Any]
) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "input.txt").write_text("alpha beta\n")
    text = (
        "First use the @{read_file} tool to read input.txt. Then use the @{create_file} tool "
        "to create output.txt containing that text in upper case."
    )
    _ed, chat = chat_turn(start_nvim, tmp_path, text, config(model_url), yolo=True)
    scenario["note"] = how_called(chat)
    output = tmp_path / "project" / "output.txt"
    assert results(chat, "read_file"), brief(chat)
    assert output.exists(), brief(chat)
    assert output.read_text().strip() == "ALPHA BETA"


@pytest.mark.parametrize("mode", ["auto", "prompt"])
def test_code_runner(
    start_nvim: StartNvim, tmp_path: Path, model_url: str, scenario: dict[str, Any], mode: str
) -> None:
    text = (
        "Use the @{code_runner} tool to run Python code that prints the sum of the "
        "numbers from 1 to 100."
    )
    _ed, chat = chat_turn(start_nvim, tmp_path, text, config(model_url, mode))
    scenario["note"] = how_called(chat)
    outputs = [r["content"] or "" for r in results(chat, "code_runner")]
    assert any("5050" in o for o in outputs), brief(chat)
