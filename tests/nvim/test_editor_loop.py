"""The editor in the loop, on real Neovim with a real language server (python-lsp-server with
pyflakes, started by `vim.lsp.start`) and a scripted model: an edit's result carries the
server's fresh diagnostics, edits go through the open buffer (undo kept, the user's unsaved text
kept), and a configured after-edit check's failure reaches the next request."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.nvim import Editor, ProjectNvim, wait_for

PYLSP = Path(sys.executable).parent / "pylsp"
pytestmark = pytest.mark.skipif(not PYLSP.exists(), reason="python-lsp-server is not installed")

APP = "def main():\n    return 1\n\n\nprint(main())\n"
# A wait no loaded machine runs out of: a result that names the problem came from a publish.
SETTINGS = 'opts = {"editor": {"diagnostics_wait": 15}}\n'


def start_pylsp(ed: Editor, project: Path) -> None:
    """Start pylsp for every Python buffer, as a user's config would (FileType + vim.lsp.start)."""
    ed.lua(
        "local cmd, root = ...;"
        "require('codecompanion.lsp_diagnostics').track();"
        "vim.api.nvim_create_autocmd('FileType', {pattern = 'python', callback = function(a)"
        " vim.lsp.start({name = 'pylsp', cmd = {cmd}, root_dir = root}, {bufnr = a.buf}) end})",
        str(PYLSP),
        str(project),
    )


def open_with_server(ed: Editor, path: Path) -> int:
    """Edit `path` and wait until pylsp attached and published for it."""
    ed.nvim.command(f"edit {path}")
    bufnr = int(ed.nvim.current.buffer.number)
    fresh = "return require('codecompanion.lsp_diagnostics').is_fresh(...)"
    wait_for(lambda: ed.lua(fresh, bufnr), timeout=60)
    return bufnr


def edit_call(old: str, new: str, call_id: str = "e1") -> Any:
    args = {
        "filepath": "app.py",
        "edits": [{"oldText": old, "newText": new, "replaceAll": False}],
        "explanation": None,
        "mode": None,
    }
    return openai_tool_calls([(call_id, "insert_edit_into_file", args)])


def tool_result(server: LoopbackServer, request: int = 1) -> str:
    messages = server.requests[request].json()["messages"]
    return str([m for m in messages if m["role"] == "tool"][-1]["content"])


@pytest.fixture
def app(project: Path) -> Path:
    path = project / "app.py"
    path.write_text(APP)
    return path


def test_an_edit_that_breaks_a_name_returns_the_servers_error_with_its_line(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, app: Path
) -> None:
    provider_server.enqueue(
        edit_call("    return 1", "    return undefined_total"), openai_text("oops")
    )
    ed = project_nvim(SETTINGS)
    start_pylsp(ed, project)
    source = open_with_server(ed, app)
    ed.nvim.command("CodeCompanionChat")
    ed.answer("Accept all")
    ed.send("@{insert_edit_into_file} use the total")
    ed.wait_event("CodeCompanionChatDone", timeout=60)
    result = tool_result(provider_server)
    assert "Edited app.py on disk (through its buffer open in Neovim)." in result, result
    assert "Diagnostics for app.py after the edit (pylsp): 1 new problem" in result, result
    assert "app.py:2:12 ERROR pyflakes undefined name 'undefined_total'" in result, result
    assert "    > return undefined_total" in result
    assert "did not publish" not in result
    assert app.read_text() == APP.replace("return 1", "return undefined_total")
    assert not ed.nvim.api.get_option_value("modified", {"buf": source})


