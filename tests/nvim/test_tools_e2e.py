"""Tools end to end on real Neovim: the calculator example, approvals, edits of loaded buffers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.e2e import CALCULATOR, StartNvim, run_command_turn
from tests.support.nvim import ProjectNvim, wait_for


def test_codecompanion_calculator_end_to_end(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(
        openai_tool_calls(
            [("call_calc", "calculator", {"num1": 100, "num2": 50, "operation": "multiply"})],
            text="Let me calculate that.",
        ),
        openai_text("100 * 50 = 5000"),
    )
    ed = start_nvim(config_file=config_file(CALCULATOR))
    bufnr = ed.open_chat()
    ed.answer("approve")
    ed.send("Use the @{calculator} tool for 100*50")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    prompts = [p["prompt"] for p in ed.prompts()]
    assert "Perform the calculation `100 multiply 50`?" in prompts
    first = provider_server.requests[0].json()
    assert first["messages"][-1]["content"] == "Use the the calculator tool tool for 100*50" or (
        "calculator" in first["messages"][-1]["content"]
    )
    assert [t["function"]["name"] for t in first["tools"]] == ["calculator"]
    assert any("Calculator Tool" in (m.get("content") or "") for m in first["messages"])
    second = provider_server.requests[1].json()["messages"]
    assert second[-1] == {"role": "tool", "tool_call_id": "call_calc", "content": "5000"}
    text = ed.text(bufnr)
    assert "**calculator**" in text and "5000" in text
    names = ed.event_names()
    for name in (
        "CodeCompanionToolsStarted",
        "CodeCompanionToolStarted",
        "CodeCompanionToolFinished",
        "CodeCompanionToolsFinished",
        "CodeCompanionToolApprovalRequested",
    ):
        assert name in names


def test_rejected_call_tells_the_model_the_reason(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(
        openai_tool_calls([("c1", "calculator", {"num1": 1, "num2": 2, "operation": "add"})]),
        openai_text("ok, not calculating"),
    )
    ed = start_nvim(config_file=config_file(CALCULATOR))
    ed.open_chat()
    ed.answer("reject")
    ed.lua("table.insert(_G.cc_test.inputs, 'not now')")
    ed.send("@{calculator} 1+2")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    result = provider_server.requests[1].json()["messages"][-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "c1"
    assert "not now" in result["content"] and "reject" in result["content"].lower()


def test_call_to_a_tool_not_offered_is_refused(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(
        openai_tool_calls([("c1", "calculator", {"num1": 1, "num2": 2, "operation": "add"})]),
        openai_text("sorry"),
    )
    ed = start_nvim(config_file=config_file(CALCULATOR))
    ed.open_chat()
    ed.send("no tools offered here")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    assert ed.prompts() == []
    result = provider_server.requests[1].json()["messages"][-1]
    assert result["tool_call_id"] == "c1" and "not available" in result["content"]


def test_edit_of_a_loaded_modified_buffer_keeps_other_changes_unsaved(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    target = project / "notes.txt"
    target.write_text("alpha\nbeta\ngamma\n")
    edit = {
        "filepath": "notes.txt",
        "edits": [{"oldText": "gamma", "newText": "GAMMA", "replaceAll": False}],
        "explanation": "shout gamma",
        "mode": "append",
    }
    provider_server.enqueue(
        openai_tool_calls([("e1", "insert_edit_into_file", edit)]), openai_text("edited")
    )
    ed = project_nvim()
    ed.nvim.command(f"edit {target}")
    ed.nvim.current.buffer[0] = "ALPHA (unsaved user change)"
    source = ed.nvim.current.buffer.number
    ed.nvim.command("CodeCompanionChat")
    ed.answer("Accept all", "Edit the buffer, leave it unsaved")
    ed.send("@{insert_edit_into_file} please")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    asked = [p["prompt"] for p in ed.prompts() if p["kind"] == "codecompanion.unsaved_buffer"]
    assert asked == ["notes.txt has unsaved changes. Apply the model's edit on top of them?"]
    lines = ed.lines(source)
    assert lines == ["ALPHA (unsaved user change)", "beta", "GAMMA"]
    assert target.read_text() == "alpha\nbeta\ngamma\n"  # nothing saved
    assert ed.nvim.api.get_option_value("modified", {"buf": source})
    ed.nvim.api.set_current_buf(source)
    ed.nvim.command("undo")
    wait_for(lambda: ed.lines(source)[2] == "gamma")
    assert ed.lines(source)[0] == "ALPHA (unsaved user change)"


def test_edit_the_arguments_before_the_call_runs(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    provider_server.enqueue(
        openai_tool_calls([("c1", "calculator", {"num1": 100, "num2": 50, "operation": "add"})]),
        openai_text("done"),
    )
    ed = start_nvim(config_file=config_file(CALCULATOR))
    ed.open_chat()
    ed.answer("edit")
    ed.send("@{calculator} 100+50")
    edit_buf = wait_for(
        lambda: ed.lua(
            "for _, b in ipairs(vim.api.nvim_list_bufs()) do "
            "if vim.api.nvim_buf_get_name(b):match('codecompanion://edit/') then return b end end"
        )
    )
    text = "\n".join(ed.lines(edit_buf))
    assert '"num2": 50' in text
    ed.nvim.api.buf_set_lines(edit_buf, 0, -1, False, text.replace("50", "60").split("\n"))
    ed.nvim.api.set_current_buf(edit_buf)
    ed.nvim.command("write")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    result = provider_server.requests[1].json()["messages"][-1]
    assert "160" in result["content"]
    assert "edit" in result["content"].lower()


def test_cancel_answers_every_call_and_does_not_auto_submit(
    start_nvim: StartNvim, config_file: Callable[[str], Path], provider_server: LoopbackServer
) -> None:
    calls = [
        ("c1", "calculator", {"num1": 1, "num2": 1, "operation": "add"}),
        ("c2", "calculator", {"num1": 2, "num2": 2, "operation": "add"}),
    ]
    provider_server.enqueue(openai_tool_calls(calls), openai_text("after"))
    ed = start_nvim(config_file=config_file(CALCULATOR))
    bufnr = ed.open_chat()
    ed.answer("cancel")
    ed.send("@{calculator} twice")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    assert len(provider_server.requests) == 1
    saved = next((ed.tmp / "data" / "nvim" / "codecompanion" / "chats").glob("*.json"))
    import json

    results = [m for m in json.loads(saved.read_text())["messages"] if m["role"] == "tool"]
    assert sorted(m["tools"]["call_id"] for m in results) == ["c1", "c2"]
    assert "## Me" in ed.lines(bufnr)[-3:]


def test_offline_demo_runs_the_whole_tool_loop(start_nvim: StartNvim, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    temp = tmp_path / "tmp"
    temp.mkdir()
    ed = start_nvim(cwd=project, env={"TMPDIR": str(temp)})
    ed.nvim.command("set columns=300")
    for run in range(2):  # a second chat runs the whole demo again
        bufnr = ed.open_chat()
        intro = wait_for(lambda b=bufnr: "Offline demo" in ed.text(b) and ed.text(b))
        assert "type anything under `## Me`" in intro
        folder = Path(intro.split("temporary folder `")[1].split("`")[0])
        assert folder.parent == temp
        ed.answer("Accept all", "approve", "Accept all")
        ed.send("show me")
        ed.wait_event("CodeCompanionChatDone", count=run + 1, timeout=20)
        assert (folder / "codecompanion-demo.md").read_text() == "# Demo\n\nhello codecompanion\n"
        text = ed.text(bufnr)
        assert "That was the offline demo" in text
        assert text.count("## LLM (demo · demo)") == 1
    messages = ed.nvim.exec_lua("return vim.fn.execute('messages')")
    assert "no provider is configured" in messages
    assert list(project.iterdir()) == []  # nothing written into the user's project
    prompts = [p["prompt"] for p in ed.prompts()]
    assert any("wc -l codecompanion-demo.md" in (p or "") for p in prompts)


def test_diagnostics_of_a_loaded_buffer_reach_the_model(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    project = tmp_path / "diag"
    project.mkdir()
    source = project / "broken.py"
    source.write_text("x = 1\nprint(undefined_name)\n")
    args = {"filepath": "broken.py", "severity": "WARNING"}
    provider_server.enqueue(
        openai_tool_calls([("d1", "get_diagnostics", args)]), openai_text("fixed soon")
    )
    ed = start_nvim(config_file=config_file(""), cwd=project)
    ed.nvim.command(f"edit {source}")
    ed.lua(
        "local ns = vim.api.nvim_create_namespace('fake_lsp');"
        "vim.diagnostic.set(ns, 0, {{lnum = 1, col = 6, severity = vim.diagnostic.severity.ERROR,"
        " message = 'undefined name', source = 'fakels'},"
        " {lnum = 0, col = 0, severity = vim.diagnostic.severity.HINT, message = 'just a hint'}})"
    )
    ed.nvim.command("CodeCompanionChat")
    ed.send("@{get_diagnostics} check broken.py")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    result = provider_server.requests[1].json()["messages"][-1]["content"]
    assert "undefined name" in result and "print(undefined_name)" in result
    assert "just a hint" not in result


def test_cut_output_opens_in_full_with_gO(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    ed, bufnr = run_command_turn(
        start_nvim, config_file, provider_server, tmp_path / "big", "seq 1 30000", "long output"
    )
    sent = provider_server.requests[1].json()["messages"][-1]["content"]
    assert len(sent) < 60_000 and "30000" in sent
    ed.nvim.api.set_current_buf(bufnr)
    ed.nvim.input("gO")
    wait_for(lambda: ed.nvim.current.buffer.name.startswith("codecompanion://"))
    assert ed.nvim.current.buffer[:].count("15000") == 1


def test_reload_picks_up_a_changed_config(
    start_nvim: StartNvim, config_file: Callable[[str], Path], tmp_path: Path
) -> None:
    path = config_file("")
    ed = start_nvim(config_file=path)
    ed.open_chat()
    before = ed.lua("return require('codecompanion.complete').items()")
    assert "@{calculator}" not in [i["word"] for i in before]
    path.write_text(path.read_text() + CALCULATOR)
    ed.nvim.command("CodeCompanionReload")
    wait_for(lambda: "config reloaded" in ed.nvim.exec_lua("return vim.fn.execute('messages')"))
    # The host pushes the new items into Lua's completion cache.
    wait_for(
        lambda: (
            "@{calculator}"
            in [i["word"] for i in ed.lua("return require('codecompanion.complete').items()")]
        )
    )
    path.write_text("this is not python(\n")
    ed.nvim.command("set columns=300")  # room for the whole line (narrower screens cut it)
    ed.nvim.command("CodeCompanionReload")
    line = wait_for(
        lambda: [
            m
            for m in ed.nvim.exec_lua("return vim.fn.execute('messages')").splitlines()
            if "codecompanion.py:1" in m
        ]
    )
    assert len(line) == 1


def test_tool_line_status_fold_and_token_usage_on_screen(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    ed, bufnr = run_command_turn(
        start_nvim, config_file, provider_server, tmp_path / "fold", "seq 1 5", "counted"
    )
    lines = ed.lines(bufnr)
    title = next(i for i, line in enumerate(lines, 1) if line.startswith("**run_command**"))
    body = next(i for i, line in enumerate(lines, 1) if i > title and line.startswith("$ seq"))

    def fold_text() -> str:
        code = "local l = ... return vim.fn.foldclosed(l) ~= -1 and vim.fn.foldtextresult(l) or ''"
        return str(ed.lua(code, body))

    text = wait_for(fold_text)
    # The chat window is 36 columns wide: the title gives way, the status and size stay.
    # 13 lines: the command, status, sandbox, stdin, then the two streams.
    assert "**run_comman" in text and text.endswith("[success] (13 lines)")
    marks = ed.lua(
        "local out = {} for _, ns in pairs(vim.api.nvim_get_namespaces()) do"
        " for _, m in ipairs(vim.api.nvim_buf_get_extmarks(..., ns, 0, -1, {details = true})) do"
        " for _, chunk in ipairs(m[4].virt_text or {}) do table.insert(out, chunk[1]) end end end"
        " return out",
        bufnr,
    )
    assert any("tokens" in chunk for chunk in marks)  # usage on the LLM header
    assert any("✓" in chunk for chunk in marks)  # the tool's status icon
    ed.nvim.command("CodeCompanionChat Toggle")
    ed.nvim.command("CodeCompanionChat Toggle")
    assert wait_for(fold_text)  # a new window gets the folds too


def test_restored_chat_shows_tool_lines_and_folds(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    ed, bufnr = run_command_turn(
        start_nvim, config_file, provider_server, tmp_path / "restore", "seq 1 4", "four"
    )
    ed.nvim.command(f"bwipeout! {bufnr}")
    ed.answer(1)
    ed.nvim.command("CodeCompanionChat Restore")
    ed.wait_event("CodeCompanionChatRestored")
    restored = ed.nvim.current.buffer.number
    lines = wait_for(lambda: ed.lines(restored) if "four" in ed.text(restored) else None)
    assert any(line.startswith("**run_command**") for line in lines)
    assert lines.count("## LLM (openai · gpt-test)") == 1
    body = next(i for i, line in enumerate(lines, 1) if line.startswith("$ seq"))
    assert ed.lua("local l = ... return vim.fn.foldclosed(l)", body) != -1
    assert "## Me" in lines[-3:]


def test_typing_in_the_file_during_its_review_asks_again(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    target = project / "notes.txt"
    target.write_text("alpha\nbeta\ngamma\n")
    edit = {
        "filepath": "notes.txt",
        "edits": [{"oldText": "gamma", "newText": "GAMMA", "replaceAll": False}],
        "explanation": "shout gamma",
        "mode": None,
    }
    provider_server.enqueue(
        openai_tool_calls([("e1", "insert_edit_into_file", edit)]), openai_text("edited")
    )
    ed = project_nvim()
    ed.nvim.command("edit notes.txt")
    source = ed.nvim.current.buffer.number
    ed.nvim.command("CodeCompanionChat")
    ed.send("@{insert_edit_into_file} please")
    wait_for(lambda: [p for p in ed.prompts() if p["kind"] == "codecompanion.diff"])
    ed.nvim.api.buf_set_lines(source, 0, 1, False, ["ALPHA typed during the review"])
    ed.answer("Accept all", "Accept all", "Edit the buffer, leave it unsaved")
    ed.wait_event("CodeCompanionChatDone", timeout=15)
    reviews = [p["prompt"] for p in ed.prompts() if p["kind"] == "codecompanion.diff"]
    assert len(reviews) == 2 and reviews[1].startswith("It changed while you reviewed")
    assert ed.lines(source) == ["ALPHA typed during the review", "beta", "GAMMA"]
    assert target.read_text() == "alpha\nbeta\ngamma\n"  # the buffer is edited, never saved
