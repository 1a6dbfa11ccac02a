"""The system call filter every sandboxed process runs under (Linux, x86_64 and aarch64).

A deny list on top of "allow": the calls below fail with ``EPERM``, so code that merely probes
for them (a library trying io_uring, a test runner trying ptrace) carries on, and code that needs
them fails at the call. They give a process what no plugin load, build or smoke run needs: other
processes' memory (``ptrace``, ``process_vm_*``, ``pidfd_getfd``), the kernel's key store
(``keyctl``), new namespaces to escape through (``unshare``, ``setns``, ``clone`` with a namespace
flag), mounts, kernel modules and ``kexec``, io_uring (which runs system calls past any filter),
``userfaultfd`` and ``perf_event_open`` and ``bpf`` (kernel attack surface), and ``TIOCSTI``
(typing into a terminal). ``clone3`` fails with ``ENOSYS``, not ``EPERM``: its flags sit behind a
pointer a filter cannot read, and glibc falls back to ``clone`` (whose flags it can) only on
``ENOSYS``. A call made through another architecture's entry point (i386's ``int 0x80`` on
x86_64, AArch32 on aarch64) or x86_64's x32 ABI kills the process: the numbers below mean
something else there.

The filter is classic BPF, generated here: the Python bindings of libseccomp were weighed and
none fits (Debian's ``python3-seccomp`` exists for the system interpreter only, ``pyseccomp`` is
unmaintained and needs ``libseccomp.so``, ``seccompy`` needs Python 3.10 and its programs let x32
calls through). ``tests/sandbox/test_seccomp.py`` runs the programs in a BPF interpreter and, where
libseccomp is installed, compares them with its own. An architecture without a table here gets no
filter (numbers are never guessed: a wrong one allows what it should deny, a wrong architecture
kills every process), and the report says so.
"""

from __future__ import annotations

import errno
import functools
import os
import struct
import sys
from collections.abc import Mapping

from sandboxverify._frozen import frozen

#: the calls that fail with EPERM, whatever their arguments
DENIED = (
    "keyctl",
    "add_key",
    "request_key",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "process_madvise",
    "kcmp",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "userfaultfd",
    "perf_event_open",
    "bpf",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "name_to_handle_at",
    "open_by_handle_at",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "acct",
    "quotactl",
    "swapon",
    "swapoff",
    "reboot",
    "syslog",
    "uselib",
    "iopl",
    "ioperm",
)

#: the same number on every architecture (the kernel numbers every call from 424 on alike)
_COMMON = {
    "pidfd_getfd": 438,
    "process_madvise": 440,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "clone3": 435,
    "mount_setattr": 442,
}


@frozen
class Arch:
    """An architecture's system call numbers, as ``<asm/unistd.h>`` has them."""

    name: str
    #: ``AUDIT_ARCH_*``: what ``seccomp_data.arch`` says for a call of this architecture
    audit: int
    numbers: Mapping[str, int]
    #: x86_64: calls numbered from ``0x40000000`` on are x32's, under the same ``audit`` value
    x32: bool = False


X86_64 = Arch(
    "x86_64",
    0xC000003E,
    {
        **_COMMON,
        "ioctl": 16,
        "clone": 56,
        "ptrace": 101,
        "syslog": 103,
        "uselib": 134,
        "pivot_root": 155,
        "acct": 163,
        "mount": 165,
        "umount2": 166,
        "swapon": 167,
        "swapoff": 168,
        "reboot": 169,
        "iopl": 172,
        "ioperm": 173,
        "init_module": 175,
        "delete_module": 176,
        "quotactl": 179,
        "kexec_load": 246,
        "add_key": 248,
        "request_key": 249,
        "keyctl": 250,
        "unshare": 272,
        "perf_event_open": 298,
        "name_to_handle_at": 303,
        "open_by_handle_at": 304,
        "setns": 308,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "kcmp": 312,
        "finit_module": 313,
        "kexec_file_load": 320,
        "bpf": 321,
        "userfaultfd": 323,
    },
    x32=True,
)
#: aarch64 numbers its calls by the kernel's generic table (no ``uselib``, ``iopl``, ``ioperm``)
AARCH64 = Arch(
    "aarch64",
    0xC00000B7,
    {
        **_COMMON,
        "ioctl": 29,
        "umount2": 39,
        "mount": 40,
        "pivot_root": 41,
        "quotactl": 60,
        "acct": 89,
        "unshare": 97,
        "kexec_load": 104,
        "init_module": 105,
        "delete_module": 106,
        "syslog": 116,
        "ptrace": 117,
        "reboot": 142,
        "add_key": 217,
        "request_key": 218,
        "keyctl": 219,
        "clone": 220,
        "swapon": 224,
        "swapoff": 225,
        "perf_event_open": 241,
        "name_to_handle_at": 264,
        "open_by_handle_at": 265,
        "setns": 268,
        "process_vm_readv": 270,
        "process_vm_writev": 271,
        "kcmp": 272,
        "finit_module": 273,
        "bpf": 280,
        "userfaultfd": 282,
        "kexec_file_load": 294,
    },
)
ARCHES = {"x86_64": X86_64, "amd64": X86_64, "aarch64": AARCH64, "arm64": AARCH64}

