"""run_process: process groups, timeout, cancellation, output caps, closed stdin."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from codecompanion.tools.runtime import process
from codecompanion.tools.runtime.process import run_process
from codecompanion.tools.runtime.protocol import cap_output
from tests.support.proctable import members, read_pgid, wait_for_file, with_marker


def _write_pid_script(tmp_path: Path) -> str:
    """A shell line that records its group id, starts two grandchildren and waits."""
    return f"echo $$ > {tmp_path}/pgid; sleep 30 & sleep 30 & wait"


async def test_success_collects_stdout_stderr_and_exit_code(tmp_path: Path) -> None:
    result = await run_process(
        ["sh", "-c", "echo out; echo err >&2; exit 3"], cwd=tmp_path, timeout=10
    )
    assert result.argv == ("sh", "-c", "echo out; echo err >&2; exit 3")
    assert (result.stdout, result.stderr, result.exit_code) == ("out\n", "err\n", 3)
    assert not (result.timed_out or result.truncated)
    assert 0 < result.duration < 10  # measured, and not the timeout


async def test_runs_in_cwd_with_extra_env(tmp_path: Path) -> None:
    result = await run_process(
        ["sh", "-c", 'pwd; echo "$CC_TEST_VAR"; test -n "$PATH" && echo path'],
        cwd=tmp_path,
        env={"CC_TEST_VAR": "hello"},
    )
    assert result.stdout.splitlines() == [str(tmp_path.resolve()), "hello", "path"]


async def test_new_session_own_process_group(tmp_path: Path) -> None:
    result = await run_process(
        [sys.executable, "-c", "import os; print(os.getpgid(0) == os.getpid(), os.getsid(0))"],
        cwd=tmp_path,
    )
    leader, sid = result.stdout.split()
    assert leader == "True"
    assert int(sid) != os.getsid(0)


async def test_timeout_kills_whole_group_including_grandchildren(tmp_path: Path) -> None:
    result = await run_process(
        ["sh", "-c", "echo started; " + _write_pid_script(tmp_path)], cwd=tmp_path, timeout=0.5
    )
    pgid = read_pgid(tmp_path)
    assert result.timed_out
    assert result.exit_code is None
    assert result.stdout == "started\n"
    assert members({pgid}) == []


async def test_process_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    script = f"trap '' TERM; echo $$ > {tmp_path}/pgid; sleep 30"
    result = await run_process(["sh", "-c", script], cwd=tmp_path, timeout=0.3)
    assert result.timed_out
    assert members({read_pgid(tmp_path)}) == []


async def test_cancellation_kills_group_and_reraises(tmp_path: Path) -> None:
    task = asyncio.create_task(
        run_process(["sh", "-c", _write_pid_script(tmp_path)], cwd=tmp_path, timeout=None)
    )
    await wait_for_file(tmp_path / "pgid")
    pgid = read_pgid(tmp_path)
    assert members({pgid})
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert members({pgid}) == []


@pytest.mark.parametrize("yields", [0, 1, 3, 10])
async def test_cancel_while_starting_leaves_nothing_behind(tmp_path: Path, yields: int) -> None:
    marker = f"3{yields}.4567"
    script = f"sleep {marker} & sleep {marker}"
    task = asyncio.create_task(run_process(["sh", "-c", script], cwd=tmp_path, timeout=None))
    for _ in range(yields):
        await asyncio.sleep(0)
    task.cancel()
    # A generous bound: the old failure mode waited for the 30 s grandchildren to exit.
    done, _ = await asyncio.wait({task}, timeout=15)
    assert task in done
    assert with_marker(marker) == []
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_background_child_holding_pipes_does_not_hang(tmp_path: Path) -> None:
    script = f"echo $$ > {tmp_path}/pgid; sleep 30 & echo done"
    result = await run_process(["sh", "-c", script], cwd=tmp_path, timeout=20)
    assert result.exit_code == 0
    assert not result.timed_out
    assert result.stdout == "done\n"
    assert members({read_pgid(tmp_path)}) == []


async def test_output_beyond_cap_is_dropped_but_child_finishes(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write('x' * 300000); sys.stderr.write('e' * 10); print('end')"
    result = await run_process([sys.executable, "-c", code], cwd=tmp_path, max_output=1000)
    assert result.exit_code == 0
    assert result.truncated
    assert result.stdout == "x" * 1000
    assert result.stderr == "e" * 10


async def test_stdin_is_closed(tmp_path: Path) -> None:
    code = "import sys; data = sys.stdin.read(); print(repr(data))"
    result = await run_process([sys.executable, "-c", code], cwd=tmp_path, timeout=10)
    assert result.stdout == "''\n"
    assert not result.timed_out


async def test_shell_read_gets_eof(tmp_path: Path) -> None:
    result = await run_process(
        ["sh", "-c", "if read line; then echo got; else echo eof; fi"], cwd=tmp_path, timeout=10
    )
    assert result.stdout == "eof\n"


async def test_missing_program_is_a_result_not_an_exception(tmp_path: Path) -> None:
    result = await run_process(["definitely-not-a-program-xyz"], cwd=tmp_path)
    assert result.exit_code is None
    assert "definitely-not-a-program-xyz" in result.stderr


async def test_empty_argv(tmp_path: Path) -> None:
    result = await run_process([], cwd=tmp_path)
    assert result.exit_code is None
    assert result.stderr


async def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    result = await run_process(["printf", "a\\377b"], cwd=tmp_path)
    assert result.stdout == "a\ufffdb"


async def test_an_ended_group_is_unguarded_after_the_result_not_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watch = process.group_watch()
    added: list[int] = []
    removed: list[int] = []
    monkeypatch.setattr(watch, "add", added.append)
    monkeypatch.setattr(watch, "remove", removed.append)
    result = await run_process(["sh", "-c", "exit 0"], cwd=tmp_path, timeout=10)
    assert result.exit_code == 0 and len(added) == 1
    assert removed == []  # the watchdog's wake waits: the result's next request goes first
    await asyncio.sleep(process.TIDY_DELAY + 0.1)
    assert removed == added


def test_cap_output_short_text_unchanged() -> None:
    assert cap_output("abc", 10) == ("abc", False)


def test_cap_output_keeps_head_and_tail_with_note() -> None:
    text = "".join(f"line {i:04d}\n" for i in range(1000))
    capped, cut = cap_output(text, 200)
    assert cut
    assert capped.startswith("line 0000\n")
    assert capped.endswith("line 0999\n")
    assert "characters cut" in capped
    note = next(line for line in capped.splitlines() if "cut" in line)
    removed = int(note.split()[1])
    kept = capped.replace(note + "\n", "")
    assert len(kept) + removed == len(text)
    assert len(capped) < 300


def test_cap_output_without_newlines() -> None:
    capped, cut = cap_output("a" * 100 + "b" * 100, 50)
    assert cut
    assert capped.startswith("a" * 25)
    assert capped.endswith("b" * 25)
