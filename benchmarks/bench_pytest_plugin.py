"""What the pytest plugin costs a pytest run that uses none of its fixtures.

pytest loads every installed ``pytest11`` plugin in every session, so sandboxverify's plugin is
imported by every test run of every project that has sandboxverify installed. This times
``pytest --collect-only`` on a small generated test directory, with the plugin and with
``-p no:sandboxverify``, the two interleaved (one of each per round, alternating which goes
first) so that both see the same machine load, and prints the median, min and max of each and the
difference of the medians. The target: a difference of at most 10 ms. It also prints the CPU time
(user + system) of each run, which a busy machine disturbs far less than the wall time.

Usage: ``python benchmarks/bench_pytest_plugin.py [--rounds 20] [--files 10]``
(exit 1 when the difference of the medians is over ``--budget-ms``, default 10).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

TEST_FILE = """
import pytest


@pytest.fixture
def number():
    return 41


def test_add(number):
    assert number + 1 == 42


@pytest.mark.parametrize("word", ["a", "b", "c"])
def test_words(word):
    assert word.isalpha()
"""


def make_tests(root: Path, files: int) -> None:
    for index in range(files):
        (root / f"test_sample_{index}.py").write_text(TEST_FILE, encoding="utf-8")


def time_once(command: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    completed = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{completed.stdout}{completed.stderr}")
    return elapsed, _children_cpu() - cpu_before


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _ms(values: Sequence[float]) -> str:
    return "".join(
        f"{value * 1000:8.1f}ms" for value in (statistics.median(values), min(values), max(values))
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="timed runs of each (default 20)")
    parser.add_argument("--files", type=int, default=10, help="test files to collect (10)")
    parser.add_argument("--budget-ms", type=float, default=10.0, help="allowed difference (10)")
    args = parser.parse_args(argv)

    base = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    contenders = {
        "with the plugin": base,
        "-p no:sandboxverify": [*base, "-p", "no:sandboxverify"],
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
    times: dict[str, list[float]] = {name: [] for name in contenders}
    cpu: dict[str, list[float]] = {name: [] for name in contenders}
    with tempfile.TemporaryDirectory(prefix="bench-pytest-plugin-") as temp:
        root = Path(temp)
        make_tests(root, args.files)
        (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # no rootdir search
        for command in contenders.values():  # warm the file system cache and bytecode
            time_once(command, root, env)
        for round_ in range(args.rounds):
            order = list(contenders.items())
            if round_ % 2:
                order.reverse()
            for name, command in order:
                wall, used = time_once(command, root, env)
                times[name].append(wall)
                cpu[name].append(used)

    print(f"pytest --collect-only on {args.files} test files, {args.rounds} rounds, interleaved")
    columns = f"{'median':>10}{'min':>10}{'max':>10}"
    print(f"{'':22} wall{columns}    cpu{columns}")
    for name in contenders:
        print(f"{name:22}     {_ms(times[name])}       {_ms(cpu[name])}")
    with_plugin, without = (statistics.median(values) for values in times.values())
    cpu_with, cpu_without = (statistics.median(values) for values in cpu.values())
    difference = (with_plugin - without) * 1000
    print(
        f"difference of the medians: wall {difference:+.1f} ms, cpu "
        f"{(cpu_with - cpu_without) * 1000:+.1f} ms (budget {args.budget_ms:g} ms, wall)"
    )
    return 0 if difference <= args.budget_ms else 1


if __name__ == "__main__":
    sys.exit(main())
