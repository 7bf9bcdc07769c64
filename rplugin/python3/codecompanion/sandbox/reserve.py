"""The next chat's sandbox, made ready before that chat opens: its own cgroup and a launcher
already waiting in it.

A launcher is ready tens of milliseconds after it starts (joining a new cgroup waits for the
kernel), more on a busy machine, and a chat's first command can come sooner than that after
the chat opened: the command then waits for its launcher. So the host keeps one such pair
ready; a chat takes it when it opens, and the host prepares the next one at once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .process_cap import PidCgroup
from .standby import Standbys

log = logging.getLogger("codecompanion.sandbox")


@dataclass(frozen=True)
class Kit:
    """One chat's cgroup (None where none can be made) and its launchers."""

    program: str
    namespace: int
    cgroup: PidCgroup | None
    standbys: Standbys

    @classmethod
    def make(cls, program: str, namespace: int, limit: int) -> Kit:
        """A fresh cgroup with a launcher started in it (none when it cannot start)."""
        cgroup = PidCgroup.make(limit)
        standbys = Standbys(program, cgroup.procs if cgroup is not None else -1, namespace)
        try:
            standbys.fill()
        except OSError as exc:  # the command then gets a fresh launcher, and says why
            log.warning("the sandbox's launcher did not start: %s", exc)
        return cls(program, namespace, cgroup, standbys)

    def close(self) -> None:
        """End the launcher and remove the cgroup."""
        self.standbys.close()
        if self.cgroup is not None:
            self.cgroup.close()


class Reserve:
    """The host's one kit made ready for the next chat."""

    def __init__(self) -> None:
        self._kit: Kit | None = None
        self._closed = False

    def take(self, program: str, namespace: int, limit: int) -> Kit:
        """The kit made ready (a new one if there is none for these settings), its process
        limit set to `limit`; the next chat's is started before this returns."""
        kit, self._kit = self._kit, None
        if kit is not None and (kit.program, kit.namespace) != (program, namespace):
            kit.close()
            kit = None
        if kit is None:
            kit = Kit.make(program, namespace, limit)
        elif kit.cgroup is not None:
            kit.cgroup.set_limit(limit)
        if not self._closed:
            self._kit = Kit.make(program, namespace, limit)
        return kit

    def close(self) -> None:
        """End the kit made ready; nothing is made after."""
        self._closed = True
        kit, self._kit = self._kit, None
        if kit is not None:
            kit.close()
