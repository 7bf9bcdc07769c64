"""The unstaged diff (work tree against the index), computed in Python from git's objects.

`git diff` would refresh the index and hash changed work-tree files through the repository's
clean filters, which are programs the repository names. Here git only lists the index
(`ls-files`) and hands out blobs (`cat-file --batch`); the work-tree files are read and hashed
here, and the diff is made with difflib. A file whose content git would convert with a filter
(LFS, for example) shows as changed with its raw content; CRLF conversion is recognised.
"""

from __future__ import annotations

# Standard modules a plain chat never needs (shutil, tempfile, difflib, hashlib: about
# 1.5 MB of the host together) are imported in the functions that use them.
import asyncio
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ....errors import ToolError
from .safe_git import run_git

MAX_DIFF_BYTES = 2_000_000  # per file: larger files are named, not diffed
_REGULAR, _EXECUTABLE, _LINK, _GITLINK = "100644", "100755", "120000", "160000"


@dataclass(frozen=True)
class Entry:
    """One stage-0 index entry; `stamp` is what git recorded (size, mtime, ctime, inode)."""

    mode: str
    oid: str
    path: str
    stamp: tuple[int, int, int, int] | None = None


@dataclass(frozen=True)
class Change:
    """An index entry whose work-tree file differs.

    `new_mode` None: the file is gone. `new` None: only the mode changed. `large`: the content
    changed but is too large to diff (it was hashed in pieces, not kept).
    """

    entry: Entry
    new_mode: str | None
    new: bytes | None
    large: bool = False


# One `ls-files -s -t -z --debug` record: "tag mode oid stage<TAB>path<NUL>" and, with
# --debug, five lines of the stat data git keeps (we read ctime, mtime, inode and size).
_RECORD = re.compile(
    r"(\S+) (\d+) ([0-9a-f]+) (\d)\t([^\0]*)\0"
    r"(?:  ctime: (\d+):(\d+)\n  mtime: (\d+):(\d+)\n  dev: \d+\tino: (\d+)\n"
    r"  uid: [^\n]*\n  size: (\d+)\t[^\n]*\n)?"
)


def _stamp(fields: tuple[str | None, ...]) -> tuple[int, int, int, int] | None:
    """(size, mtime ns, ctime ns, inode) from the --debug fields, if there were any."""
    if fields[0] is None:
        return None
    ctime_s, ctime_ns, mtime_s, mtime_ns, inode, size = (int(f or 0) for f in fields)
    second = 1_000_000_000
    return size, mtime_s * second + mtime_ns, ctime_s * second + ctime_ns, inode


def parse_index(listing: str) -> tuple[list[Entry], list[str]]:
    """`ls-files -s -t -z [--debug]` output: stage-0 entries (skip-worktree left out), and the
    unmerged paths."""
    entries: list[Entry] = []
    unmerged: dict[str, None] = {}
    for match in _RECORD.finditer(listing):
        tag, mode, oid, stage, path = match.groups()[:5]
        if stage != "0":
            unmerged[path] = None
        elif tag.upper() != "S":
            entries.append(Entry(mode, oid, path, _stamp(match.groups()[5:])))
    return entries, list(unmerged)