def test_a_correct_edit_returns_no_new_problems_and_one_undo_takes_it_back(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, app: Path
) -> None:
    provider_server.enqueue(edit_call("    return 1", "    return 2"), openai_text("done"))
    ed = project_nvim(SETTINGS)
    start_pylsp(ed, project)
    source = open_with_server(ed, app)
    ed.nvim.command("split")  # a second window on the file, scrolled to its last line
    ed.nvim.command("normal! G")
    other = int(ed.nvim.current.window.handle)
    ed.nvim.command("CodeCompanionChat")
    ed.answer("Accept all")
    ed.send("@{insert_edit_into_file} return two")
    ed.wait_event("CodeCompanionChatDone", timeout=60)
    result = tool_result(provider_server)
    assert "Diagnostics for app.py after the edit (pylsp): no new problems." in result, result
    assert ed.nvim.api.win_get_cursor(other) == [5, 0]  # the other window stayed put
    ed.nvim.api.set_current_win(other)
    ed.nvim.command("undo")
    assert ed.lines(source) == APP.splitlines()  # one `u` undoes the model's whole edit
    assert app.read_text() == APP.replace("return 1", "return 2")  # the saved file, until :w


def test_an_edit_of_a_buffer_with_unsaved_changes_asks_and_keeps_the_users_text(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, app: Path
) -> None:
    provider_server.enqueue(edit_call("    return 1", "    return 3"), openai_text("done"))
    ed = project_nvim(SETTINGS)
    start_pylsp(ed, project)
    source = open_with_server(ed, app)
    ed.nvim.api.buf_set_lines(source, 4, 5, False, ["print('typed, not saved', main())"])
    ed.nvim.command("CodeCompanionChat")
    ed.answer("Accept all", "Edit the buffer, leave it unsaved")
    ed.send("@{insert_edit_into_file} return three")
    ed.wait_event("CodeCompanionChatDone", timeout=60)
    asked = [p for p in ed.prompts() if p["kind"] == "codecompanion.unsaved_buffer"]
    assert len(asked) == 1 and "app.py has unsaved changes" in asked[0]["prompt"]
    assert ed.lines(source)[1] == "    return 3"
    assert ed.lines(source)[4] == "print('typed, not saved', main())"  # the user's text
    assert app.read_text() == APP  # nothing saved over the user's work
    result = tool_result(provider_server)
    assert "not saved to disk (the user has unsaved changes there)" in result, result
    assert "no new problems" in result  # the server reads the buffer, saved or not


def test_a_configured_checks_failure_reaches_the_next_request(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, app: Path
) -> None:
    provider_server.enqueue(
        edit_call("    return 1", "    return missing_name"), openai_text("I will fix it")
    )
    check = f"{sys.executable} -m pyflakes {{files}}"
    ed = project_nvim(f"after_edit = {{'*.py': [{check!r}]}}\n")
    ed.nvim.command("CodeCompanionChat")
    ed.answer("Accept all", "Yes")
    ed.send("@{insert_edit_into_file} change it")
    ed.wait_event("CodeCompanionChatDone", timeout=60)
    asked = [p["prompt"] for p in ed.prompts() if p["kind"] == "codecompanion.confirm"]
    assert len(asked) == 1 and "-m pyflakes {files} for *.py (config)" in asked[0]
    messages = provider_server.requests[1].json()["messages"]
    assert messages[-2]["role"] == "tool"
    failure = messages[-1]
    assert failure["role"] == "user", messages[-3:]
    assert "The project's checks failed after your edits" in failure["content"]
    assert "-m pyflakes app.py" in failure["content"]
    assert "undefined name 'missing_name'" in failure["content"]


def test_follow_mode_shows_the_edited_file_at_the_changed_line(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, app: Path
) -> None:
    provider_server.enqueue(edit_call("print(main())", "print(main() + 1)"), openai_text("ok"))
    (project / "other.txt").write_text("something else\n")
    ed = project_nvim("", setup={"follow": True})
    ed.nvim.command("edit other.txt")
    window = int(ed.nvim.current.window.handle)
    ed.nvim.command("CodeCompanionChat")
    chat_window = int(ed.nvim.current.window.handle)
    ed.answer("Accept all")
    ed.send("@{insert_edit_into_file} add one")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    shown = "return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(...))"
    wait_for(lambda: ed.lua(shown, window) == str(app))
    assert ed.nvim.api.win_get_cursor(window)[0] == 5
    assert int(ed.nvim.current.window.handle) == chat_window  # focus stays in the chat


