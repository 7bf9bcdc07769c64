"""The watchdog that kills tool process groups when the host dies: small, and it kills what is
registered (also a group that ignores SIGTERM) and every process carrying the host's marker
(one that left its group with setsid), and nothing that was unregistered or unmarked."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path

from codecompanion.tools.runtime.child_env import RUN_MARKER
from codecompanion.tools.runtime.groupwatch import GroupWatch
from tests.support.proctable import wait_until_gone, with_marker
from tests.support.sessions import command_session


def start_group(
    word: str, script: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """A shell in its own process group running `script`, with `word` in its command line."""
    return subprocess.Popen(
        ["sh", "-c", f"{script}; : {word}"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=None if env is None else {**os.environ, **env},
    )


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
        line = next(line for line in handle if line.startswith("VmRSS:"))
    return int(line.split()[1])


def test_the_watchdog_kills_registered_groups_when_the_host_goes() -> None:
    word = f"ccwatch{uuid.uuid4().hex[:10]}"
    plain = start_group(word, "sleep 60 & sleep 61")
    stubborn = start_group(word, "trap '' TERM; sleep 62 & sleep 63")
    spared = start_group(word, "sleep 64")
    watch = GroupWatch()
    # Left its group (never registered), but carries this host's marker: it dies too.
    escaped = start_group(word, "sleep 65", {RUN_MARKER: f"{watch.token}.7"})
    unmarked = start_group(word, "sleep 66", {RUN_MARKER: "another-host.7"})
    watch.start()
    proc = watch._proc
    assert proc is not None and proc.stdin is not None
    try:
        for group in (plain, stubborn, spared):
            watch.add(group.pid)
        watch.remove(spared.pid)
        time.sleep(0.2)
        assert rss_kib(proc.pid) <= 5 * 1024  # a Python watchdog took about 9 MiB
        assert len(with_marker(word)) >= 5
        proc.stdin.close()  # what the kernel does when the host dies, however it dies
        proc.wait(timeout=5)
        left = wait_until_gone({plain.pid, stubborn.pid, escaped.pid}, 3)
        assert left == [], f"registered or marked processes outlived the host: {left}"
        assert spared.poll() is None  # unregistered: not the watchdog's to kill
        assert unmarked.poll() is None  # another host's marker
    finally:
        for group in (plain, stubborn, spared, escaped, unmarked):
            subprocess.run(["kill", "-KILL", "--", f"-{group.pid}"], stderr=subprocess.DEVNULL)
            group.wait()


def test_a_finished_runs_sweep_reads_only_processes_started_since_it_began() -> None:
    from codecompanion.tools.runtime.descendants import _entries, marked

    word = f"ccwatch{uuid.uuid4().hex[:10]}"
    first = start_group(word, "sleep 67")
    token = f"sweep-{uuid.uuid4().hex[:8]}"
    escaped = start_group(word, "sleep 68", {RUN_MARKER: f"{token}.1"})
    try:
        window = [int(entry) for entry in _entries(first.pid)]
        assert window and min(window) >= first.pid and 1 not in window
        time.sleep(0.3)  # the shell has started its sleep: the set no longer changes
        found = marked(token, since=first.pid)
        assert escaped.pid in found  # the shell (and the sleep it started)
        assert sorted(found) == sorted(marked(token))  # the same as reading every process
    finally:
        for group in (first, escaped):
            subprocess.run(["kill", "-KILL", "--", f"-{group.pid}"], stderr=subprocess.DEVNULL)
            group.wait()


def test_the_watchdog_gets_the_hosts_cpu_priority_in_its_own_session(tmp_path: Path) -> None:
    # The host in a session at nice 4; the watchdog's session must not fall back to nice 0.
    script = (
        "import os\n"
        "from codecompanion.tools.runtime.groupwatch import GroupWatch\n"
        "watch = GroupWatch()\n"
        "watch.start()\n"
        "pid = watch._proc.pid\n"
        "group = open(f'/proc/{pid}/autogroup').read().strip()\n"
        "print(os.getsid(0), os.getsid(pid), group)\n"
    )
    host_sid, watchdog_sid, group = command_session(script, tmp_path, nice=4)
    assert host_sid != watchdog_sid
    assert group.endswith("nice 4"), group
