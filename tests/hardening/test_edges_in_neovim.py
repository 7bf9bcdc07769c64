# ruff: noqa: E501 - the tables of calls below read best one line per call

"""The boundary's edges tried as an attacker would, in a real Neovim with the real plugin, in
`sandboxed` and `yolo` modes: the model's calls come from the loopback provider, the commands
run in the real sandbox, and what they leave behind is checked with the user's own git."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from codecompanion.loopback.server import LoopbackServer, Turn, openai_text, openai_tool_calls
from codecompanion.sandbox.probe import detect
from tests.support.git_repos import git, repository
from tests.support.nvim import Editor, wait_for

StartNvim = Callable[..., Editor]
FOUND = detect()
pytestmark = pytest.mark.skipif(
    FOUND.kind != "landlock" or not FOUND.mounts, reason=f"no full sandbox here: {FOUND.reason}"
)
MODES = ["sandboxed", "yolo"]


def chat_turn(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    server: LoopbackServer,
    project: Path,
    mode: str,
    calls: list[tuple[str, str, dict[str, object]]],
    answers: tuple[str, ...] = (),
) -> tuple[Editor, dict[str, str]]:
    """One turn in `project` whose model makes `calls`; `answers` go to the questions asked.
    The editor, and each call's result as the provider got it."""
    server.enqueue(openai_tool_calls(calls), openai_text("done"))
    ed = start_nvim(config_file=config_file(""), cwd=project, setup={"permissions": {"mode": mode}})
    ed.answer(*answers)
    ed.open_chat()
    tools = " ".join("@{" + name + "}" for name in sorted({c[1] for c in calls}))
    ed.send(f"{tools} go")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    sent = server.wait_for_requests(2)[1].body
    results = {m["tool_call_id"]: m["content"] for m in sent["messages"] if m["role"] == "tool"}
    return ed, results


def user_git_runs(folder: Path, marker: Path) -> bool:
    """Whether the user's next `git status` there runs a program the sandbox planted."""
    subprocess.run(["git", "status"], cwd=folder, capture_output=True, timeout=30)
    return marker.exists()


