"""Rules files: the project's and the user's standing instructions, loaded into the system prompt.

Project files are looked for at the project root (`AGENTS.md`, `CLAUDE.md`, ...; the list is a
setting) and, when the chat reads or edits files in a subfolder, in that folder and those above
it. User files come from the user's config folders. `@path` in a Markdown rules file imports
another file, to a bounded depth, each file once (a loop ends there): a project file imports
only from the project, a user file only from the user's config folders (never from all of
HOME), and nothing from the sandbox's deny list nor a file named like a credential
(sandbox/secret_paths.py), wherever a link leads. Only regular text files are read, and no
more of them than the size cap: anything else is refused with a note.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..adapters.secret_mask import mask
from ..messages import Message
from ..sandbox.secret_paths import why_secret
from ..sandbox.settings import DEFAULT_DENY_READ

PROJECT_FILES = (
    "AGENTS.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    ".github/copilot-instructions.md",
    ".cursorrules",
    ".rules",
)
USER_FILES = (
    "~/.config/codecompanion/AGENTS.md",
    "~/.claude/CLAUDE.md",
    "~/.codex/AGENTS.md",
)
IMPORT_DEPTH = 5
MAX_FILE_BYTES = 64_000
PATH_KEYS = ("filepath", "path", "file_path", "filename", "dir_path", "directory")
# `@path` at a word start (not an e-mail address), outside code.
_IMPORT = re.compile(r"(?<![\w`@])@((?:~/|\.{1,2}/|/)?[\w.\-/]*[\w\-/])")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"`[^`\n]*`")
TAG = "rules"


@dataclass(frozen=True)
class RulesOptions:
    """`opts["rules"]`: which files are read, and how deep imports go."""

    enabled: bool = True
    files: tuple[str, ...] = PROJECT_FILES
    user_files: tuple[str, ...] = USER_FILES
    import_depth: int = IMPORT_DEPTH

    @classmethod
    def from_opts(cls, opts: Mapping[str, Any] | None) -> RulesOptions:
        """The options from a checked `opts["rules"]`."""
        opts = opts or {}
        base = cls()
        return cls(
            enabled=bool(opts.get("enabled", base.enabled)),
            files=tuple(opts.get("files", base.files)),
            user_files=tuple(opts.get("user_files", base.user_files)),
            import_depth=int(opts.get("import_depth", base.import_depth)),
        )


@dataclass(frozen=True)
class RuleFile:
    """One loaded file: where it is, how the chat names it, and its text."""

    path: Path
    label: str
    text: str
    imported_by: str | None = None
    folder: str | None = None  # the subfolder it applies to (None: the whole project)


@dataclass
class Loaded:
    """What one load found: the files in order, and a note per import refused."""

    files: list[RuleFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def prompt(self) -> str:
        """The system prompt text, empty when nothing was loaded."""
        if not self.files:
            return ""
        parts = ["The user's standing instructions, from their rules files. Follow them."]
        for rule in self.files:
            head = f"## {rule.label}"
            if rule.imported_by:
                head += f" (imported by {rule.imported_by})"
            if rule.folder:
                head += f" (applies to files under {rule.folder}/)"
            parts.append(f"{head}\n\n{rule.text.strip()}")
        return "\n\n".join(parts)

    def line(self) -> str:
        """The one line the chat shows: which files were loaded."""
        top = [r.label for r in self.files if r.imported_by is None]
        imported = sum(1 for r in self.files if r.imported_by is not None)
        text = "Rules: " + ", ".join(top)
        if imported:
            text += f" (+{imported} imported)"
        if self.notes:
            text += " · " + "; ".join(self.notes)
        return text


class Rules:
    """One chat's rules files: found under `root` and the user's config folders."""

    def __init__(
        self,
        root: Path,
        options: RulesOptions | None = None,
        home: Path | None = None,
        deny_read: tuple[str, ...] = DEFAULT_DENY_READ,
        secrets: set[str] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.options = options or RulesOptions()
        self.home = (home or Path.home()).resolve()
        self.deny_read = tuple(
            self.home / p[2:] if p.startswith("~/") else Path(p) for p in deny_read
        )
        self.disabled: set[str] = set()  # labels the user turned off with /rules
        self.secrets = secrets if secrets is not None else set()  # masked in what is read

    def user_roots(self) -> list[Path]:
        """The folders user files (and their imports) may come from: the config folders, and
        each user file's own folder unless that is HOME or above it (all of HOME, never)."""
        config = os.environ.get("XDG_CONFIG_HOME") or str(self.home / ".config")
        roots = {self.home / ".claude", self.home / ".codex", Path(config) / "codecompanion"}
        roots |= {self._expand(f).parent for f in self.options.user_files}
        real = {_real(r) for r in roots}
        return sorted(r for r in real if not self.home.is_relative_to(r))

    def candidates(self, touched: Iterable[str] = ()) -> list[tuple[Path, str, str | None]]:
        """Every rules file present: (path, label, subfolder), user files first."""
        found: list[tuple[Path, str, str | None]] = []
        for name in self.options.user_files:
            path = self._expand(name)
            if path.is_file():
                found.append((path, name, None))
        for name in self.options.files:
            path = self.root / name
            if path.is_file():
                found.append((path, name, None))
        for folder in self._folders(touched):
            for name in self.options.files:
                if "/" in name:
                    continue
                path = self.root / folder / name
                if path.is_file():
                    found.append((path, f"{folder}/{name}", folder))
        return found

    def load(self, touched: Iterable[str] = ()) -> Loaded:
        """Read every enabled rules file and its imports."""
        loaded = Loaded()
        if not self.options.enabled:
            return loaded
        reader = _Reader(self, loaded)
        users = tuple(self.user_roots())
        for path, label, folder in self.candidates(touched):
            if label not in self.disabled:
                mine = label in self.options.user_files
                roots = (*users, self._expand(label).parent) if mine else (self.root,)
                reader.roots = users if mine else (self.root,)
                reader.read(path, label, None, folder, 0, roots)
        return loaded

    def _folders(self, touched: Iterable[str]) -> list[str]:
        """Subfolders (relative, outermost first) holding or above the touched paths."""
        folders: set[str] = set()
        parents: dict[str, str] = {}
        inside = os.path.join(str(self.root), "")
        for raw in dict.fromkeys(touched):
            real, is_dir = _resolved(os.path.join(inside, raw), parents)
            if not real.startswith(inside):
                continue
            parts = real[len(inside) :].split("/")
            parts = parts if is_dir else parts[:-1]
            for depth in range(1, len(parts) + 1):
                folders.add("/".join(parts[:depth]))
        return sorted(folders, key=lambda f: (f.count("/"), f))

    def _expand(self, name: str) -> Path:
        if name.startswith("~/"):
            return self.home / name[2:]
        return Path(name)

    def label(self, path: Path) -> str:
        """How the chat names a file: relative to the project, or under ~/."""
        real = _real(path)
        if real.is_relative_to(self.root):
            return str(real.relative_to(self.root))
        if real.is_relative_to(self.home):
            return "~/" + str(real.relative_to(self.home))
        return os.path.normpath(path)