# <linux/filter.h>, <linux/seccomp.h>
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
#: ``struct seccomp_data``: ``int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]``
_NR, _ARCH = 0, 4
_X32_BIT = 0x40000000
#: ``clone`` flags that make a namespace: ``NEWNS``, ``NEWCGROUP``, ``NEWUTS``, ``NEWIPC``,
#: ``NEWUSER``, ``NEWPID``, ``NEWNET`` (``CLONE_NEWTIME`` is one of ``CSIGNAL``'s bits in ``clone``)
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x60000000
#: typing into the terminal (``TIOCSTI``), and the console's selection (``TIOCLINUX``)
TERMINAL_REQUESTS = (0x5412, 0x541C)


@frozen
class SyscallFilter:
    """A filter for one architecture: ``program`` is ``struct sock_filter[]``, as
    ``bwrap --seccomp FD`` and ``prctl(PR_SET_SECCOMP)`` read it."""

    arch: str
    program: bytes

    def pipe(self) -> int:
        """A fresh descriptor to read the program from (each reader reads it to the end), to be
        handed to one process and closed once it started."""
        read, write = os.pipe()
        try:
            os.write(write, self.program)  # under 1 KiB: a pipe holds it without a reader
        finally:
            os.close(write)
        return read


@functools.cache
def syscall_filter() -> SyscallFilter | None:
    """The filter for this machine, or ``None`` where there is none: not Linux, or an
    architecture without a table (see :func:`unfiltered_reason`)."""
    arch = native_arch()
    return SyscallFilter(arch.name, program(arch)) if arch is not None else None


def unfiltered_reason() -> str:
    """Why this machine gets no filter (for the report)."""
    if not sys.platform.startswith("linux"):
        return f"system call filters are Linux's (this is {sys.platform})"
    return f"sandboxverify has no system call table for {os.uname().machine or 'this machine'}"


def native_arch() -> Arch | None:
    """This machine's architecture when it has a table: little-endian, a 64-bit interpreter
    (a 32-bit one on a 64-bit kernel makes calls of another architecture)."""
    if not sys.platform.startswith("linux") or sys.byteorder != "little":
        return None
    if struct.calcsize("P") != 8:
        return None
    return ARCHES.get(os.uname().machine.lower())


def program(arch: Arch) -> bytes:
    """The filter for ``arch``, encoded."""
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in instructions(arch))


def instructions(arch: Arch) -> list[tuple[int, int, int, int]]:
    """The filter for ``arch`` as ``(code, jump if true, jump if false, k)``."""
    code = _Program()
    code.emit(_LD_W_ABS, _ARCH)
    code.emit(_JEQ_K, arch.audit, false="kill")
    code.emit(_LD_W_ABS, _NR)
    if arch.x32:  # x32's numbers: kill, but for -1 (as libseccomp does)
        code.emit(_JGE_K, _X32_BIT, false=1)
        code.emit(_JEQ_K, 0xFFFFFFFF, false="kill")
    for name in DENIED:
        number = arch.numbers.get(name)
        if number is not None:
            code.emit(_JEQ_K, number, true="deny")
    code.emit(_JEQ_K, arch.numbers["clone3"], true="enosys")
    code.emit(_JEQ_K, arch.numbers["clone"], true="clone")
    code.emit(_JEQ_K, arch.numbers["ioctl"], true="ioctl")
    code.emit(_RET_K, RET_ALLOW)
    code.label("clone")
    code.emit(_LD_W_ABS, _argument(0))  # the flags (clone's first argument here)
    code.emit(_JSET_K, CLONE_NAMESPACES, true="deny")
    code.emit(_RET_K, RET_ALLOW)
    code.label("ioctl")
    code.emit(_LD_W_ABS, _argument(1))  # the request: an unsigned int, its low word is all of it
    for request in TERMINAL_REQUESTS:
        code.emit(_JEQ_K, request, true="deny")
    code.emit(_RET_K, RET_ALLOW)
    code.label("deny")
    code.emit(_RET_K, RET_ERRNO | errno.EPERM)
    code.label("enosys")
    code.emit(_RET_K, RET_ERRNO | errno.ENOSYS)
    code.label("kill")
    code.emit(_RET_K, RET_KILL_PROCESS)
    return code.resolved()


def _argument(index: int) -> int:
    """Where the low 32 bits of argument ``index`` are in ``seccomp_data`` (little-endian)."""
    return 16 + 8 * index


class _Program:
    """Instructions whose jumps name labels (or skip a count), resolved at the end."""

    def __init__(self) -> None:
        self._code: list[tuple[int, int | str, int | str, int]] = []
        self._labels: dict[str, int] = {}

    def emit(self, op: int, k: int, *, true: int | str = 0, false: int | str = 0) -> None:
        self._code.append((op, true, false, k))

    def label(self, name: str) -> None:
        self._labels[name] = len(self._code)

    def resolved(self) -> list[tuple[int, int, int, int]]:
        return [
            (op, self._offset(at, true), self._offset(at, false), k)
            for at, (op, true, false, k) in enumerate(self._code)
        ]

    def _offset(self, at: int, target: int | str) -> int:
        offset = target if isinstance(target, int) else self._labels[target] - at - 1
        if not 0 <= offset <= 255:  # a classic-BPF jump is one byte
            raise ValueError(f"jump of {offset} at instruction {at}")
        return offset
