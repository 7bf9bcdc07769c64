"""run_process's child watched by the loop: exit through a pidfd, pipes read by callbacks."""

from __future__ import annotations

import errno
import hashlib
import os
import sys
import threading
from pathlib import Path

import pytest

from codecompanion.tools.runtime.process import run_process
from tests.support.sessions import command_session


async def test_no_thread_is_started_per_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfds on this system: a thread waits for each child here")
    seen: list[str] = []
    original = threading.Thread.start

    def counting_start(self: threading.Thread) -> None:
        seen.append(self.name)
        original(self)

    monkeypatch.setattr(threading.Thread, "start", counting_start)
    for _ in range(3):
        result = await run_process(["sh", "-c", "echo hi; exit 3"], cwd=tmp_path, timeout=10)
        assert (result.exit_code, result.stdout) == (3, "hi\n")
    assert seen == []


async def test_without_pidfds_a_thread_waits_and_the_result_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pidfds(pid: int, flags: int = 0) -> int:
        raise OSError(errno.ENOSYS, "pidfd_open not implemented")

    monkeypatch.setattr(os, "pidfd_open", no_pidfds, raising=False)
    result = await run_process(["sh", "-c", "echo out; echo err >&2; exit 5"], cwd=tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (5, "out\n", "err\n")
    killed = await run_process(["sh", "-c", "kill -TERM $$"], cwd=tmp_path, timeout=10)
    assert killed.exit_code == -15


async def test_a_signal_gives_a_negative_exit_code(tmp_path: Path) -> None:
    result = await run_process(["sh", "-c", "kill -KILL $$"], cwd=tmp_path, timeout=10)
    assert result.exit_code == -9
    assert not result.timed_out


async def test_stdin_data_larger_than_a_pipe_is_written_whole(tmp_path: Path) -> None:
    data = bytes(range(256)) * 4096  # 1 MiB: the pipe takes 64 KiB at a time
    code = "import sys, hashlib; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())"
    result = await run_process([sys.executable, "-c", code], cwd=tmp_path, stdin_data=data)

    assert result.exit_code == 0
    assert result.stdout.strip() == hashlib.sha256(data).hexdigest()


async def test_stdin_data_a_child_never_reads_does_not_hang(tmp_path: Path) -> None:
    result = await run_process(
        ["sh", "-c", "echo quick"], cwd=tmp_path, timeout=10, stdin_data=b"y" * 1_000_000
    )
    assert (result.exit_code, result.stdout, result.timed_out) == (0, "quick\n", False)


async def test_output_on_both_streams_arrives_whole_and_in_order(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "for i in range(20000):\n"
        "    print(f'line {i}')\n"
        "    if i % 1000 == 0: print(f'err {i}', file=sys.stderr, flush=True)\n"
    )
    result = await run_process([sys.executable, "-c", code], cwd=tmp_path, timeout=20)
    assert result.stdout.splitlines() == [f"line {i}" for i in range(20000)]
    assert result.stderr.splitlines() == [f"err {i}" for i in range(0, 20000, 1000)]


async def test_no_descriptor_is_left_open(tmp_path: Path) -> None:
    before = set(os.listdir("/proc/self/fd"))
    for cmd in ("echo a", "exit 1", "sleep 5"):
        await run_process(["sh", "-c", cmd], cwd=tmp_path, timeout=0.3, stdin_data=b"x")
    assert set(os.listdir("/proc/self/fd")) <= before


def test_a_command_gets_the_hosts_cpu_priority_in_its_own_session(tmp_path: Path) -> None:
    # The host in a session at nice 4; its command starts a session of its own (a group of its
    # own for the scheduler), which must not fall back to nice 0.
    script = (
        "import asyncio, os, sys\n"
        "from codecompanion.tools.runtime.process import run_process\n"
        "argv = ['sh', '-c', 'ps -o sid= -p $$; cat /proc/self/autogroup']\n"
        "result = asyncio.run(run_process(argv, cwd='.', timeout=10))\n"
        "print(os.getsid(0), result.stdout)\n"
    )
    host_sid, command_sid, group = command_session(script, tmp_path, nice=4)
    assert host_sid != command_sid
    assert group.endswith("nice 4"), group
