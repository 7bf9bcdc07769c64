"""code_runner: a confined subprocess (limits, no network, scrubbed env) and a container path."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from codecompanion.messages import ToolCall
from codecompanion.tools.builtin import code_runner
from codecompanion.tools.builtin._support import sandbox
from tests.support.builtin import FakeTools, run_tool
from tests.support.fakes import ScriptedApprover
from tests.support.tools import builtin_system

LOCAL = {"container": False}


async def test_python_runs_in_a_fresh_directory_not_the_project(
    tools: FakeTools, project: Path
) -> None:
    code = "import os\nprint(os.getcwd())\nprint(sorted(os.listdir('.')))"
    out = await run_tool(code_runner, {"lang": "python", "code": code}, tools, opts=LOCAL)
    assert out.status == "success", out.for_llm
    assert "status: exit code 0" in out.for_llm and "language: python" in out.for_llm
    folder = out.for_llm.split("```\n")[1].splitlines()[0]
    assert folder != str(project) and "codecompanion-run-" in folder
    assert "['main.py']" in out.for_llm
    assert not Path(folder).exists()  # removed after the run
    assert out.for_user is not None and out.for_user.startswith("Ran python code (exit 0")


async def test_environment_is_scrubbed(tools: FakeTools, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "s3cr3t")
    code = "import os\nprint(sorted(os.environ))\nprint(os.environ['HOME'])"
    out = await run_tool(code_runner, {"lang": "py", "code": code}, tools, opts=LOCAL)
    assert out.status == "success"
    assert "s3cr3t" not in out.for_llm and "SECRET_TOKEN" not in out.for_llm
    assert "codecompanion-run-" in out.for_llm.split("stdout:")[1]


@pytest.mark.parametrize(
    ("lang", "code", "expect"),
    [
        ("bash", "echo $((6*7)); echo err >&2", "42"),
        ("sh", "printf 'a%sb\\n' x", "axb"),
        ("javascript", "console.log([1,2,3].map(x => x * 2).join(','))", "2,4,6"),
    ],
)
async def test_languages(tools: FakeTools, lang: str, code: str, expect: str) -> None:
    if lang == "javascript" and not any(
        (Path(p) / "node").exists() for p in os.environ.get("PATH", "").split(":")
    ):
        pytest.skip("node is not installed")
    out = await run_tool(code_runner, {"lang": lang, "code": code}, tools, opts=LOCAL)
    assert out.status == "success", out.for_llm
    assert expect in out.for_llm


async def test_failure_timeout_and_unknown_language(tools: FakeTools) -> None:
    out = await run_tool(
        code_runner, {"lang": "python", "code": "raise SystemExit(3)"}, tools, opts=LOCAL
    )
    assert out.status == "error" and "status: exit code 3" in out.for_llm
    slow = "import time\nprint('started', flush=True)\ntime.sleep(30)"
    out = await run_tool(
        code_runner, {"lang": "python", "code": slow}, tools, opts={**LOCAL, "timeout": 1500}
    )
    assert out.status == "timeout" and "timed out" in out.for_llm and "started" in out.for_llm
    out = await run_tool(code_runner, {"lang": "cobol", "code": "x"}, tools, opts=LOCAL)
    assert out.status == "error" and "Unknown language `cobol`" in out.for_llm
    assert "python" in out.for_llm


async def test_memory_cpu_and_file_size_limits(tools: FakeTools) -> None:
    hog = "x = bytearray(400 * 1024 * 1024)\nprint('allocated')"
    out = await run_tool(
        code_runner, {"lang": "python", "code": hog}, tools, opts={**LOCAL, "memory_mb": 128}
    )
    assert out.status == "error" and "MemoryError" in out.for_llm
    big = "open('big', 'wb').write(b'x' * 3 * 1024 * 1024)\nprint('wrote')"
    out = await run_tool(
        code_runner, {"lang": "python", "code": big}, tools, opts={**LOCAL, "file_mb": 1}
    )
    assert out.status == "error" and "wrote" not in out.for_llm
    spin = "while True: pass"
    out = await run_tool(
        code_runner, {"lang": "python", "code": spin}, tools, opts={**LOCAL, "timeout": 2000}
    )
    assert out.status in ("error", "timeout")  # the CPU limit (or the timeout) ends it


async def test_no_network_where_unshare_works(tools: FakeTools) -> None:
    if not await sandbox.network_isolation(Path("/tmp")):
        pytest.skip("unshare cannot make a network namespace here")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)\nprint('in')"
    try:
        out = await run_tool(code_runner, {"lang": "python", "code": code}, tools, opts=LOCAL)
    finally:
        server.close()
    assert out.status == "error" and "\nin\n" not in out.for_llm
    assert "no network" in out.for_llm


async def test_output_is_capped(tools: FakeTools) -> None:
    code = "print('y' * 100000)"
    out = await run_tool(
        code_runner, {"lang": "python", "code": code}, tools, opts={**LOCAL, "max_chars": 1000}
    )
    assert out.status == "success" and len(out.for_llm) < 3000


def _fake_runtime(folder: Path, name: str, daemon: bool) -> Path:
    """A `docker`/`podman` that logs its argv; `run` runs the command after the image locally."""
    log = folder / f"{name}.log"
    script = folder / name
    script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$*" >> "{log}"\n'
        f'case "$1" in info) exit {0 if daemon else 1};; image) exit 1;; pull) exit 0;; esac\n'
        'if [ "$1" = run ]; then\n'
        '  shift; while [ $# -gt 0 ]; do case "$1" in\n'
        "    --rm) shift;; --network|--memory|--cpus|--pids-limit|-v|-w) shift 2;;\n"
        '    *) shift; exec "$@";; esac; done\n'
        "fi\nexit 9\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return log


async def test_container_path_with_a_fake_docker(
    tools: FakeTools, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = _fake_runtime(bin_dir, "docker", daemon=True)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    opts = {"languages": {"python": {"image": "my/python:1"}}}
    out = await run_tool(code_runner, {"lang": "python", "code": "print(6*7)"}, tools, opts=opts)
    assert out.status == "success", out.for_llm
    assert "42" in out.for_llm and "ran in: docker (my/python:1)" in out.for_llm
    calls = log.read_text().splitlines()
    assert calls[0] == "info"
    assert calls[1] == "image inspect my/python:1" and calls[2] == "pull -q my/python:1"
    run = calls[3].split()
    assert run[:4] == ["run", "--rm", "--network", "none"]
    mount = run[run.index("-v") + 1]
    folder = mount.split(":")[0]
    assert mount == f"{folder}:{folder}" and "codecompanion-run-" in folder
    assert run[-3:] == ["my/python:1", "python3", f"{folder}/main.py"]


async def test_a_runtime_without_a_daemon_falls_back_to_a_process(
    tools: FakeTools, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = _fake_runtime(bin_dir, "docker", daemon=False)
    podman = _fake_runtime(bin_dir, "podman", daemon=True)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    out = await run_tool(code_runner, {"lang": "python", "code": "print(1)"}, tools)
    assert "ran in: podman (python:3-slim)" in out.for_llm
    assert log.read_text().splitlines() == ["info"]
    podman.unlink()
    (bin_dir / "podman").unlink()
    out = await run_tool(code_runner, {"lang": "python", "code": "print(1)"}, tools)
    assert "ran in: subprocess" in out.for_llm and out.status == "success"


async def test_asks_every_time_even_in_yolo_mode(project: Path) -> None:
    approver = ScriptedApprover("approve", "reject")
    tool_opts = {"code_runner": {"container": False}}
    system, chat = builtin_system(
        project, "code_runner", approver=approver, tool_opts=tool_opts, yolo=True
    )
    calls = [
        ToolCall("c1", "code_runner", {"lang": "python", "code": "print('one')"}),
        ToolCall("c2", "code_runner", {"lang": "python", "code": "print('two')"}),
    ]
    await system.run(calls)
    assert [r.call_id for r in approver.requests] == ["c1", "c2"]
    assert approver.requests[0].prompt == (
        "Run this python code? `print('one')` (in a container if docker or podman works, else "
        "unconfined)"
    )
    assert "one" in chat.results[0].for_llm and not chat.results[0].is_error
    assert chat.results[1].is_error  # rejected


async def test_the_user_can_allow_it(project: Path) -> None:
    opts = {"code_runner": {"container": False, "requires_approval": False}}
    approver = ScriptedApprover()
    system, chat = builtin_system(project, "code_runner", approver=approver, tool_opts=opts)
    await system.run([ToolCall("c1", "code_runner", {"lang": "sh", "code": "echo fine"})])
    assert approver.requests == [] and "fine" in chat.results[0].for_llm


def test_language_table_merges_user_entries() -> None:
    table = sandbox.languages(
        {"python": {"image": "py:x"}, "ruby2": {"cmd": ["ruby", "-w", "{file}"], "suffix": ".rb"}}
    )
    assert table["python"].image == "py:x" and table["python"].cmd == ("python3", "{file}")
    assert table["ruby2"].cmd == ("ruby", "-w", "{file}") and table["ruby2"].suffix == ".rb"
    assert sandbox.find_language(table, " JS ") == table["node"]
    assert sandbox.find_language(table, "fortran") is None