def test_checkhealth_lists_the_servers_and_checks_seen(
    project_nvim: ProjectNvim, project: Path, app: Path
) -> None:
    ed = project_nvim("after_edit = {'*.py': ['ruff check {files}']}\n")
    start_pylsp(ed, project)
    open_with_server(ed, app)
    ed.open_chat()  # the host is up: the health request waits 2 s at most
    ed.wait_event("CodeCompanionChatCreated")
    ed.nvim.command("checkhealth codecompanion")
    text = "\n".join(ed.lines())
    assert "pylsp (running, 1 buffer, root " in text and "diagnostics published" in text, text
    assert "*.py: ruff check {files} (config), not asked yet" in text, text


def test_the_checks_command_lists_them_and_remembers_the_answer(
    project_nvim: ProjectNvim, project: Path, app: Path
) -> None:
    ed = project_nvim("after_edit = {'*': ['make -q lint']}\n")
    ed.answer("No")
    ed.nvim.command("CodeCompanionChat Checks")
    wait_for(lambda: [p for p in ed.prompts() if p["kind"] == "codecompanion.confirm"])
    listing = wait_for(
        lambda: next((ed.lines(b.number) for b in ed.nvim.buffers if "checks" in b.name), None)
    )
    assert listing[0].startswith(f"Checks after the model's edits in {project}")
    assert "  *: make -q lint  (config)" in listing
    health = "return require('codecompanion.host').request('health', {cwd = vim.fn.getcwd()})"
    wait_for(lambda: ed.lua(health)["checks"][0]["allowed"] is False)


def test_a_command_that_changed_an_open_file_reloads_it_and_reports_its_diagnostics(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, app: Path
) -> None:
    (project / "notes.py").write_text("x = 1\n")
    command = "sed -i 's/return 1/return undefined_in_cmd/' app.py; echo x = 2 > notes.py"
    provider_server.enqueue(
        openai_tool_calls([("c1", "run_command", {"cmd": command, "unconfined": None})]),
        openai_text("done"),
    )
    ed = project_nvim(SETTINGS)
    start_pylsp(ed, project)
    source = open_with_server(ed, app)
    ed.nvim.command("edit notes.py")
    notes = int(ed.nvim.current.buffer.number)
    ed.nvim.api.buf_set_lines(notes, 0, 1, False, ["x = 'typed, not saved'"])
    ed.nvim.command("CodeCompanionChat")
    ed.answer("approve")
    ed.send("@{run_command} change it")
    ed.wait_event("CodeCompanionChatDone", timeout=60)
    result = tool_result(provider_server)
    assert ed.lines(source)[1] == "    return undefined_in_cmd"  # reloaded: it was unmodified
    assert "app.py:2:12 ERROR pyflakes undefined name 'undefined_in_cmd'" in result, result
    assert ed.lines(notes) == ["x = 'typed, not saved'"]  # the user's unsaved text stays
    assert "note: notes.py changed on disk, but its buffer in Neovim has unsaved changes" in result


def test_follow_toggles_with_its_command(project_nvim: ProjectNvim) -> None:
    ed = project_nvim()
    enabled = "return require('codecompanion.follow').enabled()"
    assert ed.lua(enabled) is False
    ed.nvim.command("CodeCompanionChat Follow")
    assert ed.lua(enabled) is True
    ed.nvim.command("CodeCompanionChat Follow")
    assert ed.lua(enabled) is False


def test_a_file_no_buffer_holds_is_loaded_and_its_server_answers(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, app: Path
) -> None:
    # No buffer holds app.py and no server runs yet: get_diagnostics loads the file, the
    # user's FileType autocmd starts pylsp, and the result waits for its first publish.
    app.write_text("def main():\n    return totl\n")
    args = {"filepath": "app.py", "severity": "ERROR"}
    provider_server.enqueue(
        openai_tool_calls([("d1", "get_diagnostics", args)]), openai_text("seen")
    )
    ed = project_nvim(SETTINGS)
    start_pylsp(ed, project)
    ed.nvim.command("CodeCompanionChat")
    ed.send("@{get_diagnostics} check app.py")
    ed.wait_event("CodeCompanionChatDone", timeout=60)
    result = tool_result(provider_server)
    assert "undefined name 'totl'" in result, result
    assert "2:12 ERROR pyflakes" in result


