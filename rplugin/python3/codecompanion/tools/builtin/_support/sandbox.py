"""Where code_runner runs code: a container when docker/podman works, else a confined process.

Both ways start from a fresh temporary directory holding the code as one file. A container
gets no network, a memory and CPU cap and the directory mounted at the same path. A process
gets a scrubbed environment (HOME and TMPDIR in the directory), CPU-time, address-space and
file-size limits set by a small Python trampoline (`resource.setrlimit`, then exec), and no
network where `unshare` can create a network namespace.
"""

from __future__ import annotations

# Standard modules a plain chat never needs (shutil, tempfile, difflib, hashlib: about
# 1.5 MB of the host together) are imported in the functions that use them.
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ...runtime.process import run_process


@dataclass(frozen=True)
class Language:
    """How to run one language: the command (`{file}` is the code's path), file suffix, image."""

    name: str
    cmd: tuple[str, ...]
    suffix: str
    image: str
    memory_mb: int | None = None  # this language's own memory cap, above the tool's default


# Each language's command, as a subprocess and in its image. Users extend or change it with
# opts["languages"] = {"ruby": {"cmd": ["ruby", "{file}"], "suffix": ".rb", "image": "ruby:3"}}.
LANGUAGES: Mapping[str, Language] = MappingProxyType(
    {
        "python": Language("python", ("python3", "{file}"), ".py", "python:3-slim"),
        "bash": Language("bash", ("bash", "{file}"), ".sh", "bash:5"),
        "sh": Language("sh", ("sh", "{file}"), ".sh", "alpine:3"),
        # V8 reserves a large address space up front; a lower cap stops node from starting.
        "node": Language("node", ("node", "{file}"), ".js", "node:lts-slim", memory_mb=8192),
        "lua": Language("lua", ("lua", "{file}"), ".lua", "nickblah/lua:5.4"),
        "ruby": Language("ruby", ("ruby", "{file}"), ".rb", "ruby:3-slim"),
        "perl": Language("perl", ("perl", "{file}"), ".pl", "perl:5-slim"),
    }
)
ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "py": "python",
        "python3": "python",
        "shell": "sh",
        "zsh": "bash",
        "js": "node",
        "javascript": "node",
        "nodejs": "node",
        "rb": "ruby",
    }
)

# Sets the limits in the child, then becomes the command: argv = limits..., "--", command...
# (Its processes are capped by the command runner, as every command the chat starts is.)
_LIMITER = (
    "import resource, sys, os\n"
    "cpu, mem, fsize = (int(v) for v in sys.argv[1:4])\n"
    "resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))\n"
    "resource.setrlimit(resource.RLIMIT_AS, (mem, mem))\n"
    "resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))\n"
    "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
    "os.execvp(sys.argv[5], sys.argv[5:])\n"
)
_KEPT_ENV = ("PATH", "LANG", "LC_ALL", "TERM")


@dataclass(frozen=True)
class Limits:
    """What a run may use: seconds of wall and CPU time, memory and file size in MB."""

    timeout: float = 30.0
    memory_mb: int = 512
    file_mb: int = 16
    processes: int = 1024  # the chat's `max_processes`: a container's own pids limit


@dataclass(frozen=True)
class RunPlan:
    """How one run goes: the commands in order (a pull before the run), and where."""

    commands: tuple[tuple[str, ...], ...]
    where: str  # for the user and the model: "docker (python:3-slim)", "subprocess, no network"


def languages(custom: Mapping[str, Any] | None) -> dict[str, Language]:
    """The builtin table with the user's entries merged in (a partial entry changes a builtin)."""
    table = dict(LANGUAGES)
    for name, spec in (custom or {}).items():
        if not isinstance(spec, Mapping):
            continue
        base = table.get(name) or Language(name, (name, "{file}"), "", "")
        fields: dict[str, Any] = {}
        if isinstance(spec.get("cmd"), (list, tuple)):
            fields["cmd"] = tuple(str(part) for part in spec["cmd"])
        for key in ("suffix", "image"):
            if isinstance(spec.get(key), str):
                fields[key] = spec[key]
        if isinstance(spec.get("memory_mb"), int):
            fields["memory_mb"] = spec["memory_mb"]
        table[name] = replace(base, **fields)
    return table


def find_language(table: Mapping[str, Language], name: str) -> Language | None:
    """The language called `name` (case and common aliases forgiven)."""
    key = name.strip().lower()
    return table.get(key) or table.get(ALIASES.get(key, ""))


async def container_runtime(choice: Any, cwd: Path) -> str | None:
    """The container program to use: `choice` ("auto", "docker", "podman" or False)."""
    if choice is False or choice in ("none", "off"):
        return None
    candidates = ("docker", "podman") if choice in (None, True, "auto") else (str(choice),)
    for program in candidates:
        import shutil

        if shutil.which(program) is None:
            continue
        probe = await run_process([program, "info"], cwd=cwd, timeout=10, max_output=65536)
        if probe.exit_code == 0:
            return program
    return None


async def network_isolation(cwd: Path) -> tuple[str, ...]:
    """The `unshare` prefix that gives a process no network, or () where that is not allowed."""
    import shutil

    if shutil.which("unshare") is None:
        return ()
    for prefix in (("unshare", "-rn", "--"), ("unshare", "-n", "--")):
        probe = await run_process([*prefix, "true"], cwd=cwd, timeout=10, max_output=4096)
        if probe.exit_code == 0:
            return prefix
    return ()


def command(language: Language, file: Path) -> tuple[str, ...]:
    """The language's command for the code in `file`."""
    return tuple(part.replace("{file}", str(file)) for part in language.cmd)


def container_plan(program: str, language: Language, file: Path, limits: Limits) -> RunPlan:
    """Pull the image if missing, then run the code in it with the directory mounted."""
    folder = str(file.parent)
    run = (
        program,
        "run",
        "--rm",
        "--network",
        "none",
        "--memory",
        f"{limits.memory_mb}m",
        "--cpus",
        "1",
        "--pids-limit",
        str(limits.processes),
        "-v",
        f"{folder}:{folder}",
        "-w",
        folder,
        language.image,
        *command(language, file),
    )
    pull = ("sh", "-c", '"$0" image inspect "$1" >/dev/null 2>&1 || "$0" pull -q "$1"')
    return RunPlan(((*pull, program, language.image), run), f"{program} ({language.image})")


def process_plan(
    language: Language, file: Path, limits: Limits, isolation: Sequence[str], env: Mapping[str, str]
) -> RunPlan:
    """The code as a confined subprocess: scrubbed env, rlimits, no network when possible."""
    folder = str(file.parent)
    kept = {k: env[k] for k in _KEPT_ENV if k in env}
    scrubbed = [f"{k}={v}" for k, v in {**kept, "HOME": folder, "TMPDIR": folder}.items()]
    memory = (language.memory_mb or limits.memory_mb) * 1024 * 1024
    cpu = max(1, int(limits.timeout))
    limiter = (sys.executable, "-I", "-c", _LIMITER, str(cpu), str(memory))
    argv = (
        "env",
        "-i",
        *scrubbed,
        *limiter,
        str(limits.file_mb * 1024 * 1024),
        "--",
        *isolation,
        *command(language, file),
    )
    where = "subprocess" + (", no network" if isolation else ", network NOT isolated")
    return RunPlan((argv,), where)
