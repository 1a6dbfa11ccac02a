"""What a process running package code can reach, started as every confined step is (the one
subprocess helper, a launcher): the host's network and local services, the caller's session
keyring, the system calls the filter denies, and the sandbox's memory-backed directories."""

from __future__ import annotations

import dataclasses
import json
import secrets
import sys
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.sandbox import _bwrap
from sandboxverify.sandbox._bwrap import Bubblewrap, sandbox_filter
from sandboxverify.sandbox._confinement import (
    Confined,
    Confinement,
    Isolation,
    NetworkName,
    ProcessIsolation,
)
from sandboxverify.sandbox._isolation import interpreter_roots
from sandboxverify.sandbox._seccomp import native_arch, syscall_filter
from sandboxverify.sandbox._subprocess import Command, run
from tests.hostile_host import holding_a_key, host_services
from tests.os_sandbox import require_os_sandbox

pytestmark = pytest.mark.skipif(
    native_arch() is None, reason="the filter and the keyring are Linux's, on x86_64 and aarch64"
)

#: run inside: every attempt, each answered with what happened (JSON on stdout)
_PROBE = r"""
import ctypes, errno, json, os, socket, sys, threading
given = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
seen = {}

def call(name, *args):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(given["numbers"][name]), *args)
    return "ok" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")

def connect(family, address):
    with socket.socket(family, socket.SOCK_STREAM) as client:
        client.settimeout(5)
        try:
            client.connect(address)
            return client.recv(64).decode()
        except OSError as exc:
            return errno.errorcode.get(exc.errno, str(exc))

seen["tcp"] = connect(socket.AF_INET, ("127.0.0.1", given["port"]))
seen["abstract"] = connect(socket.AF_UNIX, "\0" + given["abstract"])
with open("/proc/net/unix") as handle:
    seen["listed"] = given["abstract"] in handle.read()
search = libc.syscall(
    ctypes.c_long(given["numbers"]["keyctl"]), ctypes.c_long(10), ctypes.c_long(-3),
    b"user", given["key"].encode(), ctypes.c_long(0),
)
seen["key"] = "found" if search >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
params = ctypes.create_string_buffer(120)
seen["io_uring_setup"] = call("io_uring_setup", ctypes.c_long(8), params)
seen["ptrace"] = call("ptrace", ctypes.c_long(0), ctypes.c_long(0), None, None)  # TRACEME
seen["unshare"] = call("unshare", ctypes.c_long(0x10000000))  # CLONE_NEWUSER
seen["clone3"] = call("clone3", None, ctypes.c_long(0))
thread = threading.Thread(target=lambda: None)
thread.start()
thread.join()
seen["threads"] = "ok"
with open("/proc/self/status") as handle:
    seen["seccomp"] = [l.split()[1] for l in handle if l.startswith("Seccomp:")][0]
try:
    with open(os.path.join(os.environ["HOME"], "big"), "wb") as handle:
        handle.write(b"x" * given["fill"])
    seen["fill"] = "ok"
except OSError as exc:
    seen["fill"] = errno.errorcode.get(exc.errno, str(exc))
print(json.dumps(seen))
"""


def probe(tmp_path: Path, isolation: Isolation | None, given: dict[str, Any]) -> dict[str, Any]:
    """The probe, run as a confined step is (``None``: unconfined, as an installer is)."""
    python = Path(sys.executable).resolve()
    home, work = tmp_path / "home", tmp_path / "work"
    for path in (home, work):
        path.mkdir(exist_ok=True)
    confinement = Confinement(
        cwd=work, read_only=interpreter_roots(python), private=(home, tmp_path / "tmp", work)
    )
    arch = native_arch()
    assert arch is not None
    command = Command(
        argv=[
            str(python),
            "-I",
            "-S",
            "-c",
            _PROBE,
            json.dumps({**given, "numbers": arch.numbers}),
        ],
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        cwd=work,
        timeout=60,
        log_path=tmp_path / "logs" / "probe.log",
        label="probe",
        launcher=Confined(isolation, confinement) if isolation is not None else None,
    )
    outcome = run(command)
    assert outcome.ok, outcome.tail
    lines = (tmp_path / "logs" / "probe.log").read_text().splitlines()
    seen: dict[str, Any] = json.loads(lines[-1])
    return seen