def read_call(call_id: str = "r1") -> Any:
    args = {"filepath": "app.py", "start_line_number_base_zero": 0, "end_line_number_base_zero": -1}
    return openai_tool_calls([(call_id, "read_file", args)])


def test_a_read_names_the_files_problems_and_edits_say_what_they_fixed_or_left(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, app: Path
) -> None:
    # A file no buffer holds (pylsp runs for another one): the read carries its problem with
    # the line; a wrong fix names the new problem and the old one gone; the right fix says
    # nothing new and what it fixed.
    app.write_text("def main(total):\n    return totl\n")
    (project / "other.py").write_text("VALUE = 1\n")
    provider_server.enqueue(
        read_call(),
        edit_call("return totl", "return totall", "e1"),
        edit_call("return totall", "return total", "e2"),
        openai_text("fixed"),
    )
    ed = project_nvim(SETTINGS)
    start_pylsp(ed, project)
    open_with_server(ed, project / "other.py")
    ed.nvim.command("CodeCompanionChat")
    ed.answer("Accept all", "Accept all")  # each edit is reviewed
    ed.send("@{files} fix app.py")
    ed.wait_event("CodeCompanionChatDone", timeout=90)
    read = tool_result(provider_server, 1)
    assert read.endswith(
        "Diagnostics for app.py now (pylsp): 1 problem, lines 1-based:\n"
        "2:12 ERROR pyflakes undefined name 'totl'\n    > return totl"
    ), read
    wrong = tool_result(provider_server, 2)
    assert "after the edit (pylsp): 1 new problem, lines 1-based:\n" in wrong, wrong
    assert "app.py:2:12 ERROR pyflakes undefined name 'totall'" in wrong
    assert "fixed by the edit (was line 2): ERROR pyflakes undefined name 'totl'" in wrong
    right = tool_result(provider_server, 3)
    assert (
        "Diagnostics for app.py after the edit (pylsp): no new problems, lines 1-based:\n" in right
    )
    assert right.endswith("fixed by the edit (was line 2): ERROR pyflakes undefined name 'totall'")
    assert app.read_text() == "def main(total):\n    return total\n"


def reads_call(names: list[str], prefix: str) -> Any:
    calls = [
        (
            f"{prefix}{i}",
            "read_file",
            {"filepath": name, "start_line_number_base_zero": 0, "end_line_number_base_zero": -1},
        )
        for i, name in enumerate(names)
    ]
    return openai_tool_calls(calls)


