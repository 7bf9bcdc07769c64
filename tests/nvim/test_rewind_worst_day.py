"""A careful user's worst afternoon with rewind, on real Neovim with a scripted model and real
commands: saves during a command round and during a rewind's question, a file name that is not
UTF-8, a folder swapped for a link, a crafted checkpoint naming `.git`, folders made and removed,
folders' modes changed. In every one the user's bytes survive, the undo is exact and nothing is
written under `.git`."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
from pathlib import Path

from codecompanion.checkpoints.store import ObjectStore, folder_entry, rows_of
from codecompanion.loopback.server import LoopbackServer, openai_text, openai_tool_calls
from tests.support.checkpoints import shape, tree_digest
from tests.support.nvim import Editor, ProjectNvim, wait_for

ALLOW = "opts = {'tools': {'run_command': {'allow': ['*']}}}\n"


def git_init(project: Path) -> dict[str, str]:
    """Make the project a git repository; the digest of its `.git` (to show it untouched)."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return tree_digest(project / ".git")


def command_turn(provider_server: LoopbackServer, cmd: str) -> None:
    provider_server.enqueue(
        openai_tool_calls([("c1", "run_command", {"cmd": cmd})]), openai_text("done")
    )


def run_turn(ed: Editor, text: str = "go\n@{run_command}", count: int = 1) -> int:
    chat = ed.open_chat() if count == 1 else int(ed.nvim.current.buffer.number)
    ed.send(text)
    ed.wait_event("CodeCompanionChatDone", count=count, timeout=30)
    return chat


def rewind_code(ed: Editor, count: int = 1) -> dict[str, object]:
    ed.lua("require('codecompanion').rewind({ turn = 1, code = true, conversation = false })")
    return dict(ed.wait_event("CodeCompanionRewind", count=count, timeout=40)[-1]["data"])


def undo(ed: Editor, count: int = 2) -> dict[str, object]:
    ed.lua("require('codecompanion').rewind_undo()")
    return dict(ed.wait_event("CodeCompanionRewind", count=count, timeout=40)[-1]["data"])


def save_in_split(ed: Editor, chat: int, path: Path, line: str) -> None:
    """The user opens `path` in a split, changes its first line and `:w`, then goes back."""
    ed.nvim.command(f"split {path}")
    ed.nvim.current.buffer[0] = line
    ed.nvim.command("write")
    ed.nvim.command(f"{ed.nvim.funcs.bufwinnr(chat)}wincmd w")


