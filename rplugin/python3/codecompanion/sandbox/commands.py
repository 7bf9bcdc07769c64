"""One chat's command sandbox: its settings, what works on this machine, and one launch per run."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ToolError
from .settings import Permissions

if TYPE_CHECKING:  # the launcher's modules load with the first confined command
    from .gitdirs import Repository
    from .launcher import Launch
    from .probe import Availability, Detector, SandboxKind
    from .process_cap import PidCgroup, ProcessCap
    from .reserve import Reserve
    from .rulebook import Boundary, RuleBook
    from .standby import Standbys
    from .user_places import UserPlaces

log = logging.getLogger("codecompanion.sandbox")

UNCONFINED = "unconfined"


class CommandSandbox:
    """Confines the commands of one chat's tools (run_command, code_runner, tools' cmds)."""

    def __init__(
        self,
        permissions: Permissions,
        detector: Detector,
        read_only: tuple[str, ...] = (),
        reserve: Reserve | None = None,
        project: Path | None = None,
        places: UserPlaces | None = None,
    ) -> None:
        self.permissions = permissions
        self.project = project  # the chat's project (real path): its launchers confine ahead
        self._detector = detector  # the host's: it probes once and shares the answer
        self.read_only = read_only  # files and folders no command may write, besides `places`
        self.places = places  # the user's configuration, the plugin's own files
        # Why the chat's folder is no project (None: it is one): commands may not write it.
        self.narrowed = self.not_a_project(project) if project is not None else None
        self._reserve = reserve  # the host's cgroup and launcher made ready for a new chat
        self._cgroup: PidCgroup | None = None
        self._cgroup_tried = False
        self._standbys: Standbys | None = None
        self._book: RuleBook | None = None  # its commands' rules, kept while still true
        from .gitdirs import GitWalks

        self.git_walks = GitWalks(str(project) if project is not None else None)
        self._before: tuple[Path, frozenset[Repository]] | None = None  # at the last launch
        self._absent: tuple[str, ...] = ()  # the protected paths missing at the last launch
        self._closed = False

    @property
    def availability(self) -> Availability:
        """What works on this machine (probed once per host)."""
        return self._detector()

    @property
    def probed(self) -> bool:
        """True once this machine's sandbox is known (asking `kind` then costs nothing)."""
        return not self.permissions.sandbox or self._detector.done

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
        if self.narrowed is not None:
            where = f"a private temp (not this folder: {self.narrowed})"
            return f"{self.kind} sandbox: writes only in {where}, {net}"
        return f"{self.kind} sandbox: writes only in the project and a private temp, {net}"

    def not_a_project(self, folder: Path) -> str | None:
        """Why commands may not write `folder` as their project (None: they may)."""
        return self.places.not_a_project(str(folder)) if self.places is not None else None

    async def probe(self) -> None:
        """Find out what works here without blocking the loop (once per host), and walk the
        chat's project for its repositories off the loop too (a big project's first walk
        takes a while; keeping it up to date later costs a `stat` per folder)."""
        if self.project is not None and self.narrowed is None and self.permissions.sandbox:
            walk = self.git_walks.of(str(self.project))
            await asyncio.to_thread(walk.repositories)
        if not self.probed:
            await self._detector.probe()

    def prepare(self) -> None:
        """Start the chat's waiting launcher (and its cgroup) and have it confine itself for
        the chat's project, so that its first command does not wait for them; nothing where
        commands are not confined by the native launcher."""
        if not self.active or self._closed:
            return
        standbys = self._ensure_standbys()
        if standbys is not None and self.project is not None:
            found = self.availability
            boundary = self._boundary(self.project)
            try:
                standbys.prepare(self._rule_book().rules(boundary, found.abi, found.mounts)[0])
            except OSError as exc:  # the command then gets a fresh launcher, and says why
                log.warning("the sandbox's launcher did not start: %s", exc)

    def _boundary(self, project: Path, network: bool = False) -> Boundary:
        """What commands in `project` may do: write it unless it is no project; never the
        plugin's files, the user's configuration nor git's control files."""
        from .rulebook import Boundary

        own = (*self.read_only, *(self.places.read_only() if self.places is not None else ()))
        self._absent = tuple(path for path in own if not os.path.lexists(path))
        if self.not_a_project(project) is not None:
            self._before = None  # nothing to walk: commands cannot write there
            return Boundary(project, self.permissions, own, network, writable_project=False)
        walk = self.git_walks.of(str(project))
        repositories = walk.repositories()
        self._before = (Path(walk.root), frozenset(repositories))
        kept = (*own, *walk.places(repositories))
        return Boundary(project, self.permissions, kept, network)

    def made_host_files(self) -> list[str]:
        """The protected paths that were missing at the last launch and exist now: what the
        command that ran since made (see aftermath.settle)."""
        return [path for path in self._absent if os.path.lexists(path)]

    def made_repositories(self, project: Path) -> list[Repository]:
        """The repositories git finds in `project` now that it did not at the last launch
        there: what the command that ran since made (see aftermath.settle)."""
        walk = self.git_walks.of(str(project))
        if self._before is None or self._before[0] != Path(walk.root):
            return []
        before = self._before[1]
        return [repo for repo in walk.repositories() if repo not in before]

    def _rule_book(self) -> RuleBook:
        if self._book is None:
            from .rulebook import RuleBook

            self._book = RuleBook()
        return self._book

    def _ensure_cgroup(self) -> PidCgroup | None:
        if not self._cgroup_tried:  # one per chat: making one per command costs milliseconds
            from .process_cap import PidCgroup

            self._cgroup_tried = True
            self._cgroup = PidCgroup.make(self.permissions.max_processes)
        if self._cgroup is not None:
            self._cgroup.set_limit(self.permissions.max_processes)
        return self._cgroup

    def _ensure_standbys(self) -> Standbys | None:
        from .standby import Standbys, native_launcher

        program = native_launcher()
        if self._standbys is None and program is not None:
            found = self.availability
            namespace = 0 if not found.mounts else 2 if os.geteuid() != 0 else 1
            if self._reserve is not None and not self._cgroup_tried:
                # Its launcher was started before this chat opened: ready for the first command.
                kit = self._reserve.take(program, namespace, self.permissions.max_processes)
                self._cgroup_tried, self._cgroup, self._standbys = True, kit.cgroup, kit.standbys
            else:
                cgroup = self._ensure_cgroup()
                self._standbys = Standbys(program, cgroup.procs if cgroup else -1, namespace)
        if self._standbys is not None:
            try:
                self._standbys.fill()
            except OSError as exc:  # the command then gets a fresh launcher, and says why
                log.warning("the sandbox's launcher did not start: %s", exc)
        return self._standbys

    def launch(self, project: Path, *, network: bool = False) -> Launch | None:
        """The run's confinement (None: the command runs unconfined); a ToolError when it
        cannot be prepared, so nothing runs."""
        if not self.active:
            return None
        from .launcher import launch

        standbys = None if self._closed else self._ensure_standbys()
        cgroup = self._ensure_cgroup()
        found = self.availability
        try:
            boundary = self._boundary(project, network)
            book = self._rule_book()
            return launch(boundary, found.abi, found.mounts, cgroup, standbys, book)
        except OSError as exc:
            raise ToolError(f"The sandbox could not be prepared ({exc}); nothing ran.") from exc

    def process_cap(self) -> ProcessCap:
        """The chat's process cap (`max_processes`) for its next command, confined or not:
        the chat's cgroup where there is one, else the user's RLIMIT_NPROC (process_cap.py)."""
        from .process_cap import ProcessCap

        if self.active and not self._cgroup_tried and not self._closed:
            self._ensure_standbys()  # takes the cgroup made ready for this chat
        cgroup = None if self._closed else self._ensure_cgroup()
        limit = self.permissions.max_processes
        return ProcessCap.of(limit, cgroup, self._spare)

    def _spare(self) -> int | None:
        """The waiting launcher, which a sweep of the chat's cgroup leaves alone."""
        return self._standbys.spare if self._standbys is not None else None

    def close(self) -> None:
        """The chat closed: end its waiting launcher and whatever its commands left behind."""
        self._closed = True
        if self._standbys is not None:
            self._standbys.close()
        if self._cgroup is not None:
            self._cgroup.close()
            self._cgroup = None


def refusal_note(sandbox: CommandSandbox | None, network: bool, can_leave: bool) -> str:
    """What a failed confined command's result tells the model about the sandbox."""
    if sandbox is None or not sandbox.active:
        return ""
    net = "" if network or sandbox.permissions.network else ", no network (no sockets at all)"
    where = "the project and a private temp folder ($TMPDIR)"
    if sandbox.narrowed is not None:
        where = f"a private temp folder ($TMPDIR), not this folder ({sandbox.narrowed})"
    note = (
        f"note: the command ran in a sandbox: writes only in {where}, git's control files "
        f"and the plugin's files read-only, secrets unreadable{net}. "
        "An error such as 'Permission denied', 'Read-only file system' or a failed connection "
        "may be the sandbox refusing it."
    )
    if can_leave:
        note += (
            ' If the command needs that, call run_command again with "unconfined": true: the '
            "user is asked whether to run it outside the sandbox."
        )
    return note