@pytest.mark.parametrize("mode", MODES)
def test_no_command_or_edit_plants_a_program_in_any_git_folder(
    mode: str,
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    project = repository(tmp_path / "project")
    repository(project / "vendor/lib")
    (project / "mod").mkdir()
    git(project, "init", "-q", f"--separate-git-dir={project}/mod-repo", "mod")
    git(project, "submodule", "add", "-q", str(repository(tmp_path / "library")), "sub")
    marker = tmp_path / "planted-ran"
    planted = f"printf '[core]\\n\\tfsmonitor = touch {marker}\\n' >>"
    calls: list[tuple[str, str, dict[str, object]]] = [
        ("nested", "run_command", {"cmd": f"git -C vendor/lib config core.fsmonitor 'touch {marker}'"}),
        ("separate", "run_command", {"cmd": f"{planted} mod-repo/config"}),
        ("submodule", "run_command", {"cmd": f"{planted} .git/modules/sub/config"}),
        ("pointer", "run_command", {"cmd": "printf 'gitdir: ../mod-repo\\n' > sub/.git"}),
        ("made", "run_command", {"cmd": f"git init -q new && {planted} new/.git/config"}),
        ("edit", "create_file", {"filepath": "mod-repo/hooks/pre-commit", "content": f"touch {marker}"}),
    ]  # fmt: skip
    ed, results = chat_turn(
        start_nvim, config_file, provider_server, project, mode, calls, ("No", "No")
    )
    questions = [p["prompt"] for p in ed.prompts()]
    assert len(questions) == 2, questions
    assert "made a git repository at new/.git" in questions[0]
    assert "git's control files: mod-repo/hooks/pre-commit" in questions[1]
    for name in ("nested", "separate", "submodule", "pointer"):
        assert "Read-only file system" in results[name], results[name]
    assert "the user did not keep it" in results["made"]
    assert "the user did not allow" in results["edit"]
    for folder in (
        project,
        project / "vendor/lib",
        project / "mod",
        project / "new",
        project / "sub",
    ):
        folder.mkdir(exist_ok=True)
        assert not user_git_runs(folder, marker), folder
    assert not (project / "mod-repo/hooks/pre-commit").exists()


@pytest.mark.parametrize("mode", MODES)
def test_git_init_in_a_fresh_project_is_kept_only_when_the_user_says_so(
    mode: str,
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    project = tmp_path / "fresh"
    project.mkdir()
    calls: list[tuple[str, str, dict[str, object]]] = [
        ("init", "run_command", {"cmd": "git init -q && echo ok > a.txt"}),
        ("next", "run_command", {"cmd": "git config core.fsmonitor 'touch /tmp/x' || echo refused"}),
    ]  # fmt: skip
    ed, results = chat_turn(
        start_nvim, config_file, provider_server, project, mode, calls, ("Yes",)
    )
    assert "the user kept it" in results["init"], results
    assert "Read-only file system" in results["next"] or "refused" in results["next"]
    assert "fsmonitor" not in (project / ".git/config").read_text()
    assert (project / "a.txt").read_text() == "ok\n"
    assert len(ed.prompts()) == 1
    assert os.path.isdir(project / ".git")


def throwaway_home(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A HOME holding Neovim's folders as a real one does, and the environment naming it."""
    home = tmp_path / "home"
    for folder in (".config/nvim", ".local/share", ".local/state", ".cache"):
        (home / folder).mkdir(parents=True)
    (home / ".bashrc").write_text("# bashrc\n")
    (home / ".config/nvim/init.lua").write_text("-- init\n")
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    return home, env


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where", ["home", "root"])
def test_a_chat_opened_in_home_or_root_writes_nothing_there(
    mode: str,
    where: str,
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    home, env = throwaway_home(tmp_path)
    store = home / ".local/share/nvim/codecompanion/checkpoints"
    outside = tmp_path / "outside.txt"
    calls: list[tuple[str, str, dict[str, object]]] = [
        ("rc", "run_command", {"cmd": "echo pwned >> ~/.bashrc"}),
        ("init", "run_command", {"cmd": "echo 'vim.cmd.qa()' >> ~/.config/nvim/init.lua"}),
        ("store", "run_command", {"cmd": f"mkdir -p {store} && echo x > {store}/planted"}),
        ("out", "run_command", {"cmd": f"echo x > {outside}"}),
        ("read", "run_command", {"cmd": "cat ~/.bashrc"}),
    ]
    server = provider_server
    server.enqueue(openai_tool_calls(calls), openai_text("done"))
    project = home if where == "home" else Path("/")
    ed = start_nvim(
        config_file=config_file(""),
        cwd=project,
        env=env,
        setup={"permissions": {"mode": mode}},
    )
    ed.open_chat()
    ed.send("@{run_command} go")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    sent = server.wait_for_requests(2)[1].body
    results = {m["tool_call_id"]: m["content"] for m in sent["messages"] if m["role"] == "tool"}
    reason = "~ is your home folder" if where == "home" else "/ is the whole system"
    for name in ("rc", "init", "store", "out"):
        assert "status: exit code 0" not in results[name], results[name]
        assert reason in results[name], results[name]
    assert "# bashrc" in results["read"]
    assert (home / ".bashrc").read_text() == "# bashrc\n"
    assert (home / ".config/nvim/init.lua").read_text() == "-- init\n"
    assert not (store / "planted").exists() and not outside.exists()
    assert ed.prompts() == []
    status = ed.lua("return require('codecompanion').status()")
    assert "(landlock, not a project)" in status, status
    assert reason in ed.lua("return require('codecompanion').status_info().narrowed")
    assert reason in ed.lua("return vim.fn.execute('messages')")
    ed.nvim.command("checkhealth codecompanion")
    health = "\n".join(ed.nvim.current.buffer[:])
    assert f"this folder is not a project: {reason}" in health, health


def ollama_calls(calls: list[tuple[str, dict[str, object]]]) -> Turn:
    """Ollama's answer making `calls` (name, arguments)."""
    message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": n, "arguments": a}} for n, a in calls],
    }
    return Turn.ndjson(
        [{"model": "m", "message": message, "done": False}, {"model": "m", "done": True}]
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_config_file_a_command_makes_never_runs_in_the_host(
    mode: str, start_nvim: StartNvim, provider_server: LoopbackServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = project / "codecompanion.py"  # $CODECOMPANION_CONFIG names it; it is not there
    ran = tmp_path / "config-ran"
    planted = f"open({str(ran)!r}, 'w').write('ran in the host')"
    provider_server.enqueue(
        ollama_calls([("run_command", {"cmd": f"echo {json.dumps(planted)} > codecompanion.py"})]),
        Turn.ndjson(
            [{"model": "m", "message": {"role": "assistant", "content": "done"}, "done": True}]
        ),
    )
    address = provider_server.url.split("://", 1)[1]
    env = {"OLLAMA_HOST": address, "CODECOMPANION_CONFIG": str(config)}
    ed = start_nvim(cwd=project, env=env, setup={"permissions": {"mode": mode}})
    ed.open_chat()
    ed.send("@{run_command} go")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    assert not config.exists()
    ed.nvim.command("CodeCompanionReload")
    wait_for(lambda: "eload" in ed.lua("return vim.fn.execute('messages')"))
    assert not ran.exists()
    (aside,) = [p for p in project.iterdir() if p.name.startswith("codecompanion.py-held")]
    assert "ran in the host" in aside.read_text()


def vm_peak_mb(pid: int) -> float:
    """The most memory (resident) process `pid` has used, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def test_rules_imports_send_no_credential_and_read_no_more_than_the_cap(
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    from tests.support.faults import host_pid
    from tests.support.secrets import everything_shown, files_under

    home, env = throwaway_home(tmp_path)
    secret = "sk-CREDENTIAL-5f0c2a9e77"
    for name in (".codex/auth.json", ".claude/.credentials.json", ".ssh/id_rsa"):
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(f'{{"token": "{secret}"}}\n')
    project = home / "code/app"
    project.mkdir(parents=True)
    (project / "notes.md").symlink_to(home / ".ssh/id_rsa")
    with open(project / "big.md", "wb") as big:
        big.write(b"# big notes\n" + b"text " * 20_000)
        big.truncate(2 * 1024**3)  # 2 GB, sparse
    (project / "AGENTS.md").write_text(
        "Project rules. @~/.codex/auth.json @~/.claude/.credentials.json @notes.md @big.md\n"
    )
    provider_server.enqueue(openai_text("fine"))
    ed = start_nvim(config_file=config_file(""), cwd=project, env=env)
    ed.open_chat()
    ed.send("hello")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    body = json.dumps(provider_server.wait_for_requests(1)[0].body)
    assert "Project rules." in body and "# big notes" in body
    assert secret not in body
    assert secret not in everything_shown(ed)
    written = files_under(home / ".local")  # a chat saved meanwhile: read again
    assert any(p.endswith(".json") and "chats" in Path(p).parts for p in written)  # saved chat
    assert [p for p, text in written.items() if secret in text] == []
    assert vm_peak_mb(host_pid(ed)) < 300  # reading big.md whole would take 2 GB


PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63f8cfc0f00f0003860180a3a7c3ff0000000049454e44ae426082"
)


@pytest.mark.parametrize("mode", MODES)
def test_file_image_and_buffer_context_follow_no_link_to_a_secret(
    mode: str,
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    home, env = throwaway_home(tmp_path)
    secret = "KEY-MATERIAL-77e1b04c"
    (home / ".ssh").mkdir()
    (home / ".ssh/id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{secret}\n")
    project = home / "code/app"
    project.mkdir(parents=True)
    (project / "notes.md").symlink_to(home / ".ssh/id_rsa")  # as a cloned repository ships it
    (project / "shot.png").symlink_to(home / ".ssh/id_rsa")
    (project / "fake.png").write_text(f"not an image {secret}\n")
    (project / "dot.png").write_bytes(PNG)
    (project / "ok.txt").write_text("fine text\n")
    (home / "code/outside.txt").write_text(f"outside {secret}\n")
    (home / "code/also-outside.txt").write_text("allowed outside\n")
    provider_server.enqueue(openai_text("seen"))
    ed = start_nvim(
        config_file=config_file(""), cwd=project, env=env, setup={"permissions": {"mode": mode}}
    )
    ed.nvim.command("edit notes.md")  # the user opens the link: #{buffer} is that buffer
    ed.answer("No", "Yes")
    ed.open_chat()
    ed.send(
        "/file notes.md\n/image shot.png\n/image fake.png\n/image dot.png\n/file ok.txt\n"
        "/file ../outside.txt\n/file ../also-outside.txt\nlook at #{buffer}"
    )
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    body = json.dumps(provider_server.wait_for_requests(1)[0].body)
    assert secret not in body
    assert "fine text" in body and "allowed outside" in body
    assert "data:image/png;base64," in body  # dot.png, a real image, went
    questions = [p["prompt"] for p in ed.prompts()]
    assert len(questions) == 2 and all("outside the project" in q for q in questions), questions
    messages = (home / ".local/state/nvim/codecompanion.log").read_text()  # every notice
    for shown in ("buffer notes.md", "file notes.md", "shot.png", "fake.png", "outside.txt"):
        assert shown in messages, messages
    assert ".ssh, which holds secrets" in messages
    assert "fake.png is not a png image" in messages


@pytest.mark.parametrize("mode", MODES)
def test_a_key_a_command_prints_is_masked_everywhere(
    mode: str,
    start_nvim: StartNvim,
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    from tests.support.secrets import everything_shown, everything_written

    literal, from_env = "sk-literal-9f8e7d6c5b4a", "sk-from-env-1a2b3c4d5e6f"
    header, mcp_token = "tok-header-0011223344", "mcp-token-5566778899"
    config = tmp_path / "codecompanion.py"
    settings = {"url": f"{provider_server.url}/v1", "api_key": literal, "model": "gpt-test"}
    other = {"api_key": "env:CC_EDGE_KEY", "headers": {"X-Custom-Token": header}}
    servers = {"docs": {"cmd": ["true"], "env": {"API_TOKEN": mcp_token}}}
    config.write_text(
        "adapter = 'openai'\n"
        f"adapters = {{'openai': {settings!r}, 'anthropic': {other!r}}}\n"
        f"mcp = {{'servers': {servers!r}}}\n"
    )
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text(f"CC_EDGE_KEY={from_env}\n")  # a key that leaked to disk
    calls: list[tuple[str, str, dict[str, object]]] = [
        ("config", "run_command", {"cmd": f"cat {config}"}),
        ("env", "run_command", {"cmd": "cat .env"}),
        (
            "read",
            "read_file",
            {"filepath": ".env", "start_line_number_base_zero": 0, "end_line_number_base_zero": -1},
        ),
    ]
    provider_server.enqueue(openai_tool_calls(calls), openai_text("done"))
    ed = start_nvim(
        config_file=config,
        cwd=project,
        env={"CC_EDGE_KEY": from_env},
        setup={"permissions": {"mode": mode}, "log_level": "DEBUG"},
    )
    ed.answer("approve")  # read_file outside a review: nothing else asks in these modes
    ed.open_chat()
    ed.send("@{run_command} @{read_file} go")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    requests = provider_server.wait_for_requests(2)
    results = json.dumps(requests[1].body["messages"])
    assert results.count("CC_EDGE_KEY=***") == 2 and "'api_key': '***'" in results
    secrets = (literal, from_env, header, mcp_token)
    sent = " ".join(json.dumps(r.body) for r in requests)
    shown = everything_shown(ed)
    written = " ".join(everything_written(ed).values())
    for secret in secrets:
        assert secret not in sent, secret
        assert secret not in shown, secret
        assert secret not in written, secret


FORK_BOMB = """
import subprocess, time
children = []
try:
    for _ in range(300):
        children.append(subprocess.Popen(["sleep", "30"]))
except OSError as exc:
    print("refused after", len(children), type(exc).__name__)
print("started", len(children))
for child in children:
    child.kill()
"""


@pytest.mark.parametrize("mode", MODES)
def test_code_runner_shares_the_chats_process_cap(
    mode: str,
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    calls: list[tuple[str, str, dict[str, object]]] = [
        ("code", "code_runner", {"lang": "python", "code": FORK_BOMB}),
        ("cmd", "run_command", {"cmd": "for i in $(seq 300); do sleep 30 & done; wait"}),
    ]
    setup = {"permissions": {"mode": mode, "max_processes": 64}}
    extra = "opts = {'tools': {'code_runner': {'container': False}}}\n"
    _ed, results = chat_turn_with(
        start_nvim, config_file(extra), provider_server, project, setup, calls
    )
    assert "subprocess in the landlock sandbox" in results["code"], results["code"]
    assert "started 300" not in results["code"], results["code"]
    assert "refused after" in results["code"], results["code"]
    assert "status: exit code 0" not in results["cmd"], results["cmd"]


@pytest.mark.parametrize("mode", MODES)
def test_a_command_let_out_of_the_sandbox_shares_the_chats_process_cap(
    mode: str,
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "fork.py").write_text(FORK_BOMB)
    calls: list[tuple[str, str, dict[str, object]]] = [
        ("out", "run_command", {"cmd": "python3 fork.py", "unconfined": True}),
        ("after", "run_command", {"cmd": "echo fine"}),
    ]
    provider_server.enqueue(openai_tool_calls(calls), openai_text("done"))
    setup = {"permissions": {"mode": mode, "max_processes": 64}}
    ed = start_nvim(config_file=config_file(""), cwd=project, setup=setup)
    ed.open_chat()
    ed.answer("approve")  # leaving the sandbox is asked in every mode
    ed.send("@{run_command} go")
    ed.wait_event("CodeCompanionChatDone", timeout=60)
    sent = provider_server.wait_for_requests(2)[1].body
    results = {m["tool_call_id"]: m["content"] for m in sent["messages"] if m["role"] == "tool"}
    assert [p["prompt"] for p in ed.prompts()][0].count("OUTSIDE the sandbox") == 1
    out = results["out"]
    assert "sandbox: unconfined (the user approved leaving the sandbox)" in out, out
    assert "refused after" in out and "started 300" not in out, out
    assert "the chat's process cap (max_processes = 64)" in out, out
    assert "status: exit code 0" in results["after"] and "fine" in results["after"], results


def chat_turn_with(
    start_nvim: StartNvim,
    config: Path,
    server: LoopbackServer,
    project: Path,
    setup: dict[str, object],
    calls: list[tuple[str, str, dict[str, object]]],
) -> tuple[Editor, dict[str, str]]:
    """As chat_turn, with the config file and setup() given whole."""
    server.enqueue(openai_tool_calls(calls), openai_text("done"))
    ed = start_nvim(config_file=config, cwd=project, setup=setup)
    ed.open_chat()
    tools = " ".join("@{" + name + "}" for name in sorted({c[1] for c in calls}))
    ed.send(f"{tools} go")
    ed.wait_event("CodeCompanionChatDone", timeout=60)
    sent = server.wait_for_requests(2)[1].body
    return ed, {m["tool_call_id"]: m["content"] for m in sent["messages"] if m["role"] == "tool"}


@pytest.mark.parametrize("mode", MODES)
def test_a_worktree_and_git_dir_keep_their_git_folders(
    mode: str,
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    main = repository(tmp_path / "main")
    git(main, "worktree", "add", "-q", str(tmp_path / "worktree"))
    extra = tmp_path / "extra"
    extra.mkdir()
    git(extra, "init", "-q", "--bare", "dotfiles")
    marker = tmp_path / "planted-ran"
    planted = f"printf '[core]\\n\\tfsmonitor = touch {marker}\\n' >>"
    calls: list[tuple[str, str, dict[str, object]]] = [
        ("common", "run_command", {"cmd": f"{planted} {main}/.git/config"}),
        ("gitdir", "run_command", {"cmd": f"{planted} {extra}/dotfiles/config"}),
        ("ok", "run_command", {"cmd": f"echo fine > {extra}/ok.txt && echo fine > here.txt"}),
    ]
    setup = {"permissions": {"mode": mode, "writable": [str(main), str(extra)]}}
    env = {"GIT_DIR": str(extra / "dotfiles")}  # as `GIT_DIR=~/dotfiles nvim` users do
    provider_server.enqueue(openai_tool_calls(calls), openai_text("done"))
    ed = start_nvim(config_file=config_file(""), cwd=tmp_path / "worktree", env=env, setup=setup)
    ed.open_chat()
    ed.send("@{run_command} go")
    ed.wait_event("CodeCompanionChatDone", timeout=30)
    sent = provider_server.wait_for_requests(2)[1].body
    results = {m["tool_call_id"]: m["content"] for m in sent["messages"] if m["role"] == "tool"}
    assert "Read-only file system" in results["common"], results["common"]
    assert "Read-only file system" in results["gitdir"], results["gitdir"]
    assert "status: exit code 0" in results["ok"], results["ok"]
    assert "fsmonitor" not in (main / ".git/config").read_text()
    assert "fsmonitor" not in (extra / "dotfiles/config").read_text()
    assert ed.prompts() == []


@pytest.mark.parametrize("mode", MODES)
def test_ordinary_work_still_works_and_a_commit_leaves_the_sandbox_when_approved(
    mode: str,
    start_nvim: StartNvim,
    config_file: Callable[[str], Path],
    provider_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    import sys

    project = repository(tmp_path / "project")
    (project / "Makefile").write_text("all:\n\techo built > out.txt\n")
    (project / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    (project / "a.txt").write_text("a\nchanged\n")
    commit = "git -c user.name=t -c user.email=t@t commit -qam work"
    calls: list[tuple[str, str, dict[str, object]]] = [
        ("make", "run_command", {"cmd": "make"}),
        (
            "tests",
            "run_command",
            {"cmd": f"{sys.executable} -m pytest -q -p no:cacheprovider test_ok.py"},
        ),
        ("status", "run_command", {"cmd": "git status --short && git diff --stat"}),
        ("commit", "run_command", {"cmd": commit}),
        ("leave", "run_command", {"cmd": commit, "unconfined": True}),
    ]
    ed, results = chat_turn(
        start_nvim, config_file, provider_server, project, mode, calls, ("approve",)
    )
    for name in ("make", "tests", "status"):
        assert "status: exit code 0" in results[name], results[name]
    assert "1 passed" in results["tests"] and "a.txt" in results["status"]
    assert "Read-only file system" in results["commit"]  # .git is read-only in the sandbox...
    assert "status: exit code 0" in results["leave"], results["leave"]  # ...asked, approved
    (asked,) = [p["prompt"] for p in ed.prompts()]
    assert asked.startswith(f"Run the command `{commit}` OUTSI"), asked  # cut to the window
    assert git(project, "log", "-1", "--format=%s") == "work\n"