@dataclass
class _Reader:
    """One load's walk through files and their imports; each file is read once."""

    rules: Rules
    loaded: Loaded
    seen: set[Path] = field(default_factory=set)
    roots: tuple[Path, ...] = ()  # where the current top file's imports may come from

    def read(
        self,
        path: Path,
        label: str,
        parent: str | None,
        folder: str | None,
        depth: int,
        roots: tuple[Path, ...],
    ) -> None:
        """Read `path` (if allowed and not read yet) and then what it imports."""
        rules, loaded = self.rules, self.loaded
        real = _real(path)
        refused = _refusal(rules, path, real, roots)
        if refused is not None:
            loaded.notes.append(f"refused {label}: {refused}")
            return
        if real in self.seen or not real.is_file():
            return  # read already (an import loop, or two files importing one), or no file
        self.seen.add(real)
        try:
            text = mask(_text(real), rules.secrets)
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            loaded.notes.append(f"refused {label}: {why}")
            return
        loaded.files.append(RuleFile(real, label, text, parent, folder))
        if real.suffix.lower() in (".md", ".markdown"):
            self._imports(real, text, label, folder, depth)

    def _imports(self, real: Path, text: str, label: str, folder: str | None, depth: int) -> None:
        rules = self.rules
        for target in _imports(text):
            home = target.startswith("~/")
            child = rules.home / target[2:] if home else real.parent / target
            if depth + 1 > rules.options.import_depth:
                self.loaded.notes.append(f"skipped @{target}: imports nest deeper than the limit")
                continue
            child_label = target if home else rules.label(child)
            self.read(child, child_label, label, folder, depth + 1, self.roots)


def _refusal(rules: Rules, path: Path, real: Path, roots: tuple[Path, ...]) -> str | None:
    """Why `path` may not be read as a rules file from `roots` (None: it may)."""
    if not any(real.is_relative_to(root) for root in roots):
        where = "the project" if roots == (rules.root,) else "your config folders"
        return f"outside {where}"
    return why_secret(str(path), tuple(str(p) for p in rules.deny_read), "it")


def _text(real: Path) -> str:
    """The start of the regular text file at `real` (at most MAX_FILE_BYTES are read: a huge
    or sparse file costs no more); ValueError for anything but text."""
    fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        data = b""
        while len(data) < MAX_FILE_BYTES and (chunk := os.read(fd, MAX_FILE_BYTES - len(data))):
            data += chunk
    finally:
        os.close(fd)
    if b"\0" in data:
        raise ValueError("not a text file")
    return data.decode("utf-8", errors="replace")


def touched_paths(messages: Iterable[Message]) -> list[str]:
    """The paths the chat's tool calls read or edited (their path-like arguments)."""
    paths: list[str] = []
    for message in messages:
        for call in message.tool_calls:
            for key in PATH_KEYS:
                value = call.arguments.get(key)
                if isinstance(value, str) and value.strip():
                    paths.append(value.strip())
    return paths


def _imports(text: str) -> list[str]:
    """The `@path` imports of a Markdown text, outside code blocks and spans, in order."""
    plain = _SPAN.sub("", _FENCE.sub("", text))
    out: list[str] = []
    for match in _IMPORT.finditer(plain):
        target = match.group(1).rstrip(".")
        if target and target not in out:
            out.append(target)
    return out


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _resolved(path: str, parents: dict[str, str]) -> tuple[str, bool]:
    """`path` resolved as realpath does, and whether it is a folder.

    The path itself is read from disk each time; its folder's realpath is worked out once per
    `parents` (one load), since many touched files share a folder. A link, a missing path, or
    a `.` or `..` at its end is resolved whole.
    """
    folder, name = os.path.split(path.rstrip("/"))
    try:
        info = os.lstat(path)
    except OSError:
        return os.path.realpath(path), os.path.isdir(path)
    if name in ("", ".", "..") or stat.S_ISLNK(info.st_mode):
        return os.path.realpath(path), os.path.isdir(path)
    parent = parents.get(folder)
    if parent is None:
        parent = parents[folder] = os.path.realpath(folder)
    return os.path.join(parent, name), stat.S_ISDIR(info.st_mode)
