"""What confinement adds to each process that runs package code: the median wall time of one
short interpreter start, as sandboxverify starts plugin code (``python -I -c``, the sandbox's
environment, the interpreter's prefixes and a runtime copy read-only, a private HOME, TMPDIR and
working directory, a result directory writable), started directly, under process isolation (the
reaper) and in the OS sandbox (bubblewrap), in interleaved rounds; each isolation as it was
before the hardening of issue 23 (the host's network, no system call filter, the caller's
session keyring) and with each piece added: a network namespace, ``/proc/keys`` covered, the
filter, and a session keyring of its own (the process started from a thread that joined one).

    python benchmarks/bench_isolation.py [--rounds 41]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sandboxverify.sandbox import _bwrap
from sandboxverify.sandbox._bwrap import Bubblewrap, available, sandbox_filter
from sandboxverify.sandbox._confinement import Confinement, ProcessIsolation
from sandboxverify.sandbox._isolation import interpreter_roots
from sandboxverify.sandbox._keyring import ended, in_fresh_keyring
from sandboxverify.sandbox._seccomp import syscall_filter
from sandboxverify.sandbox._subprocess import Launch

#: what a probe does first: start, import what the runtime imports
_CODE = "import json, importlib.metadata, os, sys"
_KEY_FILES = _bwrap._KEY_FILES


def _time(make: Callable[[], Launch], keyring: bool) -> float:
    """One start to end; the launch (and its descriptors) is made anew each time."""
    started = time.perf_counter()
    launch = make()

    def popen() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            launch.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            pass_fds=launch.pass_fds,
        )

    try:
        proc = in_fresh_keyring(popen) if keyring else popen()
    finally:
        launch.close()
    proc.wait()
    ended(proc)
    if proc.returncode != 0:
        raise SystemExit(f"{launch.argv[:3]}... exited with {proc.returncode}")
    return time.perf_counter() - started


def _bubblewrap(bwrap: Path, *, network: bool, keys: bool, seccomp: bool) -> Bubblewrap:
    """The OS sandbox with some of its pieces: ``_KEY_FILES`` is set as each launch is made."""
    _bwrap._KEY_FILES = _KEY_FILES if keys else ()
    return Bubblewrap(
        bwrap,
        network="none" if network else "host",
        syscall_filter=sandbox_filter() if seccomp else None,
    )


def _ways(
    command: list[str], confinement: Confinement
) -> dict[str, tuple[Callable[[], Launch], bool]]:
    """Each way to start ``command``: what makes its launch, and whether from a fresh keyring."""
    ways: dict[str, tuple[Callable[[], Launch], bool]] = {
        "unconfined": (lambda: Launch(command), False),
        "process, as before": (lambda: ProcessIsolation().launch(command, confinement), False),
        "process + filter": (
            lambda: ProcessIsolation(syscall_filter()).launch(command, confinement),
            False,
        ),
        "process + filter + keyring (now)": (
            lambda: ProcessIsolation(syscall_filter()).launch(command, confinement),
            True,
        ),
    }
    bwrap, _ = available()
    if bwrap is None:
        return ways
    # (network namespace, /proc/keys covered, filter, keyring)
    steps = {
        "namespaces, as before": (False, False, False, False),
        "namespaces + network namespace": (True, False, False, False),
        "  + /proc/keys covered": (True, True, False, False),
        "  + filter": (True, True, True, False),
        "  + keyring (now)": (True, True, True, True),
    }
    for name, (network, keys, seccomp, keyring) in steps.items():
        make = _in_bubblewrap(
            bwrap, command, confinement, network=network, keys=keys, seccomp=seccomp
        )
        ways[name] = (make, keyring)
    return ways


def _in_bubblewrap(
    bwrap: Path,
    command: list[str],
    confinement: Confinement,
    *,
    network: bool,
    keys: bool,
    seccomp: bool,
) -> Callable[[], Launch]:
    return lambda: _bubblewrap(bwrap, network=network, keys=keys, seccomp=seccomp).launch(
        command, confinement
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41)
    rounds = parser.parse_args().rounds
    _, why = available()
    python = Path(sys.executable).resolve()
    with tempfile.TemporaryDirectory(prefix="sv-bench-isolation-") as scratch:
        root = Path(scratch)
        dirs = {name: root / name for name in ("runtime", "home", "tmp", "work", "results")}
        for path in dirs.values():
            path.mkdir()
        confinement = Confinement(
            cwd=dirs["work"],
            read_only=(dirs["runtime"], *interpreter_roots(python)),
            writable=(dirs["results"],),
            private=(dirs["home"], dirs["tmp"], dirs["work"]),
        )
        ways = _ways([str(python), "-I", "-c", _CODE], confinement)
        times: dict[str, list[float]] = {name: [] for name in ways}
        for make, keyring in ways.values():  # warm-up: page cache, bytecode
            _time(make, keyring)
        for _ in range(rounds):
            for name, (make, keyring) in ways.items():
                times[name].append(_time(make, keyring))
    base = statistics.median(times["unconfined"])
    print(f"{rounds} interleaved rounds, Python {sys.version.split()[0]}, `python -I -c '{_CODE}'`")
    print("| how | median | min | added per process |")
    print("| --- | --- | --- | --- |")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(
            f"| {name} | {median * 1000:.1f} ms | {min(samples) * 1000:.1f} ms "
            f"| {(median - base) * 1000:+.1f} ms |"
        )
    if "namespaces, as before" not in ways:
        print(f"(no OS sandbox here: {why})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
