"""The system call filter: what each program decides, run in a classic-BPF interpreter for every
architecture with a table, and its numbers against libseccomp's resolver."""

from __future__ import annotations

import errno
import os
import shutil
import struct
import subprocess
from collections.abc import Sequence

import pytest

from sandboxverify.sandbox._seccomp import (
    AARCH64,
    ARCHES,
    CLONE_NAMESPACES,
    DENIED,
    RET_ALLOW,
    RET_ERRNO,
    RET_KILL_PROCESS,
    TERMINAL_REQUESTS,
    X86_64,
    Arch,
    instructions,
    program,
)

EPERM = RET_ERRNO | errno.EPERM
ENOSYS = RET_ERRNO | errno.ENOSYS
#: AUDIT_ARCH_I386 (``int 0x80`` on x86_64) and AUDIT_ARCH_ARM (AArch32 on aarch64)
FOREIGN = {"x86_64": 0x40000003, "aarch64": 0x40000028}
#: what fork() and pthread_create() pass to clone
FORK_FLAGS, THREAD_FLAGS = 0x01200011, 0x003D0F00
ARCH_TABLES = [X86_64, AARCH64]


def decide(arch: Arch, nr: int, args: Sequence[int] = (), audit: int | None = None) -> int:
    """What the filter for ``arch`` returns for one call: a classic-BPF interpreter of the
    instructions seccomp filters use, over a ``struct seccomp_data``."""
    words = [*args, 0, 0, 0, 0, 0, 0][:6]
    data = struct.pack("<IIQ6Q", nr & 0xFFFFFFFF, arch.audit if audit is None else audit, 0, *words)
    code = instructions(arch)
    accumulator, pc = 0, 0
    while True:
        op, true, false, k = code[pc]
        if op == 0x20:  # ld [k]
            accumulator = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif op == 0x06:  # ret k
            return k
        else:
            taken = {
                0x15: accumulator == k,  # jeq
                0x35: accumulator >= k,  # jge
                0x45: bool(accumulator & k),  # jset
            }[op]
            pc += 1 + (true if taken else false)


@pytest.mark.parametrize("arch", ARCH_TABLES, ids=lambda arch: arch.name)
def test_every_denied_call_fails_with_eperm_and_nothing_else_does(arch: Arch) -> None:
    denied = {arch.numbers[name] for name in DENIED if name in arch.numbers}
    special = {arch.numbers[name] for name in ("clone", "clone3", "ioctl")}
    assert len(denied) == len([name for name in DENIED if name in arch.numbers])  # no clashes
    for nr in range(-1, 1024):
        verdict = decide(arch, nr)
        if nr in denied:
            assert verdict == EPERM, nr
        elif nr not in special:
            assert verdict == RET_ALLOW, nr


@pytest.mark.parametrize("arch", ARCH_TABLES, ids=lambda arch: arch.name)
def test_clone3_is_enosys_so_threads_fall_back_to_clone(arch: Arch) -> None:
    assert decide(arch, arch.numbers["clone3"]) == ENOSYS


@pytest.mark.parametrize("arch", ARCH_TABLES, ids=lambda arch: arch.name)
def test_clone_may_fork_and_start_threads_but_make_no_namespace(arch: Arch) -> None:
    clone = arch.numbers["clone"]
    assert decide(arch, clone, [FORK_FLAGS]) == RET_ALLOW
    assert decide(arch, clone, [THREAD_FLAGS]) == RET_ALLOW
    for bit in range(64):
        flags = 1 << bit
        expected = EPERM if flags & CLONE_NAMESPACES else RET_ALLOW
        assert decide(arch, clone, [flags | FORK_FLAGS]) == expected, hex(flags)


@pytest.mark.parametrize("arch", ARCH_TABLES, ids=lambda arch: arch.name)
def test_no_typing_into_the_terminal_whatever_the_high_bits(arch: Arch) -> None:
    ioctl = arch.numbers["ioctl"]
    for request in TERMINAL_REQUESTS:
        for high in (0, 1 << 32, 0xFFFFFFFF << 32):
            assert decide(arch, ioctl, [0, request | high]) == EPERM
    assert decide(arch, ioctl, [0, 0x5401]) == RET_ALLOW  # TCGETS: is it a terminal


@pytest.mark.parametrize("arch", ARCH_TABLES, ids=lambda arch: arch.name)
def test_another_architectures_calls_kill_the_process(arch: Arch) -> None:
    for nr in (0, 1, arch.numbers["keyctl"], 59, 221):
        assert decide(arch, nr, audit=FOREIGN[arch.name]) == RET_KILL_PROCESS


def test_x32_calls_kill_the_process_on_x86_64() -> None:
    """x32 shares x86_64's AUDIT_ARCH: without this, ``keyctl | 0x40000000`` would pass."""
    for nr in (0, 16, 56, X86_64.numbers["keyctl"], 435, 521, 545):
        assert decide(X86_64, 0x40000000 | nr) == RET_KILL_PROCESS
    assert decide(X86_64, -1) == RET_ALLOW  # as libseccomp: -1 is what tracers skip with


@pytest.mark.parametrize("arch", ARCH_TABLES, ids=lambda arch: arch.name)
def test_the_program_is_struct_sock_filter(arch: Arch) -> None:
    encoded = program(arch)
    assert len(encoded) % 8 == 0 and len(encoded) // 8 == len(instructions(arch)) < 256
    assert list(struct.iter_unpack("=HBBI", encoded)) == instructions(arch)


def test_machine_names_map_to_the_tables() -> None:
    assert ARCHES["x86_64"] is ARCHES["amd64"] is X86_64
    assert ARCHES["aarch64"] is ARCHES["arm64"] is AARCH64
    assert set(AARCH64.numbers) == set(X86_64.numbers) - {"uselib", "iopl", "ioperm"}


@pytest.mark.parametrize("arch", ARCH_TABLES, ids=lambda arch: arch.name)
def test_the_numbers_are_libseccomps(arch: Arch) -> None:
    """libseccomp's resolver (Debian package ``seccomp``) knows every architecture's table."""
    resolver = shutil.which("scmp_sys_resolver")
    if resolver is None:
        if os.environ.get("SANDBOXVERIFY_TEST_REQUIRE_OS_SANDBOX"):
            pytest.fail("scmp_sys_resolver is not installed (.ci/run installs seccomp)")
        pytest.skip("libseccomp's scmp_sys_resolver is not installed")
    for name, number in arch.numbers.items():
        said = subprocess.run(
            [resolver, "-a", arch.name, name], capture_output=True, text=True, check=True
        )
        assert int(said.stdout) == number, name
