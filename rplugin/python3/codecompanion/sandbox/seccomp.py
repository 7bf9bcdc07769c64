"""A seccomp filter that takes the network away: no sockets, no io_uring, no foreign ABI.

Landlock cannot stop a connect to a Unix socket by path (Neovim's RPC socket) nor UDP; a
network namespace cannot stop the first either. So without network a command may create no
socket at all; `socketpair` stays (stream and seqpacket pairs only: they cannot be connected
elsewhere), which event loops and pipes between a program's own processes use. io_uring is
refused because its operations do not pass through this filter.
"""

from __future__ import annotations

import errno
import functools
import os
import struct
from typing import Any

# seccomp_data: int nr; u32 arch; u64 ip; u64 args[6].
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24
_LD_W_ABS, _JEQ_K, _JGE_K, _AND_K, _RET_K = 0x20, 0x15, 0x35, 0x54, 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_AF_UNIX, _SOCK_STREAM, _SOCK_SEQPACKET = 1, 1, 5
_SOCK_FLAGS = 0o4000 | 0o2000000  # SOCK_NONBLOCK | SOCK_CLOEXEC

# (audit arch, socket, socketpair, connect, x32 bit) per machine; io_uring is 425-427 on both.
_MACHINES = {
    "x86_64": (0xC000003E, 41, 53, 42, 0x40000000),
    "aarch64": (0xC00000B7, 198, 199, 203, 0),
}
_IO_URING = (425, 426, 427)


def supported() -> bool:
    """True on a machine this filter knows the system call numbers of."""
    return os.uname().machine in _MACHINES


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def no_network_program() -> bytes:
    """The BPF program, as the bytes of its `struct sock_filter` array."""
    arch, socket, socketpair, connect, x32 = _MACHINES[os.uname().machine]
    deny = _RET_ERRNO | errno.EACCES
    refused = [socket, connect, *_IO_URING]
    prog = [_insn(_LD_W_ABS, 0, 0, _ARCH), _insn(_JEQ_K, 1, 0, arch)]
    prog.append(_insn(_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS))  # a foreign ABI: nothing
    prog.append(_insn(_LD_W_ABS, 0, 0, _NR))
    if x32:
        prog += [_insn(_JGE_K, 0, 1, x32), _insn(_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS)]
    for number in refused:
        prog += [_insn(_JEQ_K, 0, 1, number), _insn(_RET_K, 0, 0, deny)]
    prog += [_insn(_JEQ_K, 1, 0, socketpair), _insn(_RET_K, 0, 0, _RET_ALLOW)]
    # socketpair(AF_UNIX, SOCK_STREAM or SOCK_SEQPACKET [| flags], ...)
    prog += [
        _insn(_LD_W_ABS, 0, 0, _ARG0),
        _insn(_JEQ_K, 1, 0, _AF_UNIX),
        _insn(_RET_K, 0, 0, deny),
        _insn(_LD_W_ABS, 0, 0, _ARG1),
        _insn(_AND_K, 0, 0, 0xFFFFFFFF & ~_SOCK_FLAGS),
        _insn(_JEQ_K, 2, 0, _SOCK_STREAM),
        _insn(_JEQ_K, 1, 0, _SOCK_SEQPACKET),
        _insn(_RET_K, 0, 0, deny),
        _insn(_RET_K, 0, 0, _RET_ALLOW),
    ]
    return b"".join(prog)


@functools.cache
def _libc() -> Any:
    """ctypes and libc's prctl(), loaded only where a child confines itself in Python (the
    native launcher loads the program itself)."""
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.restype = ctypes.c_int
    return ctypes, prctl


class Filter:
    """A filter prepared in the host; `install` (in the child) is two prctl calls."""

    def __init__(self, program: bytes) -> None:
        import ctypes  # loaded already by _libc()

        _libc()

        class Fprog(ctypes.Structure):
            _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))

        self.program = program
        self._buffer = ctypes.create_string_buffer(program, len(program))
        self._fprog = Fprog(len(program) // 8, ctypes.addressof(self._buffer))

    def install(self) -> None:
        """Set no_new_privs and load the filter into the calling thread (OSError if refused)."""
        ctypes, prctl = _libc()
        no_new_privs()
        if prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(self._fprog), 0, 0):
            err = ctypes.get_errno()
            raise OSError(err, "seccomp filter refused")


def no_new_privs() -> None:
    """No setuid gains from here on (Landlock and seccomp both need it)."""
    ctypes, prctl = _libc()
    if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
        raise OSError(ctypes.get_errno(), "no_new_privs refused")