def test_a_save_during_a_command_round_is_the_users_and_a_rewind_keeps_it(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    git = git_init(project)
    (project / "notes.txt").write_text("notes 0\n")
    (project / "a.txt").write_text("a 0\n")
    command_turn(provider_server, "sleep 3; echo chat > a.txt")
    ed = project_nvim(ALLOW, setup={"yolo": True})
    chat = ed.open_chat()
    ed.send("go\n@{run_command}")
    ed.wait_event("CodeCompanionToolStarted", timeout=20)
    save_in_split(ed, chat, project / "notes.txt", "notes by me")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    assert "_1 file changed: a.txt +1 −1_" in ed.text(chat)
    listing = ed.lua("return require('codecompanion').checkpoints(...)", chat)
    assert listing[0]["files"] == ["a.txt"]

    done = rewind_code(ed)
    assert ed.prompts() == []  # notes.txt is only the user's: nothing to ask
    assert done["files"] == ["a.txt"]
    assert (project / "a.txt").read_text() == "a 0\n"
    assert (project / "notes.txt").read_text() == "notes by me\n"
    assert tree_digest(project / ".git") == git


def test_a_save_while_a_rewind_asks_is_asked_again_and_the_undo_brings_it_back(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    git = git_init(project)
    (project / "c.txt").write_text("c 0\n")
    (project / "x.txt").write_text("x 0\n")
    command_turn(provider_server, "echo chat > c.txt; echo chat > x.txt")
    ed = project_nvim(ALLOW, setup={"yolo": True})
    chat = run_turn(ed)
    (project / "c.txt").write_text("c by me\n")  # both changed c.txt: a question
    ed.lua("require('codecompanion').rewind({ turn = 1, code = true, conversation = false })")
    wait_for(lambda: len(ed.prompts()) == 1, timeout=40)
    assert "c.txt was changed by you and by the chat" in ed.prompts()[0]["prompt"]
    # A second rewind asked for while the first asks is refused, and says so.
    ed.lua("require('codecompanion').rewind({ turn = 1, code = true, conversation = false })")
    messages = "return vim.fn.execute('messages')"
    wait_for(lambda: "a rewind is under way" in ed.nvim.exec_lua(messages), timeout=20)
    assert len(ed.prompts()) == 1
    save_in_split(ed, chat, project / "x.txt", "x saved during the question")
    saved = (project / "x.txt").read_bytes()
    ed.answer("Keep mine")
    # x.txt moved since the rewind was planned: it is asked about, not overwritten.
    wait_for(lambda: len(ed.prompts()) == 2, timeout=40)
    assert "x.txt was changed by you and by the chat" in ed.prompts()[1]["prompt"]
    assert (project / "x.txt").read_bytes() == saved
    ed.answer("Take the checkpoint")
    # The rewind asked above finishes now (a second rewind call here would race with it).
    done = dict(ed.wait_event("CodeCompanionRewind", timeout=40)[-1]["data"])
    assert done["files"] == ["x.txt"] and done["kept"] == ["c.txt"]
    assert (project / "x.txt").read_text() == "x 0\n"
    assert (project / "c.txt").read_text() == "c by me\n"

    undo(ed)
    assert (project / "x.txt").read_bytes() == saved  # what the rewind replaced, exactly
    assert (project / "c.txt").read_text() == "c by me\n"
    assert tree_digest(project / ".git") == git


def test_a_file_name_that_is_not_utf8_is_rewound_and_undone(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    git = git_init(project)
    (project / "a.txt").write_text("a 0\n")
    command_turn(provider_server, "printf odd > \"$(printf '\\377\\376')\".txt; echo b > a.txt")
    ed = project_nvim(ALLOW, setup={"yolo": True})
    run_turn(ed)
    odd = os.path.join(os.fsencode(project), b"\xff\xfe.txt")
    with open(odd, "rb") as handle:
        assert handle.read() == b"odd"
    after = shape(project)

    done = rewind_code(ed)
    assert not done["failed"] and len(done["files"]) == 2
    assert not os.path.lexists(odd)
    assert (project / "a.txt").read_text() == "a 0\n"

    undo(ed)
    assert shape(project) == after
    assert tree_digest(project / ".git") == git


def test_a_folder_swapped_for_a_link_is_rewound_and_undone_exactly(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    git = git_init(project)
    (project / "d").mkdir()
    (project / "d" / "f.txt").write_text("f 0\n")
    (project / "other").mkdir()
    (project / "other" / "g.txt").write_text("g\n")
    before = shape(project)
    command_turn(provider_server, "rm -r d && ln -s other d")
    ed = project_nvim(ALLOW, setup={"yolo": True})
    run_turn(ed)
    assert (project / "d").is_symlink()
    after = shape(project)

    done = rewind_code(ed)
    assert not done["failed"]
    assert shape(project) == before

    undone = undo(ed)
    assert not undone["failed"]
    assert shape(project) == after
    assert tree_digest(project / ".git") == git


def test_folders_the_chat_removed_and_made_are_put_back(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    git = git_init(project)
    (project / "empty").mkdir()
    (project / "keep.txt").write_text("keep\n")
    before = shape(project)
    command_turn(provider_server, "rmdir empty && mkdir made && mkdir -p deep/er")
    ed = project_nvim(ALLOW, setup={"yolo": True})
    run_turn(ed)
    after = shape(project)
    assert b"made" in after and b"empty" not in after

    rewind_code(ed)
    assert shape(project) == before
    undo(ed)
    assert shape(project) == after
    assert tree_digest(project / ".git") == git


def test_folder_modes_a_command_changed_or_removed_are_put_back(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    git = git_init(project)
    (project / "sub").mkdir(mode=0o755)
    (project / "sub" / "s.txt").write_text("s\n")
    (project / "gone" / "in").mkdir(parents=True)
    (project / "gone" / "in" / "g.txt").write_text("g\n")
    (project / "gone" / "in").chmod(0o700)
    (project / "gone").chmod(0o750)
    before = shape(project)
    command_turn(provider_server, "chmod 700 sub && rm -r gone")
    ed = project_nvim(ALLOW, setup={"yolo": True})
    run_turn(ed)
    after = shape(project)
    assert after[b"sub"] == ("d", 0o700) and b"gone" not in after

    done = rewind_code(ed)
    assert not done["failed"]
    assert ed.prompts() == []
    assert shape(project) == before  # sub 755 again, gone 750 and gone/in 700 with g.txt
    undone = undo(ed)
    assert not undone["failed"]
    assert shape(project) == after
    assert tree_digest(project / ".git") == git


def test_a_folder_mode_both_changed_is_asked_about_with_both_modes_shown(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    (project / "sub").mkdir()
    (project / "sub").chmod(0o755)
    command_turn(provider_server, "chmod 700 sub")
    ed = project_nvim(ALLOW, setup={"yolo": True})
    run_turn(ed)
    (project / "sub").chmod(0o750)  # the user too, by hand, after the turn

    ed.lua("require('codecompanion').rewind({ turn = 1, code = true, conversation = false })")
    wait_for(lambda: len(ed.prompts()) == 1, timeout=40)
    assert "sub was changed by you and by the chat" in ed.prompts()[0]["prompt"]
    ed.answer("Show the diff")
    wait_for(lambda: len(ed.prompts()) == 2, timeout=40)
    shown = ed.lua(
        "return vim.api.nvim_buf_get_lines(vim.fn.bufnr('codecompanion://rewind-diff'), 0, -1, 0)"
    )
    assert shown == ["sub: yours is a folder (mode 750), the checkpoint's is a folder (mode 755)"]
    ed.answer("Take the checkpoint")
    done = dict(ed.wait_event("CodeCompanionRewind", timeout=40)[-1]["data"])
    assert done["files"] == ["sub"]
    assert stat.S_IMODE((project / "sub").stat().st_mode) == 0o755
    undo(ed)
    assert stat.S_IMODE((project / "sub").stat().st_mode) == 0o750


def test_a_crafted_checkpoint_naming_git_writes_nothing_there(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path, tmp_path: Path
) -> None:
    git = git_init(project)
    (project / "a.txt").write_text("a 0\n")
    command_turn(provider_server, "echo chat > a.txt")
    ed = project_nvim(ALLOW, setup={"yolo": True})
    chat = run_turn(ed)
    chat_id = ed.lua("return require('codecompanion').chat_id(...)", chat)
    folder = tmp_path / "data" / "nvim" / "codecompanion" / "checkpoints"
    journal_path = folder / "chats" / f"{chat_id}.json"
    journal = json.loads(journal_path.read_text())
    # The turn's tree as a crafted one: the same files plus `.git/hooks/post-checkout`.
    store = ObjectStore(folder)
    hook, _ = store.put(b"#!/bin/sh\necho owned > owned\n")
    hooks, _ = store.put_tree([("post-checkout", "f", 0o755, 29, 0, 0, 0, hook)])
    dot_git, _ = store.put_tree(rows_of({"hooks": folder_entry(hooks, stat.S_IFDIR | 0o755)}))
    records = journal["records"]
    crafted_tree = dict(store.tree(records[0]["tree"]))
    crafted_tree[".git"] = folder_entry(dot_git, stat.S_IFDIR | 0o755)
    crafted, _ = store.put_tree(rows_of(crafted_tree))
    for record in records:
        if record["kind"] in ("turn", "tools"):
            record["tree"] = crafted
    pid = int(ed.lua("return vim.fn.jobpid(require('codecompanion.host').channel())"))
    os.kill(pid, signal.SIGKILL)  # the next host reads the journal from disk
    wait_for(lambda: ed.lua("return require('codecompanion.host').channel()") is None)
    journal_path.write_text(json.dumps(journal))

    done = rewind_code(ed)
    assert (project / "a.txt").read_text() == "a 0\n"
    assert not (project / ".git" / "hooks" / "post-checkout").exists()
    assert tree_digest(project / ".git") == git
    assert any(".git/hooks/post-checkout" in line for line in done["failed"])  # type: ignore[union-attr]


def test_a_write_a_chat_makes_through_a_buffer_is_not_the_users(
    project_nvim: ProjectNvim, provider_server: LoopbackServer, project: Path
) -> None:
    # A tool editing a loaded file writes it with `:write` while the buffer names the chat
    # (editor.lua): that BufWritePost is the chat's, not a save of the user's.
    (project / "notes.txt").write_text("notes 0\n")
    command_turn(provider_server, "sleep 3")
    ed = project_nvim(ALLOW, setup={"yolo": True})
    chat = ed.open_chat()
    ed.send("go\n@{run_command}")
    ed.wait_event("CodeCompanionToolStarted", timeout=20)
    ed.nvim.command(f"split {project / 'notes.txt'}")
    ed.nvim.current.buffer[0] = "by the chat"
    ed.lua("vim.b.codecompanion_chat_write = 'chat'; vim.cmd.write()")
    ed.lua("vim.b.codecompanion_chat_write = nil")
    ed.nvim.command(f"{ed.nvim.funcs.bufwinnr(chat)}wincmd w")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    assert "_1 file changed: notes.txt +1 −1_" in ed.text(chat)