def test_reads_of_a_kind_no_server_checks_load_no_file(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    # No language server is set up for Python: no read loads a file for its diagnostics (the
    # first .py file loaded runs the python3 provider's check, ~0.8 s of Neovim's time), and
    # after the first read's word no other read of a .py file even asks Neovim.
    names = [f"m{i}.py" for i in range(5)]
    for name in names:
        (project / name).write_text("VALUE = 1\n")
    provider_server.enqueue(
        reads_call(names, "a"), openai_text("read"), reads_call(names, "b"), openai_text("again")
    )
    ed = project_nvim(SETTINGS)
    ed.lua(
        "_G.loads = 0; vim.api.nvim_create_autocmd('BufReadPost', {pattern = '*/m*.py',"
        " callback = function() _G.loads = _G.loads + 1 end})"
    )
    chat = ed.open_chat()
    ed.send("@{files} read them")
    ed.wait_event("CodeCompanionChatDone", timeout=60)
    ed.nvim.current.buffer = ed.nvim.buffers[chat]
    ed.send("and again")
    ed.wait_event("CodeCompanionChatDone", count=2, timeout=60)
    assert ed.lua("return _G.loads") == 0
    messages = provider_server.requests[-1].json()["messages"]
    results = [m["content"] for m in messages if m["role"] == "tool"]
    assert len(results) == 10 and not any("Diagnostics" in r for r in results)


def test_the_first_read_of_a_kind_starts_its_server_and_names_the_problem(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, app: Path
) -> None:
    # pylsp is set up for Python buffers, but no buffer is open yet (a chat opened first thing):
    # the read loads app.py, pylsp starts for it, and the read carries the problem.
    app.write_text("def main(total):\n    return totl\n")
    provider_server.enqueue(read_call(), openai_text("read"))
    ed = project_nvim(SETTINGS)
    start_pylsp(ed, project)
    ed.nvim.command("CodeCompanionChat")
    ed.send("@{files} read app.py")
    ed.wait_event("CodeCompanionChatDone", timeout=90)
    read = tool_result(provider_server, 1)
    assert read.endswith(
        "Diagnostics for app.py now (pylsp): 1 problem, lines 1-based:\n"
        "2:12 ERROR pyflakes undefined name 'totl'\n    > return totl"
    ), read


def test_without_the_loop_a_read_and_an_edit_carry_no_diagnostics(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, app: Path
) -> None:
    app.write_text("def main(total):\n    return totl\n")
    provider_server.enqueue(
        read_call(), edit_call("return totl", "return totall"), openai_text("done")
    )
    ed = project_nvim('opts = {"editor": {"diagnostics": False}}\n')
    start_pylsp(ed, project)
    ed.nvim.command("CodeCompanionChat")
    ed.answer("Accept all")
    ed.send("@{files} fix app.py")
    ed.wait_event("CodeCompanionChatDone", timeout=90)
    read, edit = tool_result(provider_server, 1), tool_result(provider_server, 2)
    assert read.endswith("    return totl\n```"), read
    assert "Diagnostics" not in read + edit and "totall" in app.read_text()


PRINTED = "Replace it:\n```python\ndef main(total):\n    return total\n```\n"


def test_an_answer_that_only_shows_the_fixed_file_is_read_as_the_edit_and_asked_about(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, app: Path
) -> None:
    app.write_text("def main(total):\n    return totl\n")
    provider_server.enqueue(read_call(), openai_text(PRINTED), openai_text("fixed"))
    ed = project_nvim(SETTINGS)
    start_pylsp(ed, project)
    ed.nvim.command("CodeCompanionChat")
    chat = int(ed.nvim.current.buffer.number)
    ed.answer("approve", "Accept all")
    ed.send("@{files} fix app.py")
    ed.wait_event("CodeCompanionChatDone", timeout=90)
    assert [p["prompt"] for p in ed.prompts()][:1] == ["Apply 1 edit to `app.py`?"], ed.prompts()
    assert app.read_text() == "def main(total):\n    return total\n"
    answer = provider_server.requests[2].json()["messages"][-2]
    assert answer["content"] == PRINTED and answer["tool_calls"]
    assert "fixed by the edit (was line 2)" in tool_result(provider_server, 2)
    text = "\n".join(ed.lines(chat))
    assert "_[the answer shows `app.py` changed: read as an edit of it]_" in text


def test_without_the_loop_the_shown_edit_runs_and_its_result_has_no_diagnostics(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, app: Path
) -> None:
    app.write_text("def main(total):\n    return totl\n")
    provider_server.enqueue(read_call(), openai_text(PRINTED), openai_text("fixed"))
    ed = project_nvim('opts = {"editor": {"diagnostics": False}}\n')
    ed.nvim.command("CodeCompanionChat")
    ed.answer("approve", "Accept all")
    ed.send("@{files} fix app.py")
    ed.wait_event("CodeCompanionChatDone", timeout=90)
    assert len(provider_server.requests) == 3
    assert app.read_text() == "def main(total):\n    return total\n"
    assert "Diagnostics" not in tool_result(provider_server, 2)