def namespaces(network: NetworkName = "none") -> Bubblewrap:
    return Bubblewrap(require_os_sandbox(), network=network, syscall_filter=sandbox_filter())


@pytest.mark.parametrize("kind", ["namespaces", "process"])
def test_the_filter_and_a_keyring_of_its_own_in_either_isolation(tmp_path: Path, kind: str) -> None:
    key = f"svtest-{secrets.token_hex(4)}"
    isolation = namespaces() if kind == "namespaces" else ProcessIsolation(syscall_filter())
    with host_services() as (port, abstract):
        given = {"port": port, "abstract": abstract, "key": key, "fill": 1}
        confined, unconfined = holding_a_key(
            key, lambda: (probe(tmp_path, isolation, given), probe(tmp_path, None, given))
        )
    assert unconfined["key"] == "found"  # an unconfined process holds the caller's keyring
    assert confined["key"] == "EPERM"  # keyctl is filtered (and the keyring is not the caller's)
    assert confined["seccomp"] == "2" and unconfined["seccomp"] == "0"
    for call in ("io_uring_setup", "ptrace", "unshare"):
        assert (call, confined[call]) == (call, "EPERM")
    assert unconfined["ptrace"] == "ok"
    assert confined["clone3"] == "ENOSYS"  # so glibc falls back to clone(2)
    assert confined["threads"] == "ok"


def test_without_the_filter_the_keyring_is_still_a_fresh_one(tmp_path: Path) -> None:
    key = f"svtest-{secrets.token_hex(4)}"
    with host_services() as (port, abstract):
        given = {"port": port, "abstract": abstract, "key": key, "fill": 1}
        seen = holding_a_key(key, lambda: probe(tmp_path, ProcessIsolation(), given))
    assert seen["seccomp"] == "0"
    assert seen["key"] == "ENOKEY"  # keyctl works, and finds nothing of the caller's


def test_in_the_os_sandbox_no_host_service_answers_and_proc_net_is_its_own(
    tmp_path: Path,
) -> None:
    with host_services() as (port, abstract):
        given = {"port": port, "abstract": abstract, "key": "-", "fill": 1}
        confined = probe(tmp_path, namespaces(), given)
        unconfined = probe(tmp_path, None, given)
    assert (unconfined["tcp"], unconfined["abstract"], unconfined["listed"]) == (
        "host",
        "host",
        True,
    )
    assert (confined["tcp"], confined["abstract"]) == ("ECONNREFUSED", "ECONNREFUSED")
    assert confined["listed"] is False


@pytest.mark.parametrize("kind", ["namespaces --network", "process"])
def test_the_hosts_network_where_the_check_asks_or_there_is_no_os_sandbox(
    tmp_path: Path, kind: str
) -> None:
    isolation = namespaces("host") if kind.startswith("namespaces") else ProcessIsolation()
    with host_services() as (port, abstract):
        given = {"port": port, "abstract": abstract, "key": "-", "fill": 1}
        seen = probe(tmp_path, isolation, given)
    assert (seen["tcp"], seen["abstract"], seen["listed"]) == ("host", "host", True)


def test_the_os_sandboxs_memory_backed_directories_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bwrap, "TMPFS_BYTES", 1 << 20)
    given = {"port": 1, "abstract": "-", "key": "-", "fill": 2 << 20}
    assert probe(tmp_path, namespaces(), given)["fill"] == "ENOSPC"
    monkeypatch.setattr(_bwrap, "TMPFS_BYTES", 4 << 20)
    assert probe(tmp_path, namespaces(), given)["fill"] == "ok"


def test_a_filter_the_reaper_cannot_load_fails_the_step(tmp_path: Path) -> None:
    """Never a run without it: exit code 126, and the reason."""
    loaded = syscall_filter()
    assert loaded is not None
    broken = ProcessIsolation(dataclasses.replace(loaded, program=loaded.program[:-1]))
    command = Command(
        argv=[sys.executable, "-c", "print('ran')"],
        env={"PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        timeout=60,
        log_path=tmp_path / "step.log",
        label="step",
        launcher=Confined(broken, Confinement(cwd=tmp_path)),
    )
    outcome = run(command)
    assert outcome.returncode == 126
    assert "cannot apply the system call filter" in outcome.tail and "ran" not in outcome.tail
