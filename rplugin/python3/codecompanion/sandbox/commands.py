"""One chat's command sandbox: its settings, what works on this machine, and one launch per run."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ToolError
from .settings import Permissions

if TYPE_CHECKING:  # ctypes and the system calls load with the first confined command
    from .launcher import Launch, PidCgroup
    from .probe import Availability, SandboxKind

log = logging.getLogger("codecompanion.sandbox")

UNCONFINED = "unconfined"


class CommandSandbox:
    """Confines the commands of one chat's tools (run_command, code_runner, tools' cmds)."""

    def __init__(
        self,
        permissions: Permissions,
        availability: Callable[[], Availability],
        read_only: tuple[str, ...] = (),
    ) -> None:
        self.permissions = permissions
        self._availability = availability  # the host probes once and shares the answer
        self.read_only = read_only  # the plugin's config file and chats folder
        self._cgroup: PidCgroup | None = None
        self._cgroup_tried = False

    @property
    def availability(self) -> Availability:
        """What works on this machine (probed once per host)."""
        return self._availability()

    @property
    def probed(self) -> bool:
        """True once this machine's sandbox is known (asking `kind` then costs nothing)."""
        return not self.permissions.sandbox or bool(getattr(self._availability, "done", True))

    @property
    def kind(self) -> SandboxKind:
        """The sandbox commands get: "landlock", "seatbelt", or "none" (off or unavailable)."""
        if not self.permissions.sandbox:
            return "none"
        return self.availability.kind

    @property
    def active(self) -> bool:
        """True when commands run confined."""
        return self.kind == "landlock"

    def describe(self, network: bool = False) -> str:
        """One line for questions and results: what confines the command, or `unconfined`."""
        if not self.active:
            return UNCONFINED
        net = "network on" if network or self.permissions.network else "network off"
        return f"{self.kind} sandbox: writes only in the project and a private temp, {net}"

    def launch(self, project: Path, *, network: bool = False) -> Launch | None:
        """The run's confinement (None: the command runs unconfined); a ToolError when it
        cannot be prepared, so nothing runs."""
        if not self.active:
            return None
        from .launcher import Boundary, PidCgroup, launch

        if not self._cgroup_tried:  # one per chat: making one per command costs milliseconds
            self._cgroup_tried = True
            self._cgroup = PidCgroup.make(self.permissions.max_processes)
        found = self.availability
        boundary = Boundary(project, self.permissions, self.read_only, network)
        try:
            return launch(boundary, found.abi, found.mounts, self._cgroup)
        except OSError as exc:
            raise ToolError(f"The sandbox could not be prepared ({exc}); nothing ran.") from exc


def sandbox_of(tools: object) -> CommandSandbox | None:
    """The chat's sandbox as tool code sees it (`self.tools.sandbox`), or None without one."""
    found = getattr(tools, "sandbox", None)
    return found if isinstance(found, CommandSandbox) else None


def refusal_note(sandbox: CommandSandbox | None, network: bool, can_leave: bool) -> str:
    """What a failed confined command's result tells the model about the sandbox."""
    if sandbox is None or not sandbox.active:
        return ""
    net = "" if network or sandbox.permissions.network else ", no network (no sockets at all)"
    note = (
        "note: the command ran in a sandbox: writes only in the project and a private temp "
        f"folder ($TMPDIR), .git and the plugin's files read-only, secrets unreadable{net}. "
        "An error such as 'Permission denied', 'Read-only file system' or a failed connection "
        "may be the sandbox refusing it."
    )
    if can_leave:
        note += (
            ' If the command needs that, call run_command again with "unconfined": true: the '
            "user is asked whether to run it outside the sandbox."
        )
    return note
