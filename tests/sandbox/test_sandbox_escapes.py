"""The command sandbox on this kernel: run_command in `sandboxed` mode asks nothing, every escape
fails (writes outside, git's control files, secrets, TCP/UDP/Unix sockets and the running
Neovim's socket, daemons, signals), ordinary work succeeds, and `unconfined` is said honestly
when the sandbox is off."""

# ruff: noqa: E501 - the tables of shell lines below read best one line per escape

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from codecompanion.messages import ToolCall
from codecompanion.sandbox.commands import CommandSandbox
from codecompanion.sandbox.probe import Detector, detect
from codecompanion.sandbox.settings import Permissions, read_permissions
from codecompanion.tools import tool_registry
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import ScriptedApprover
from tests.support.nvim import nvim_binary, wait_for
from tests.support.proctable import kill_groups, with_marker
from tests.support.tools import builtin_system

FOUND = detect()
needs_landlock = pytest.mark.skipif(
    FOUND.kind != "landlock" or not FOUND.mounts, reason=f"no full sandbox here: {FOUND.reason}"
)
SECRET = "SECRET-KEY-MATERIAL-7f3a"


@dataclass
class Listener:
    """A server on loopback that records whatever reaches it."""

    address: object
    hits: list[bytes] = field(default_factory=list)


def _serve_stream(server: socket.socket, hits: list[bytes]) -> None:
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        hits.append(b"connect")
        conn.close()


def _serve_datagrams(server: socket.socket, hits: list[bytes]) -> None:
    while True:
        try:
            hits.append(server.recv(100))
        except OSError:
            return


@dataclass
class World:
    """A project, a home with secrets, an outside folder, servers and a Neovim to escape to."""

    project: Path
    home: Path
    outside: Path
    tcp: Listener
    udp: Listener
    unix: Listener
    abstract: Listener
    nvim_socket: str
    victim: int  # a process outside the sandbox


def _listen(kind: int, family: int, address: object) -> tuple[socket.socket, Listener]:
    server = socket.socket(family, kind)
    server.bind(address)  # type: ignore[arg-type]
    listener = Listener(server.getsockname() if family != socket.AF_UNIX else address)
    if kind == socket.SOCK_STREAM:
        server.listen()
        target = _serve_stream
    else:
        target = _serve_datagrams
    threading.Thread(target=target, args=(server, listener.hits), daemon=True).start()
    return server, listener


def _nvim_answers(path: str) -> bool:
    """True when Neovim answers msgpack-rpc on `path`: nvim_eval("1+1") gives 2."""
    with socket.socket(socket.AF_UNIX) as conn:
        try:
            conn.connect(path)
        except OSError:
            return False
        conn.sendall(b"\x94\x00\x01\xa9nvim_eval\x91\xa31+1")
        return conn.recv(100) == b"\x94\x01\x01\xc0\x02"


