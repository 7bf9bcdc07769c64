"""Which command sandbox works on this machine, and why not when none does."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from . import landlock, mounts, seccomp

SandboxKind = Literal["landlock", "seatbelt", "none"]


@dataclass(frozen=True)
class Availability:
    """The sandbox commands get here: its kind, Landlock's ABI, and what is missing."""

    kind: SandboxKind
    abi: int = 0
    mounts: bool = False  # a private mount namespace (read-only .git, hidden secrets)
    reason: str = ""  # why there is none, or what this one lacks

    @property
    def confined(self) -> bool:
        """True when commands really run in a sandbox."""
        return self.kind != "none"


def _try_confined() -> str | None:
    """Start `true` under Landlock and seccomp for real; None if it ran, else why not."""
    from .launcher import Boundary, launch  # the launcher needs this module's verdict first
    from .settings import Permissions

    boundary = Boundary(project=Path.cwd(), permissions=Permissions())
    try:
        run = launch(boundary, landlock.abi_version(), with_mounts=False)
    except OSError as exc:
        return f"Landlock ruleset refused: {exc}"
    try:
        subprocess.run(["true"], preexec_fn=run.preexec, check=True, timeout=10)  # noqa: PLW1509
    except (OSError, subprocess.SubprocessError) as exc:
        return f"a confined command did not start: {exc}"
    finally:
        run.close()
    return None


def detect() -> Availability:
    """Probe the kernel (a few ms: starts `true` once); the result never changes while we run."""
    if sys.platform == "darwin":
        have = "sandbox-exec is there, but" if shutil.which("sandbox-exec") else "no sandbox-exec;"
        return Availability(
            "none", reason=f"{have} the Seatbelt profile (sandbox/seatbelt.py) is untested"
        )
    if sys.platform != "linux":
        return Availability("none", reason=f"no sandbox for {sys.platform}")
    if not seccomp.supported():
        return Availability("none", reason="seccomp filter not written for this machine")
    abi = landlock.abi_version()
    if abi < 1:
        return Availability("none", reason="the kernel has no Landlock (Linux 5.13+, lsm=landlock)")
    failure = _try_confined()
    if failure is not None:
        return Availability("none", abi, reason=failure)
    missing = mounts.available()
    lacks = [] if abi >= 6 else ["Landlock ABI < 6: signals and abstract sockets not scoped"]
    if missing:
        lacks.append(
            f"{missing}: Landlock alone keeps .git read-only and deny_read unreadable, so "
            "commands cannot create files at the project's top level"
        )
    return Availability("landlock", abi, missing is None, "; ".join(lacks))


class Detector:
    """Probes on the first question (the first command), then gives the same answer."""

    def __init__(self) -> None:
        self._found: Availability | None = None

    @property
    def done(self) -> bool:
        """True once probed."""
        return self._found is not None

    def __call__(self) -> Availability:
        """What works here."""
        if self._found is None:
            self._found = detect()
        return self._found