def _same_time(actual: int, recorded: int) -> bool:
    """Equal to the nanosecond, or to the second when git recorded no nanoseconds."""
    second = 1_000_000_000
    return actual == recorded or (recorded % second == 0 and actual // second == recorded // second)


def _untouched(root: Path, entry: Entry, index_mtime: int) -> bool:
    """True if git's recorded size, times and inode still hold and are not racy (as git decides:
    then git would not read the file either)."""
    if entry.stamp is None or entry.mode not in (_REGULAR, _EXECUTABLE):
        return False
    try:
        info = os.lstat(os.path.join(root, entry.path))  # str joins: this runs per tracked file
    except OSError:
        return False
    size, mtime, ctime, inode = entry.stamp
    executable = _EXECUTABLE if info.st_mode & 0o111 else _REGULAR
    return (
        stat.S_ISREG(info.st_mode)
        and info.st_size == size
        and _same_time(info.st_mtime_ns, mtime)
        and _same_time(info.st_ctime_ns, ctime)
        and info.st_ino == inode
        and info.st_mtime_ns < index_mtime  # written in the index's last moment: racy, read it
        and executable == entry.mode
    )


def _object_id(kind: str, data: bytes, algorithm: str) -> str:
    import hashlib

    digest = hashlib.new(algorithm)
    digest.update(f"{kind} {len(data)}\0".encode())
    digest.update(data)
    return digest.hexdigest()


def _worktree(root: Path, entry: Entry, algorithm: str) -> tuple[str | None, bytes | str | None]:
    """The file's mode and content as git would store it (its object id instead when it is
    larger than MAX_DIFF_BYTES), or (None, None) if it is gone or not a file."""
    path = root / entry.path
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            return _LINK, os.fsencode(os.readlink(path))
        if not stat.S_ISREG(info.st_mode):
            return None, None
        mode = _EXECUTABLE if info.st_mode & 0o111 else _REGULAR
        # A file swapped for a link or a FIFO meanwhile is not followed or waited on.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size <= MAX_DIFF_BYTES:
                return mode, handle.read()
            import hashlib

            digest = hashlib.new(algorithm)
            digest.update(f"blob {size}\0".encode())
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
            return mode, digest.hexdigest()
    except OSError:
        return None, None


def _compare(entry: Entry, mode: str, data: bytes | str, algorithm: str) -> Change | None:
    """The change of one existing file, or None if git would see none."""
    if isinstance(data, str):  # a large file, hashed in pieces
        same = data == entry.oid
    else:
        same = _object_id("blob", data, algorithm) == entry.oid
        if not same and b"\r\n" in data:
            same = _object_id("blob", data.replace(b"\r\n", b"\n"), algorithm) == entry.oid
    if same and mode == entry.mode:
        return None
    if same:
        return Change(entry, mode, None)
    return (
        Change(entry, mode, b"", large=True) if isinstance(data, str) else Change(entry, mode, data)
    )


def changed(
    root: Path, entries: list[Entry], algorithm: str, filemode: bool, index_mtime: int = 0
) -> list[Change]:
    """The entries whose work-tree file differs from the index (runs in a worker thread).

    Files whose size and mtime match the index (and are older than it) are not read, as in git.
    Without `filemode` (core.fileMode false) the executable bit is not compared, as in git.
    """
    changes: list[Change] = []
    for entry in entries:
        if entry.mode == _GITLINK or _untouched(root, entry, index_mtime):
            continue  # submodules are their own repositories
        mode, data = _worktree(root, entry, algorithm)
        if mode is None or data is None:
            changes.append(Change(entry, None, None))
            continue
        if not filemode and {mode, entry.mode} <= {_REGULAR, _EXECUTABLE}:
            mode = entry.mode
        change = _compare(entry, mode, data, algorithm)
        if change is not None:
            changes.append(change)
    return changes


async def _sizes(
    root: Path, oids: list[str], timeout: float, env: Mapping[str, str]
) -> dict[str, int]:
    """The sizes of the blobs `oids` (`git cat-file --batch-check`)."""
    request = "".join(f"{oid}\n" for oid in oids).encode()
    result = await run_git(
        root, ("cat-file", "--batch-check"), timeout=timeout, env=env, stdin_data=request
    )
    sizes: dict[str, int] = {}
    for line in result.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit():
            sizes[parts[0]] = int(parts[2])
    return sizes


async def blobs(
    root: Path, oids: list[str], timeout: float, env: Mapping[str, str]
) -> dict[str, bytes]:
    """The blobs `oids` of at most MAX_DIFF_BYTES, read with one `git cat-file --batch`."""
    if not oids:
        return {}
    sizes = await _sizes(root, oids, timeout, env)
    oids = [oid for oid in oids if sizes.get(oid, MAX_DIFF_BYTES + 1) <= MAX_DIFF_BYTES]
    if not oids:
        return {}
    request = "".join(f"{oid}\n" for oid in oids).encode()
    result = await run_git(
        root, ("cat-file", "--batch"), timeout=timeout, env=env, stdin_data=request,
        max_output=256_000_000,
    )  # fmt: skip
    if result.exit_code != 0 or result.truncated:
        raise ToolError(f"git cat-file failed: {result.stderr.strip()[:300] or 'output too large'}")
    data, found, at = result.raw_stdout, {}, 0
    for oid in oids:
        end = data.index(b"\n", at)
        header = data[at:end].split()
        at = end + 1
        if len(header) == 3:
            size = int(header[2])
            found[oid] = data[at : at + size]
            at += size + 1
    return found


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def _body(path: str, old: bytes, new: bytes) -> list[str]:
    """The unified diff of one text file, or a one-line note for binary or huge files."""
    if b"\0" in old[:8000] or b"\0" in new[:8000]:
        return [f"Binary files a/{path} and b/{path} differ"]
    if max(len(old), len(new)) > MAX_DIFF_BYTES:
        return [_not_diffed(path)]
    out: list[str] = []
    tab = "\t" if " " in path else ""  # as git writes names with spaces in the headers
    names = (f"a/{path}{tab}", f"b/{path}{tab}")
    import difflib

    for line in difflib.unified_diff(_lines(old), _lines(new), *names, n=3):
        out.append(line.rstrip("\n").removesuffix("\r") if line.endswith("\n") else line)
        if not line.endswith("\n"):
            out.append("\\ No newline at end of file")
    return out


def _not_diffed(path: str) -> str:
    return f"(a/{path} or b/{path} is larger than {MAX_DIFF_BYTES} bytes; not diffed)"


def render(change: Change, old: bytes | None) -> str:
    """One `diff --git` block for a change, in git's format; `old` None: too large to read."""
    entry, path = change.entry, change.entry.path
    lines = [f"diff --git a/{path} b/{path}"]
    if change.new_mode is None:
        body = _body(path, old, b"") if old is not None else [_not_diffed(path)]
        if len(body) > 1 and body[1].startswith("+++ "):
            body[1] = "+++ /dev/null"
        return "\n".join([*lines, f"deleted file mode {entry.mode}", *body])
    if change.new_mode != entry.mode:
        lines += [f"old mode {entry.mode}", f"new mode {change.new_mode}"]
    if change.new is not None:
        too_large = change.large or old is None
        lines += [_not_diffed(path)] if too_large else _body(path, old or b"", change.new)
    return "\n".join(lines)


async def _git_text(
    root: Path, argv: tuple[str, ...], timeout: float, env: Mapping[str, str]
) -> str:
    result = await run_git(root, argv, timeout=timeout, env=env, max_output=256_000_000)
    if result.exit_code != 0 or result.truncated:
        message = result.stderr.strip()[:300] or "output too large"
        raise ToolError(f"git {argv[0]} failed: {message}")
    return result.stdout


async def unstaged_diff(
    root: Path, timeout: float, env: Mapping[str, str]
) -> tuple[str, list[str]]:
    """The work tree's changes against the index as a git-style diff, and the unmerged paths."""
    about = ("rev-parse", "--show-object-format", "--git-path", "index")
    listing, about_text, filemode = await asyncio.gather(  # three reads, run at once
        _git_text(root, ("ls-files", "-s", "-t", "--debug", "-z"), timeout, env),
        _git_text(root, about, timeout, env),
        run_git(root, ("config", "--bool", "core.fileMode"), timeout=timeout, env=env),
    )
    algorithm, index = about_text.splitlines()[:2]
    entries, unmerged = parse_index(listing)
    if algorithm not in ("sha1", "sha256"):
        raise ToolError(f"unsupported git object format {algorithm!r}")
    exact = filemode.stdout.strip() != "false"
    try:
        index_mtime = os.stat(root / index).st_mtime_ns
    except OSError:
        index_mtime = 0  # no index: every file is read
    found = await asyncio.to_thread(changed, root, entries, algorithm, exact, index_mtime)
    # Blobs over MAX_DIFF_BYTES are not read (render notes them); `blobs` checks sizes first.
    wanted = {
        c.entry.oid for c in found if not c.large and (c.new is not None or c.new_mode is None)
    }
    old = await blobs(root, sorted(wanted), timeout, env)
    text = "\n".join(render(change, old.get(change.entry.oid)) for change in found)
    return text, unmerged