def _git(project: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
    }
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    base = tmp_path_factory.mktemp("sandbox")
    project, home, outside = base / "project", base / "home", base / "outside"
    for folder in (project, home / ".ssh", home / ".aws", outside):
        folder.mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SECRET)
    (home / ".aws" / "credentials").write_text(SECRET)
    (home / ".netrc").write_text(SECRET)
    (home / ".bashrc").write_text("# bashrc\n")
    (outside / "victim.txt").write_text("intact\n")
    (project / "a.txt").write_text("tracked\n")
    (project / "codecompanion.py").write_text("# the plugin's config\n")
    (project / "out-link").symlink_to(outside)
    _git(project, "init", "-q")
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "init")
    servers = []
    tcp_server, tcp = _listen(socket.SOCK_STREAM, socket.AF_INET, ("127.0.0.1", 0))
    udp_server, udp = _listen(socket.SOCK_DGRAM, socket.AF_INET, ("127.0.0.1", 0))
    unix_server, unix = _listen(socket.SOCK_STREAM, socket.AF_UNIX, str(base / "service.sock"))
    name = f"\0cc-test-{uuid.uuid4().hex[:8]}"
    abstract_server, abstract = _listen(socket.SOCK_STREAM, socket.AF_UNIX, name)
    servers = [tcp_server, udp_server, unix_server, abstract_server]
    nvim_socket = str(base / "nvim.sock")
    nvim = subprocess.Popen(
        [nvim_binary(), "--headless", "--clean", "-n", "--listen", nvim_socket],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    victim = subprocess.Popen(["sleep", "600"])
    wait_for(lambda: _nvim_answers(nvim_socket))
    yield World(project, home, outside, tcp, udp, unix, abstract, nvim_socket, victim.pid)
    for process in (nvim, victim):
        process.kill()
        process.wait()
    for server in servers:
        server.close()
    shutil.rmtree(base, ignore_errors=True)


def _system(world: World, permissions: Permissions, mode: str = "sandboxed") -> ToolSystem:
    sandbox = CommandSandbox(permissions, Detector(), (str(world.project / "codecompanion.py"),))
    reject = ScriptedApprover(default="reject")
    tools, _chat = builtin_system(
        world.project, "run_command", approver=reject, sandbox=sandbox, mode=mode
    )
    return tools


@pytest.fixture
def home(world: World, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(world.home))
    return world.home


async def run(tools: ToolSystem, cmd: str) -> tuple[str, str]:
    """Run one command through the tool system: (status, the model's text)."""
    chat = tools.chat
    call_id = f"c{uuid.uuid4().hex[:6]}"
    outcome = await tools.run([ToolCall(call_id, "run_command", {"cmd": cmd})])
    assert tools.approver.requests == [], "the sandboxed mode asked the user"
    return outcome.statuses[call_id], chat.result(call_id).for_llm


def nvim_request(path: str, outside: Path) -> str:
    """A Python one-liner asking Neovim, over its socket, to write a file outside."""
    # msgpack: [0, 1, "nvim_command", ["call writefile(['x'], '<file>')"]]
    command = f"call writefile(['x'], '{outside}/from-nvim.txt')".encode()
    payload = b"\x94\x00\x01\xacnvim_command\x91\xda" + len(command).to_bytes(2, "big") + command
    return (
        f'{sys.executable} -c "import socket,time; s=socket.socket(socket.AF_UNIX); '
        f"s.connect('{path}'); s.sendall(bytes.fromhex('{payload.hex()}')); time.sleep(0.3)\""
    )


def escapes(w: World) -> list[tuple[str, str, Callable[[], bool]]]:
    """(name, command line, whether the escape happened)."""
    out, home, py = w.outside, w.home, sys.executable
    victim = out / "victim.txt"

    def exists(path: Path) -> Callable[[], bool]:
        return lambda: os.path.lexists(path)

    def changed(path: Path, text: str) -> Callable[[], bool]:
        return lambda: not path.exists() or path.read_text() != text

    hooks = w.project / ".git" / "hooks"
    config = (w.project / ".git" / "config").read_text()
    return [
        ("append to ~/.bashrc", "echo pwned >> ~/.bashrc", changed(home / ".bashrc", "# bashrc\n")),
        ("write ~/.profile", "echo pwned > $HOME/.profile", exists(home / ".profile")),
        ("write ..", "echo x > ../dotdot.txt", exists(w.project.parent / "dotdot.txt")),
        ("write an absolute path", f"echo x > {out}/abs.txt", exists(out / "abs.txt")),
        ("write /etc", "touch /etc/cc-escape", exists(Path("/etc/cc-escape"))),
        ("write shared /tmp", "echo x > /tmp/cc-escape-tmp", exists(Path("/tmp/cc-escape-tmp"))),
        ("new symlink out", f"ln -s {out} l1 && echo x > l1/sym.txt", exists(out / "sym.txt")),
        ("planted symlink", "echo x > out-link/planted.txt", exists(out / "planted.txt")),
        ("hard link", f"ln {victim} hl && echo x >> hl", changed(victim, "intact\n")),
        ("truncate outside", f"truncate -s0 {victim}", changed(victim, "intact\n")),
        ("delete outside", f"rm -f {victim}", changed(victim, "intact\n")),
        ("rename out", f"mv a.txt {out}/moved.txt", exists(out / "moved.txt")),
        ("mkdir outside", f"mkdir {out}/newdir", exists(out / "newdir")),
        ("python write", f"{py} -c \"open('{out}/py.txt','w').write('x')\"", exists(out / "py.txt")),
        ("perl write", f"perl -e 'open(F, \">\", \"{out}/pl.txt\") or die \"$!\"'", exists(out / "pl.txt")),
        ("node write", f"node -e \"require('fs').writeFileSync('{out}/n.txt','x')\"", exists(out / "n.txt")),
        ("sh -c write", f"sh -c 'echo x > {out}/sh.txt'", exists(out / "sh.txt")),
        ("plant a hook", f"echo 'touch {out}/hook' > .git/hooks/pre-commit", exists(hooks / "pre-commit")),
        ("python hook", f"{py} -c \"open('.git/hooks/post-checkout','w')\"", exists(hooks / "post-checkout")),
        ("git config", "git config core.hooksPath /tmp", changed(w.project / ".git" / "config", config)),
        ("append .git/config", "echo '[core]' >> .git/config", changed(w.project / ".git" / "config", config)),
        ("remove hooks", "rm -rf .git/hooks", lambda: not hooks.exists()),
        ("move .git away", "mv .git .git-old", lambda: not (w.project / ".git").exists()),
        ("plugin config", "echo x >> codecompanion.py", changed(w.project / "codecompanion.py", "# the plugin's config\n")),
        ("remount .git", f"mount -o remount,rw {w.project}/.git && touch .git/x", exists(w.project / ".git" / "x")),
        ("unmount .git", f"umount {w.project}/.git && touch .git/y", exists(w.project / ".git" / "y")),
        ("read ssh key", "cat ~/.ssh/id_ed25519", lambda: False),
        ("python ssh key", f"{py} -c \"print(open('{home}/.ssh/id_ed25519').read())\"", lambda: False),
        ("read aws", "cat ~/.aws/credentials", lambda: False),
        ("read netrc", "cat ~/.netrc", lambda: False),
        ("tcp", f"{py} -c \"import socket; socket.create_connection({w.tcp.address!r})\"", lambda: bool(w.tcp.hits)),
        ("bash /dev/tcp", f"bash -c 'echo x > /dev/tcp/127.0.0.1/{w.tcp.address[1]}'", lambda: bool(w.tcp.hits)),  # type: ignore[index]
        ("udp", f"{py} -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', {w.udp.address!r})\"", lambda: bool(w.udp.hits)),
        ("unix socket", f"{py} -c \"import socket; socket.socket(socket.AF_UNIX).connect('{w.unix.address}')\"", lambda: bool(w.unix.hits)),
        ("abstract socket", f"{py} -c \"import socket; socket.socket(socket.AF_UNIX).connect({w.abstract.address!r})\"", lambda: bool(w.abstract.hits)),
        ("neovim's socket", nvim_request(w.nvim_socket, out), exists(out / "from-nvim.txt")),
        ("perl to neovim", f"perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => \"{w.nvim_socket}\") or die \"$!\"'", lambda: False),
        ("signal a process", f"kill -9 {w.victim}", lambda: not Path(f"/proc/{w.victim}").exists()),
        ("read its environment", f"cat /proc/{w.victim}/environ", lambda: False),
    ]  # fmt: skip


ESCAPE_NAMES = [
    "append to ~/.bashrc", "write ~/.profile", "write ..", "write an absolute path", "write /etc",
    "write shared /tmp", "new symlink out", "planted symlink", "hard link", "truncate outside",
    "delete outside", "rename out", "mkdir outside", "python write", "perl write", "node write",
    "sh -c write", "plant a hook", "python hook", "git config", "append .git/config",
    "remove hooks", "move .git away", "plugin config", "remount .git", "unmount .git",
    "read ssh key", "python ssh key", "read aws", "read netrc", "tcp", "bash /dev/tcp", "udp",
    "unix socket", "abstract socket", "neovim's socket", "perl to neovim", "signal a process",
    "read its environment",
]  # fmt: skip


@needs_landlock
def test_the_neovim_socket_and_the_servers_answer_from_outside(world: World) -> None:
    """The escapes below are real: unconfined, the same requests do reach their targets."""
    assert _nvim_answers(world.nvim_socket)
    written = world.outside / "from-nvim.txt"
    subprocess.run(nvim_request(world.nvim_socket, world.outside), shell=True, check=True)
    assert wait_for(written.exists)  # Neovim ran the command for an unconfined process
    written.unlink()
    with socket.create_connection(world.tcp.address) as _conn:  # type: ignore[arg-type]
        pass
    wait_for(lambda: world.tcp.hits)
    world.tcp.hits.clear()


@needs_landlock
@pytest.mark.parametrize("name", ESCAPE_NAMES)
async def test_an_escape_fails_without_a_question(world: World, home: Path, name: str) -> None:
    found = {n: (cmd, check) for n, cmd, check in escapes(world)}
    assert len(found) == len(ESCAPE_NAMES) >= 30
    cmd, escaped = found[name]
    status, text = await run(_system(world, read_permissions({})), cmd)
    # It saw the refusal; a denied file reads as empty (it is hidden by /dev/null).
    assert status == "error" or name == "read netrc", text
    time.sleep(0.05)
    assert not escaped(), text
    assert SECRET not in text
    assert status == "success" or "note: the command ran in a sandbox" in text
    assert "sandbox: landlock sandbox" in text


@needs_landlock
async def test_a_daemon_does_not_outlive_its_command(world: World) -> None:
    mark = f"ccdaemon{uuid.uuid4().hex[:8]}"
    try:
        cmd = f"env -i setsid sh -c 'sleep 300; echo {mark}' >/dev/null 2>&1 < /dev/null &"
        status, text = await run(_system(world, read_permissions({})), cmd)
        assert status == "success", text
        assert wait_for(lambda: not with_marker(mark), timeout=5)
    finally:
        kill_groups({p.pgid for p in with_marker(mark)})


@needs_landlock
async def test_the_process_limit_holds(world: World) -> None:
    permissions = read_permissions({"max_processes": 20})
    cmd = "for i in $(seq 60); do sleep 5 & done; wait"
    status, text = await run(_system(world, permissions), cmd)
    assert status == "error" and ("fork" in text.lower() or "resource" in text.lower()), text


ORDINARY = [
    ("git status", "git status --short && git diff --stat"),
    ("compile with system headers", "printf '#include <stdio.h>\\nint main(void){puts(\"hi\");}\\n' > hello.c && cc -o build/hello hello.c && ./build/hello"),
    ("make", "printf 'all:\\n\\techo built > build/out.txt\\n' > Makefile && make && cat build/out.txt"),
    ("a test runner", f"printf 'def test_ok():\\n    assert 1\\n' > test_x.py && {sys.executable} -m pytest -q -p no:cacheprovider test_x.py"),
    ("private temp", "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\""),
    ("read system headers", "head -c 100 /usr/include/stdio.h > /dev/null"),
    ("node and perl", "node -e 'console.log(1)' && perl -e 'print 2'"),
    ("asyncio (socketpair)", f"{sys.executable} -c 'import asyncio; asyncio.run(asyncio.sleep(0))'"),
]  # fmt: skip


@needs_landlock
@pytest.mark.parametrize("cmd", [c for _n, c in ORDINARY], ids=[n for n, _c in ORDINARY])
async def test_ordinary_work_succeeds_without_a_question(world: World, cmd: str) -> None:
    (world.project / "build").mkdir(exist_ok=True)
    status, text = await run(_system(world, read_permissions({})), cmd)
    assert status == "success", text


@needs_landlock
async def test_git_diff_sees_an_edit(world: World) -> None:
    (world.project / "a.txt").write_text("tracked\nedited\n")
    try:
        status, text = await run(_system(world, read_permissions({})), "git diff")
        assert status == "success" and "+edited" in text, text
    finally:
        (world.project / "a.txt").write_text("tracked\n")


async def test_switched_off_the_sandbox_says_unconfined_and_asks(world: World) -> None:
    tools = _system(world, read_permissions({"sandbox": False}))
    approver = tools.approver
    assert isinstance(approver, ScriptedApprover)
    approver.default = "approve"  # type: ignore[assignment]
    call_id = "off"
    outcome = await tools.run([ToolCall(call_id, "run_command", {"cmd": "echo hi"})])
    assert outcome.statuses[call_id] == "success"
    assert [r.prompt for r in approver.requests] == ["Run the command `echo hi`? (unconfined)"]
    text = tools.chat.result(call_id).for_llm
    assert "sandbox: unconfined" in text
    assert tools.sandbox is not None and tools.sandbox.kind == "none"


@needs_landlock
async def test_leaving_the_sandbox_is_asked_even_in_yolo_and_remembered_per_command(
    world: World,
) -> None:
    tools = _system(world, read_permissions({}), mode="yolo")
    approver = tools.approver
    assert isinstance(approver, ScriptedApprover)
    approver.answers = ["always"]
    line = f"echo out > {world.outside}/approved.txt"
    try:
        for call_id in ("first", "second"):
            args = {"cmd": line, "unconfined": True}
            outcome = await tools.run([ToolCall(call_id, "run_command", args)])
            assert outcome.statuses[call_id] == "success"
        assert approver.prompts == [f"Run the command `{line}` OUTSIDE the sandbox (unconfined)?"]
        assert approver.requests[0].always_scope == "command"
        text = tools.chat.result("second").for_llm
        assert "sandbox: unconfined (the user approved leaving the sandbox)" in text
        # The same line inside the sandbox still runs confined (and fails), without a question.
        outcome = await tools.run([ToolCall("third", "run_command", {"cmd": line + "2"})])
        assert outcome.statuses["third"] == "error" and len(approver.requests) == 1
    finally:
        (world.outside / "approved.txt").unlink(missing_ok=True)


@needs_landlock
@pytest.mark.parametrize("native", [True, False], ids=["native launcher", "in-process launcher"])
async def test_both_launchers_confine_and_report_what_cannot_start(
    world: World, native: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codecompanion.sandbox import launcher
    from codecompanion.tools.runtime.process import run_process

    if native and launcher.native_launcher() is None:
        pytest.skip("codecompanion-confine is not built (no C compiler)")
    if not native:
        monkeypatch.setattr(launcher, "native_launcher", lambda: None)
    sandbox = CommandSandbox(read_permissions({}), Detector())
    lines = {
        f"echo x > {world.outside}/both.txt": 2,
        "echo x > .git/hooks/both": 2,
        f"{sys.executable} -c \"import socket; socket.socket(socket.AF_UNIX).connect('{world.unix.address}')\"": 1,
        "echo fine > both-ok.txt": 0,
    }  # fmt: skip
    for line, code in lines.items():
        launch = sandbox.launch(world.project)
        assert launch is not None and (launch.native is not None) is native
        result = await run_process(["sh", "-c", line], cwd=world.project, sandbox=launch)
        assert result.exit_code == code, (line, result.stderr)
    assert not (world.outside / "both.txt").exists() and not world.unix.hits
    (world.project / "both-ok.txt").unlink()
    missing = await run_process(
        ["no-such-program-x"], cwd=world.project, sandbox=sandbox.launch(world.project)
    )
    assert not missing.started and "No such file" in missing.stderr


@needs_landlock
async def test_without_a_mount_namespace_landlock_alone_keeps_git_and_secrets(
    world: World, home: Path
) -> None:
    from dataclasses import replace

    found = replace(FOUND, mounts=False)  # as where user namespaces are refused
    sandbox = CommandSandbox(read_permissions({}), Detector(found))
    tools = _system(world, read_permissions({}))
    tools.sandbox = sandbox
    (world.project / "src").mkdir(exist_ok=True)
    refused = {
        "echo x > .git/hooks/pre-push": world.project / ".git/hooks/pre-push",
        f"echo x > {world.outside}/nomnt.txt": world.outside / "nomnt.txt",
        "cat ~/.ssh/id_ed25519 > src/key.txt": world.project / "src/key.txt",
        "echo x > top-level-new.txt": world.project / "top-level-new.txt",
    }
    for cmd, path in refused.items():
        status, text = await run(tools, cmd)
        assert status == "error", text
        assert not path.exists() or SECRET not in path.read_text(), text
        path.unlink(missing_ok=True)
    status, text = await run(
        tools, "echo ok > src/made.txt && cat src/made.txt && git status --short"
    )
    assert status == "success" and "ok" in text, text


@needs_landlock
async def test_a_user_tools_cmds_and_code_runner_run_confined(world: World) -> None:
    line = f"echo x > {world.outside}/from-cmds.txt"
    writer = {
        "name": "writer",
        "cmds": [["sh", "-c", line]],
        "schema": {
            "type": "function",
            "function": {
                "name": "writer",
                "description": "writes a file",
                "parameters": {"type": "object", "properties": {}},
            },
        },
        "opts": {"requires_approval": True},
    }
    tools, _chat = builtin_system(
        world.project,
        "writer",
        "code_runner",
        registry=tool_registry({"writer": writer}, tool_opts={"code_runner": {"container": False}}),
        approver=ScriptedApprover(default="reject"),
        sandbox=CommandSandbox(read_permissions({}), Detector()),
        mode="sandboxed",
    )
    code = f"open('{world.outside}/from-code.txt', 'w').write('x')"
    calls = [
        ToolCall("w", "writer", {}),
        ToolCall("c", "code_runner", {"lang": "python", "code": code}),
    ]
    outcome = await tools.run(calls)
    chat = tools.chat
    assert tools.approver.requests == []
    assert outcome.statuses == {"w": "error", "c": "error"}, chat.result("c").for_llm
    assert "Permission denied" in chat.result("w").for_llm
    assert "in the landlock sandbox" in chat.result("c").for_llm
    assert not (world.outside / "from-cmds.txt").exists()
    assert not (world.outside / "from-code.txt").exists()
