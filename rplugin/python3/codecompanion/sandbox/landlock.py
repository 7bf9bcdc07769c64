"""Landlock's rights, and a small ctypes layer over its three system calls (Linux 5.13+).

The native launcher (confine.c) makes the system calls itself from the rights and paths the
host sends it; ctypes is loaded only where a forked child of the host confines itself (no
native launcher) or where that launcher is missing and the kernel is probed from Python. There
the ruleset is built in the host (creating one confines nobody); only `restrict_self` runs in
the child that is about to execute a command.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import NamedTuple

# Landlock's system call numbers are the same on every architecture (added after the merge).
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5

NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1

SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

# Rights that make sense on a file (not a directory) in a path-beneath rule.
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR
# Everything a build needs in a writable folder; never device nodes.
WRITE_RIGHTS = (
    READ_RIGHTS
    | WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_SYM
    | REFER
    | TRUNCATE
)


class _Calls(NamedTuple):
    """ctypes, libc's syscall() and the two attribute structures."""

    ctypes: ModuleType
    syscall: Callable[..., int]
    ruleset_attr: Callable[..., object]
    path_beneath_attr: Callable[..., object]


@functools.cache
def _calls() -> _Calls:
    """The system calls' means, loaded on first use (a plain chat never loads ctypes)."""
    import ctypes

    class RulesetAttr(ctypes.Structure):
        _fields_ = (
            ("handled_access_fs", ctypes.c_uint64),
            ("handled_access_net", ctypes.c_uint64),
            ("scoped", ctypes.c_uint64),
        )

    class PathBeneathAttr(ctypes.Structure):
        _pack_ = 1
        _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))

    syscall = ctypes.CDLL(None, use_errno=True).syscall
    syscall.restype = ctypes.c_long
    return _Calls(ctypes, syscall, RulesetAttr, PathBeneathAttr)


def abi_version() -> int:
    """The kernel's Landlock ABI (0: none, or disabled at boot, or blocked by seccomp)."""
    if sys.platform != "linux":
        return 0
    ctypes, syscall, _attr, _rule = _calls()
    version = syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(int(version), 0)


def handled_fs(abi: int) -> int:
    """The file-system rights this ABI knows (all of them are handled: denied unless granted)."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def ruleset_attr(abi: int, *, deny_tcp: bool, scoped: bool) -> tuple[int, int, int, int]:
    """The ruleset's attribute for `abi`: (handled fs, handled net, scoped, its size in bytes)."""
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 and deny_tcp else 0
    scopes = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 and scoped else 0
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8  # the fields this ABI knows
    return handled_fs(abi), net, scopes, size


def _error(what: str) -> OSError:
    err = _calls().ctypes.get_errno()
    return OSError(err, f"{what}: {os.strerror(err)}")


def create_ruleset(abi: int, *, deny_tcp: bool, scoped: bool) -> int:
    """A new ruleset fd handling every right of `abi` (plus TCP and scopes when asked)."""
    ctypes, syscall, attr_type, _rule = _calls()
    fs, net, scopes, size = ruleset_attr(abi, deny_tcp=deny_tcp, scoped=scoped)
    attr = attr_type(fs, net, scopes)
    fd = syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if fd < 0:
        raise _error("landlock_create_ruleset")
    return int(fd)


def allow_beneath(ruleset: int, path: str, rights: int, abi: int) -> bool:
    """Grant `rights` beneath `path` (only file rights when it is a file); False if missing."""
    ctypes, syscall, _attr, rule_type = _calls()
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        rights &= handled_fs(abi)
        attr = rule_type(rights, fd)
        if syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(attr), 0) < 0:
            raise _error(f"landlock_add_rule {path}")
    finally:
        os.close(fd)
    return True


def build(abi: int, grants: Iterable[tuple[str, int]], *, deny_tcp: bool) -> int:
    """A ruleset fd with each (path, rights) granted; the caller keeps and closes it."""
    ruleset = create_ruleset(abi, deny_tcp=deny_tcp, scoped=True)
    try:
        for path, rights in grants:
            allow_beneath(ruleset, path, rights, abi)
    except OSError:
        os.close(ruleset)
        raise
    return ruleset


def restrict_self(ruleset: int) -> None:
    """Confine the calling thread (and what it executes) to the ruleset; needs no_new_privs."""
    if _calls().syscall(_RESTRICT_SELF, ruleset, 0) < 0:
        raise _error("landlock_restrict_self")
