"""What confinement adds to each process that runs package code: the median wall time of one
short interpreter start, as sandboxverify starts plugin code (``python -I -c``, the sandbox's
environment, the interpreter's prefixes and a runtime copy read-only, a private HOME, TMPDIR and
working directory, a result directory writable), started directly, under process isolation (the
reaper) and in the OS sandbox (bubblewrap), in interleaved rounds.

    python benchmarks/bench_isolation.py [--rounds 41]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sandboxverify.sandbox._bwrap import Bubblewrap, available
from sandboxverify.sandbox._confinement import Confinement, ProcessIsolation
from sandboxverify.sandbox._isolation import interpreter_roots

#: what a probe does first: start, import what the runtime imports
_CODE = "import json, importlib.metadata, os, sys"


def _time(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41)
    rounds = parser.parse_args().rounds
    bwrap, why = available()
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
        command = [str(python), "-I", "-c", _CODE]
        ways = {
            "unconfined": command,
            "process (reaper)": ProcessIsolation().wrap(command, confinement),
        }
        if bwrap is not None:
            ways["namespaces (bubblewrap)"] = Bubblewrap(bwrap).wrap(command, confinement)
        times: dict[str, list[float]] = {name: [] for name in ways}
        for argv in ways.values():  # warm-up: page cache, bytecode
            _time(argv)
        for _ in range(rounds):
            for name, argv in ways.items():
                times[name].append(_time(argv))
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
    if bwrap is None:
        print(f"(no OS sandbox here: {why})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
