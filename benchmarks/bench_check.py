"""Wall-clock benchmark: ``sandboxverify check`` against doing the same job by hand, tox and nox.

What is measured: the wall time of *one whole verification* of a fixture project, i.e. build it,
create a throwaway environment, install the built package with its declared dependencies, check
the environment's consistency and load every plugin of the distribution in the group
``sandboxverify.plugins``. Contenders:

``sandboxverify-uv`` / ``sandboxverify-pip``
    ``python -m sandboxverify check FIXTURE --installer uv|pip --expect-tools ...``, a first
    check: each repetition has an empty artifact cache (``SANDBOXVERIFY_CACHE_DIR``) of its own.
    What sandboxverify keeps beside the artifacts is carried over from earlier repetitions, as
    uv's cache is (``--cold-hints``: not): what it learnt about the build backend (which modules
    its hooks import), the build environments' bytecode and its ``pyproject.toml`` validator,
    each compiled once.
``sandboxverify-uv-recheck``
    The same check again after an untimed first one: the project is unchanged, so its artifacts
    are reused from the cache (a new sandbox is still made, installed and probed).
``sandboxverify-uv-all``
    The first check with ``--python all``: a sandbox per Python that requires-python allows.
``hand-uv``
    The same steps typed by hand with uv: copy, ``uv build`` (sdist, then the wheel from it),
    ``uv venv``, ``uv pip install``, ``uv pip check``, one ``python -I plugin_loader.py``.
``hand-pip``
    The same with ``python -m build``, ``virtualenv``, ``pip install`` and ``pip check``.
``tox-recreate``
    A tox 4 env with ``package = sdist-wheel`` (build the sdist, then the wheel from it, install
    that wheel into the env) that runs ``pip check`` and the loader; ``tox -e verify -r``.
``nox-fresh`` / ``nox-uv``
    A nox session doing ``session.install(".")`` (no sdist step: pip/uv builds the wheel straight
    from the directory), ``pip check`` and the loader, run with ``--no-reuse-existing-virtualenvs``
    on nox's default backend (virtualenv) and on ``--default-venv-backend uv``.

Why the comparison is fair:

* same fixture, same interpreter (``sys.executable``), same machine, same environment variables
  (inherited, minus ``VIRTUAL_ENV``/``PYTHONPATH``-style leaks and ``PYTHONDONTWRITEBYTECODE``,
  which sandboxverify never passes on; ``TMPDIR`` points into the repetition's own directory),
  in the same single run;
* every repetition of every contender starts in a fresh temporary directory (new copy, new
  environment, new tox/nox work dir), removed afterwards;
* one untimed warm-up round of every contender runs first, so the pip, uv, tox and nox caches
  (build requirements such as hatchling, and dependencies from the index) are warm for all;
* the timed rounds are interleaved round-robin, and the starting contender rotates each round,
  so machine noise (other processes, thermal state, disk cache) hits every contender alike;
* a repetition counts only if every step exited 0 and the plugins registered the expected tools:
  a contender with a failed repetition is reported as failed, never with a time.

Usage::

    python benchmarks/bench_check.py [--repeat 5] [--fixture fixtures/good-hatch]
        [--expect-tools greet,add] [--only hand-uv,sandboxverify-uv] [--verbose]

Ratios are to ``hand-uv``. The targets: ``sandboxverify-uv`` within 1.0x of ``hand-uv``, a
re-check within 0.3x. ``--readme README.md`` also writes the Markdown table into the README
(between its ``bench_check`` markers). Raw timings go to
``benchmarks/results/<timestamp>.json``. Stdlib only (Python 3.9+); the contenders need
sandboxverify, uv, build, virtualenv, tox and nox installed next to the interpreter that runs
this script.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, TextIO

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
LOADER = BENCH_DIR / "plugin_loader.py"
RESULTS_DIR = BENCH_DIR / "results"
GROUP = "sandboxverify.plugins"
#: What the ratios are relative to: the same steps typed by hand with uv.
BASELINE = "hand-uv"
CHECK = "sandboxverify-uv"
RECHECK = "sandboxverify-uv-recheck"
#: suffix of the contenders run by the ``--compare-with`` installation
OTHER = "@other"
PYTHON_ALL = "sandboxverify-uv-all"
#: Targets: a check within this factor of hand-uv; a re-check within this one.
CHECK_TARGET = 1.0
RECHECK_TARGET = 0.3
#: what sandboxverify keeps beside the artifacts in its cache directory, none of it about the
#: project checked: its build-backend hints, the build environments' bytecode, its compiled
#: ``pyproject.toml`` validator and the copy of its runtime the sandboxes read
CARRIED_DIRS = ("preload", "bytecode", "validate-pyproject", "runtime")
README_START = "<!-- bench_check: start -->"
README_END = "<!-- bench_check: end -->"
#: Not passed to any contender. The first ones would make contenders see the benchmark's own
#: Python setup. PYTHONDONTWRITEBYTECODE: sandboxverify's allowlisted build and plugin
#: environments never pass it on, so keeping it would spare only the other contenders the cost
#: of writing .pyc files into their fresh build environments (about 0.1 s per uv build here);
#: dropping it is also what a default shell looks like.
_DROPPED_ENV = (
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "CONDA_PREFIX",
    "PYTHONDONTWRITEBYTECODE",
)
_VERSIONS_OF = ("sandboxverify", "uv", "build", "virtualenv", "pip", "tox", "nox")
_LOG_TAIL_LINES = 60


class StepFailed(Exception):
    """A step of a repetition failed: non-zero exit, timeout or a missing artifact."""


# --------------------------------------------------------------------------- settings and paths


@dataclass(frozen=True)
class Settings:
    """What every contender verifies, and with which tools."""

    fixture: Path
    dist_name: str
    expect_tools: tuple[str, ...]
    python: str
    uv: str | None
    timeout: float
    #: ``--compare-with``: an interpreter with another sandboxverify installed
    other_python: str | None = None
    #: sandboxverify's build-backend hints (which modules a backend's hooks import) and its
    #: compiled ``pyproject.toml`` validator, with the bytecode (``CARRIED_DIRS``), carried
    #: from repetition to repetition like uv's cache; ``None``: every check starts without
    hints: Path | None = None

    @property
    def tools_arg(self) -> str:
        return ",".join(self.expect_tools)

    def require_uv(self) -> str:
        if self.uv is None:
            raise StepFailed("uv is not installed next to this interpreter nor on PATH")
        return self.uv


@dataclass(frozen=True)
class Workdir:
    """One repetition's fresh temporary directory and the paths inside it."""

    root: Path

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def dist(self) -> Path:
        return self.root / "dist"

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def venv_python(self) -> Path:
        scripts = "Scripts" if sys.platform == "win32" else "bin"
        return self.venv / scripts / ("python.exe" if sys.platform == "win32" else "python")

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def loader(self) -> Path:
        return self.root / "plugin_loader.py"

    @property
    def log(self) -> Path:
        return self.root / "output.log"

    def loader_argv(self, python: str | Path, settings: Settings) -> list[str]:
        return [str(python), "-I", str(self.loader), settings.dist_name, GROUP, settings.tools_arg]


# --------------------------------------------------------------------------- running steps


class Runner:
    """Runs one repetition's steps, sending all output to the repetition's log file."""

    def __init__(
        self, log: TextIO, cwd: Path, env: dict[str, str], deadline: float, echo: bool
    ) -> None:
        self.log = log
        self.cwd = cwd
        self.env = env
        self.deadline = deadline
        self.echo = echo
        self.commands: list[str] = []

    def note(self, text: str) -> None:
        self.commands.append(text)
        self.log.write(f"\n### {text}\n")
        self.log.flush()
        if self.echo:
            print(f"    {text}", flush=True)

    def call(self, *argv: str | Path, cwd: Path | None = None) -> None:
        args = [str(arg) for arg in argv]
        self.note("$ " + shlex.join(args))
        process = subprocess.Popen(
            args,
            cwd=cwd or self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # so a timeout can kill the whole process group
        )
        code, timed_out = wait_or_kill(process, self.deadline - time.monotonic())
        if timed_out:
            raise StepFailed(f"timed out: {shlex.join(args)}")
        if code != 0:
            raise StepFailed(f"exited with code {code}: {shlex.join(args)}")

    def copy_project(self, source: Path, destination: Path) -> None:
        self.note(f"# copy {source} -> {destination}")
        copy_fixture(source, destination)


def wait_or_kill(process: subprocess.Popen[bytes], seconds: float) -> tuple[int, bool]:
    """Wait for ``process``; kill its process group if it outlives ``seconds``.

    A blocking ``wait()`` plus a timer thread, not ``wait(timeout=...)``: on POSIX the latter
    polls with sleeps of up to 50 ms, which would add up to 50 ms to every step of the
    multi-step contenders and blur the comparison.
    """
    expired = threading.Event()

    def kill() -> None:
        expired.set()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    timer = threading.Timer(max(seconds, 0.1), kill)
    timer.daemon = True
    timer.start()
    try:
        code = process.wait()
    finally:
        timer.cancel()
    return code, expired.is_set()


def copy_fixture(source: Path, destination: Path) -> None:
    shutil.copytree(
        source,
        destination,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".tox", ".nox", "dist", "build"),
    )


def only_wheel(directory: Path) -> Path:
    wheels = sorted(directory.glob("*.whl"))
    if len(wheels) != 1:
        raise StepFailed(f"expected exactly one wheel in {directory}, found {len(wheels)}")
    return wheels[0]


# --------------------------------------------------------------------------- contenders


Prepare = Callable[[Workdir, Settings], None]
Run = Callable[[Runner, Workdir, Settings], None]


def _nothing_to_prepare(workdir: Workdir, settings: Settings) -> None:
    """Most contenders copy the fixture themselves, inside the timed part."""


@dataclass(frozen=True)
class Contender:
    """A way of verifying the fixture: untimed preparation, then the timed run."""

    name: str
    summary: str
    run: Run
    prepare: Prepare = _nothing_to_prepare


def check_argv(
    settings: Settings, installer: str, *extra: str, python: str | None = None
) -> list[str | Path]:
    return [
        python or settings.python,
        "-m",
        "sandboxverify",
        "check",
        settings.fixture,
        "--installer",
        installer,
        "--expect-tools",
        settings.tools_arg,
        *extra,
    ]


def sandboxverify_run(installer: str, *extra: str, other: bool = False) -> Run:
    """A first check: the repetition's artifact cache (``SANDBOXVERIFY_CACHE_DIR``) is empty.
    ``other``: the sandboxverify installed next to ``--compare-with``'s interpreter."""

    def run(runner: Runner, workdir: Workdir, settings: Settings) -> None:
        python = settings.other_python if other else None
        runner.call(*check_argv(settings, installer, *extra, python=python))

    return run


def prepare_recheck(other: bool = False) -> Prepare:
    def prepare(workdir: Workdir, settings: Settings) -> None:
        recheck_first(workdir, settings, settings.other_python if other else None)

    return prepare


def recheck_first(workdir: Workdir, settings: Settings, python: str | None) -> None:
    """An untimed first check of the unchanged fixture fills the repetition's cache."""
    argv = [str(arg) for arg in check_argv(settings, "uv", "-q", python=python)]
    with workdir.log.open("a", encoding="utf-8") as log:
        log.write(f"\n### untimed first check: {shlex.join(argv)}\n")
        log.flush()
        completed = subprocess.run(
            argv,
            env=child_env(workdir),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=settings.timeout,
            check=False,
        )
    if completed.returncode != 0:
        raise StepFailed(f"the untimed first check exited with {completed.returncode}")


def hand_uv(runner: Runner, workdir: Workdir, settings: Settings) -> None:
    uv = settings.require_uv()
    runner.copy_project(settings.fixture, workdir.project)
    runner.call(
        uv,
        "build",
        "--out-dir",
        workdir.dist,
        "--python",
        settings.python,
        "--no-python-downloads",
        workdir.project,
    )
    runner.call(uv, "venv", "--python", settings.python, workdir.venv)
    wheel = only_wheel(workdir.dist)
    runner.call(uv, "pip", "install", "--python", workdir.venv_python, wheel)
    runner.call(uv, "pip", "check", "--python", workdir.venv_python)
    runner.call(*workdir.loader_argv(workdir.venv_python, settings))


def hand_pip(runner: Runner, workdir: Workdir, settings: Settings) -> None:
    # The same pip/virtualenv flags sandboxverify passes (no version check, no periodic update).
    quiet_pip = ("--no-input", "--disable-pip-version-check")
    runner.copy_project(settings.fixture, workdir.project)
    runner.call(settings.python, "-m", "build", "--outdir", workdir.dist, workdir.project)
    runner.call(
        settings.python,
        "-m",
        "virtualenv",
        "--no-periodic-update",
        "--no-setuptools",
        "-p",
        settings.python,
        workdir.venv,
    )
    wheel = only_wheel(workdir.dist)
    runner.call(workdir.venv_python, "-m", "pip", "install", *quiet_pip, wheel)
    runner.call(workdir.venv_python, "-m", "pip", "check", *quiet_pip[1:])
    runner.call(*workdir.loader_argv(workdir.venv_python, settings))


TOX_INI = """\
# Written by benchmarks/bench_check.py. package = sdist-wheel: build the sdist, build the wheel
# from that sdist (in the .pkg env), install the wheel and its dependencies into a fresh env.
[tox]
env_list = verify

[testenv:verify]
package = sdist-wheel
commands =
    python -m pip check
    {loader}
"""


def prepare_tox(workdir: Workdir, settings: Settings) -> None:
    copy_fixture(settings.fixture, workdir.project)
    loader = shlex.join(workdir.loader_argv("python", settings))
    (workdir.project / "tox.ini").write_text(TOX_INI.format(loader=loader), encoding="utf-8")


def tox_recreate(runner: Runner, workdir: Workdir, settings: Settings) -> None:
    runner.call(
        settings.python,
        "-m",
        "tox",
        "-c",
        workdir.project / "tox.ini",
        "-e",
        "verify",
        "-r",
        "--workdir",
        workdir.root / ".tox",
    )


NOXFILE = """\
# Written by benchmarks/bench_check.py. session.install(".") builds a wheel straight from the
# directory (no sdist step) and installs it with its dependencies into the fresh session env.
import nox


@nox.session(name="verify")
def verify(session: nox.Session) -> None:
    session.install(".")
    session.run(*{check!r}, external=True)
    session.run(*{loader!r})
"""


def prepare_nox(backend: str) -> Prepare:
    # uv-made environments have no pip; nox points VIRTUAL_ENV at the session env for uv.
    check = ("uv", "pip", "check") if backend == "uv" else ("python", "-m", "pip", "check")

    def prepare(workdir: Workdir, settings: Settings) -> None:
        copy_fixture(settings.fixture, workdir.project)
        loader = tuple(workdir.loader_argv("python", settings))
        text = NOXFILE.format(check=check, loader=loader)
        (workdir.project / "noxfile.py").write_text(text, encoding="utf-8")

    return prepare


def nox_run(backend: str) -> Run:
    def run(runner: Runner, workdir: Workdir, settings: Settings) -> None:
        runner.call(
            settings.python,
            "-m",
            "nox",
            "-f",
            workdir.project / "noxfile.py",
            "-s",
            "verify",
            "--no-reuse-existing-virtualenvs",
            "--envdir",
            workdir.root / ".nox",
            "--default-venv-backend",
            backend,
        )

    return run


CONTENDERS = (
    Contender(CHECK, "sandboxverify check --installer uv", sandboxverify_run("uv")),
    Contender("sandboxverify-pip", "sandboxverify check --installer pip", sandboxverify_run("pip")),
    Contender(
        RECHECK,
        "sandboxverify check --installer uv again, on the unchanged project",
        sandboxverify_run("uv"),
        prepare_recheck(),
    ),
    Contender(
        PYTHON_ALL,
        "sandboxverify check --installer uv --python all",
        sandboxverify_run("uv", "--python", "all"),
    ),
    Contender("hand-uv", "uv build/venv/pip install/pip check + loader", hand_uv),
    Contender("hand-pip", "build + virtualenv + pip install/check + loader", hand_pip),
    Contender("tox-recreate", "tox -r, package = sdist-wheel", tox_recreate, prepare_tox),
    Contender(
        "nox-fresh", "nox, virtualenv backend", nox_run("virtualenv"), prepare_nox("virtualenv")
    ),
    Contender("nox-uv", "nox, uv backend", nox_run("uv"), prepare_nox("uv")),
)


# --------------------------------------------------------------------------- one repetition


@dataclass(frozen=True)
class Attempt:
    """One repetition of one contender; round 0 is the untimed warm-up."""

    contender: str
    round: int
    seconds: float
    ok: bool
    error: str | None = None
    commands: tuple[str, ...] = ()


def child_env(workdir: Workdir) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in _DROPPED_ENV}
    tools_dir = str(Path(sys.executable).parent)  # uv, tox, nox installed next to the interpreter
    env["PATH"] = os.pathsep.join(p for p in (tools_dir, env.get("PATH", "")) if p)
    for name in ("TMPDIR", "TEMP", "TMP"):
        env[name] = str(workdir.tmp)
    # sandboxverify's artifact cache: empty for each repetition (a first check), unless the
    # contender's untimed preparation filled it (the re-check)
    env["SANDBOXVERIFY_CACHE_DIR"] = str(workdir.root / "cache")
    return env


def run_once(contender: Contender, settings: Settings, round_no: int, echo: bool) -> Attempt:
    root = Path(tempfile.mkdtemp(prefix=f"bench-{contender.name}-"))
    try:
        workdir = Workdir(root)
        workdir.tmp.mkdir()
        shutil.copy2(LOADER, workdir.loader)
        carry_hints(settings.hints, workdir.root / "cache")
        error: str | None = None
        try:
            contender.prepare(workdir, settings)
        except (StepFailed, subprocess.TimeoutExpired) as exc:
            error = f"untimed preparation: {exc}"
        with workdir.log.open("a", encoding="utf-8") as log:
            started = time.monotonic()
            runner = Runner(log, root, child_env(workdir), started + settings.timeout, echo)
            try:
                if error is None:
                    contender.run(runner, workdir, settings)
            except StepFailed as exc:
                error = str(exc)
            seconds = time.monotonic() - started
        if error is not None:
            show_log_tail(contender.name, round_no, workdir.log)
        if settings.hints is not None:
            carry_hints(workdir.root / "cache", settings.hints)
        return Attempt(
            contender.name, round_no, seconds, error is None, error, tuple(runner.commands)
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def carry_hints(source: Path | None, destination: Path) -> None:
    """Copy ``CARRIED_DIRS`` of one cache directory into another (the artifacts stay behind)."""
    if source is None:
        return
    for name in CARRIED_DIRS:
        if (source / name).is_dir():
            shutil.copytree(source / name, destination / name, dirs_exist_ok=True)


def show_log_tail(name: str, round_no: int, log: Path) -> None:
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    print(
        f"\n--- {name} failed in {round_label(round_no)}; last {_LOG_TAIL_LINES} lines of {log}:",
        file=sys.stderr,
    )
    for line in lines[-_LOG_TAIL_LINES:]:
        print(f"    {line}", file=sys.stderr)
    print("---", file=sys.stderr, flush=True)


def round_label(round_no: int) -> str:
    return "the warm-up round" if round_no == 0 else f"round {round_no}"


# --------------------------------------------------------------------------- rounds


def rotated(contenders: Sequence[Contender], shift: int) -> list[Contender]:
    shift %= len(contenders)
    return [*contenders[shift:], *contenders[:shift]]


def run_rounds(
    contenders: Sequence[Contender], settings: Settings, repeat: int, verbose: bool
) -> list[Attempt]:
    """The warm-up round, then ``repeat`` timed rounds; a contender that fails drops out."""
    attempts: list[Attempt] = []
    failed: set[str] = set()
    for round_no in range(repeat + 1):
        if len(failed) == len(contenders):
            print("every contender failed: no timed rounds left to run", flush=True)
            break
        print(f"{round_label(round_no)}:", end="\n" if verbose else " ", flush=True)
        for contender in rotated(contenders, round_no):
            if contender.name in failed:
                continue
            echo = verbose and round_no == 0
            if echo:
                print(f"  {contender.name}:", flush=True)
            attempt = run_once(contender, settings, round_no, echo)
            attempts.append(attempt)
            if not attempt.ok:
                failed.add(contender.name)
            status = f"{attempt.seconds:.2f}s" if attempt.ok else "FAILED"
            print(f"{contender.name} {status}", end="\n" if verbose else "  ", flush=True)
        if not verbose:
            print(flush=True)
    return attempts


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Summary:
    """One contender's outcome over the timed rounds."""

    name: str
    summary: str
    seconds: tuple[float, ...]
    warmup_seconds: float | None
    failure: str | None
    commands: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.failure is None and bool(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    def ratio_to(self, baseline: Summary | None) -> float | None:
        if baseline is None or not (self.ok and baseline.ok):
            return None
        return self.median / baseline.median


def summarize(contenders: Sequence[Contender], attempts: Sequence[Attempt]) -> list[Summary]:
    summaries = []
    for contender in contenders:
        mine = [a for a in attempts if a.contender == contender.name]
        failure = next((a for a in mine if not a.ok), None)
        warmup = next((a for a in mine if a.round == 0), None)
        summaries.append(
            Summary(
                name=contender.name,
                summary=contender.summary,
                seconds=tuple(a.seconds for a in mine if a.ok and a.round > 0),
                warmup_seconds=warmup.seconds if warmup and warmup.ok else None,
                failure=(f"{round_label(failure.round)}: {failure.error}" if failure else None),
                commands=mine[0].commands if mine else (),
            )
        )
    return summaries


def by_name(summaries: Sequence[Summary], name: str) -> Summary | None:
    return next((s for s in summaries if s.name == name), None)


def format_table(summaries: Sequence[Summary]) -> str:
    baseline = by_name(summaries, BASELINE)
    width = max(len(s.name) for s in summaries)
    header = f"{'contender':<{width}}  runs  median     min     max  median / {BASELINE}"
    lines = [header, "-" * len(header)]
    for s in summaries:
        if not s.ok:
            lines.append(f"{s.name:<{width}}  FAILED ({s.failure})")
            continue
        ratio = s.ratio_to(baseline)
        ratio_text = f"{ratio:.2f}x" if ratio is not None else "n/a"
        lines.append(
            f"{s.name:<{width}}  {len(s.seconds):>4}  {s.median:6.2f}s "
            f"{min(s.seconds):6.2f}s {max(s.seconds):6.2f}s  {ratio_text:>8}"
        )
    return "\n".join(lines)


def format_targets(summaries: Sequence[Summary]) -> list[str]:
    """The targets: a check within 1.0x of hand-uv, a re-check within 0.3x; and, for
    reference, tox against the check and all Pythons against one."""
    check, hand = by_name(summaries, CHECK), by_name(summaries, BASELINE)
    recheck, tox = by_name(summaries, RECHECK), by_name(summaries, "tox-recreate")
    every = by_name(summaries, PYTHON_ALL)
    lines = []
    if check and hand and check.ok and hand.ok:
        ratio = check.median / hand.median
        verdict = "met" if ratio <= CHECK_TARGET else "MISSED"
        lines.append(f"{CHECK} / hand-uv = {ratio:.2f}x (target <= {CHECK_TARGET:.2f}x): {verdict}")
    if recheck and hand and recheck.ok and hand.ok:
        ratio = recheck.median / hand.median
        verdict = "met" if ratio <= RECHECK_TARGET else "MISSED"
        lines.append(
            f"{RECHECK} / hand-uv = {ratio:.2f}x, {recheck.median:.2f} s "
            f"(target <= {RECHECK_TARGET:.2f}x): {verdict}"
        )
    if check and tox and check.ok and tox.ok:
        lines.append(f"tox-recreate / {CHECK} = {tox.median / check.median:.2f}x")
    if check and every and check.ok and every.ok:
        lines.append(f"{PYTHON_ALL} / {CHECK} = {every.median / check.median:.2f}x")
    for name in (CHECK, RECHECK):
        mine, theirs = by_name(summaries, name), by_name(summaries, name + OTHER)
        if mine and theirs and mine.ok and theirs.ok:
            lines.append(f"{name}{OTHER} / {name} = {theirs.median / mine.median:.2f}x")
    return lines


#: How each contender reads in the README's table.
MARKDOWN_NAMES = {
    CHECK: "`sandboxverify check` (uv)",
    RECHECK: "`sandboxverify check` (uv) again, project unchanged: artifacts reused",
    PYTHON_ALL: "`sandboxverify check --python all` (uv; {pythons})",
    "sandboxverify-pip": "`sandboxverify check --installer pip`",
    "hand-uv": "by hand: `uv build` (sdist, wheel from it) + `uv venv` + `uv pip install` + "
    "`uv pip check` + loading the entry points",
    "hand-pip": "by hand: `python -m build` + `virtualenv` + `pip install` + `pip check` + loading",
    "tox-recreate": "`tox -r` with `package = sdist-wheel`",
    "nox-fresh": "`nox` with a fresh virtualenv (no sdist step)",
    "nox-uv": "`nox --default-venv-backend uv` (no sdist step)",
}


#: how the contenders that are not sandboxverify run the package's code
UNCONFINED = "none: the package's code runs as you"


def sandboxverify_isolation(settings: Settings) -> str:
    """What isolation sandboxverify's checks used on this machine, as its report says it (one
    untimed check, after the rounds)."""
    argv = [str(arg) for arg in check_argv(settings, "uv", "-q", "--no-cache", "--json", "-")]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=settings.timeout, check=False
        )
        report = json.loads(done.stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    if report.get("isolation") != "namespaces":
        return f"{report.get('isolation')}: processes of their own, no OS sandbox"
    network = "no network" if report.get("network") == "none" else "the host's network"
    seccomp = (
        f", {report['syscall_filter']} system call filter" if report.get("syscall_filter") else ""
    )
    return f"OS sandbox (bubblewrap namespaces, {network}{seccomp})"


def format_markdown(
    summaries: Sequence[Summary], repeat: int, pythons: str, isolation: str = "not measured"
) -> str:
    """The README's table: medians, the spread, each contender against hand-uv, and the
    isolation the package's code ran in."""
    baseline = by_name(summaries, BASELINE)
    lines = [
        "| contender | median | min to max | vs hand-rolled uv | package code isolated by |",
        "| --- | --- | --- | --- | --- |",
    ]
    for s in summaries:
        other = s.name.endswith(OTHER)
        base = s.name[: -len(OTHER)] if other else s.name
        name = MARKDOWN_NAMES.get(base, f"`{base}`").format(pythons=pythons)
        if other:
            name += ", the `--compare-with` installation"
        confined = isolation if base.startswith("sandboxverify") else UNCONFINED
        if not s.ok:
            lines.append(f"| {name} | failed | | | {confined} |")
            continue
        ratio = s.ratio_to(baseline)
        lines.append(
            f"| {name} | {s.median:.2f} s | {min(s.seconds):.2f} to {max(s.seconds):.2f} s | "
            + (f"{ratio:.2f}x" if ratio is not None else "n/a")
            + f" | {confined} |"
        )
    cores = os.cpu_count() or 0
    lines += [
        "",
        f"Medians of {repeat} interleaved rounds after a warm-up round, one run, "
        f"Python {platform.python_version()}, {cores} cores, `fixtures/good-hatch`.",
    ]
    lines += [f"{line}." for line in format_targets(summaries)]
    return "\n".join(lines)


def write_readme(readme: Path, table: str) -> None:
    """Replace what stands between the README's markers with ``table``."""
    text = readme.read_text(encoding="utf-8")
    before, start, rest = text.partition(README_START)
    _, end, after = rest.partition(README_END)
    if not start or not end:
        raise UsageError(f"{readme} has no {README_START} ... {README_END} block")
    readme.write_text(f"{before}{start}\n{table}\n{end}{after}", encoding="utf-8")


def python_all_versions(fixture: Path) -> str:
    """The interpreters ``--python all`` picks for the fixture, as sandboxverify picks them."""
    match = re.search(
        r"""^requires-python\s*=\s*["']([^"']+)["']""",
        (fixture / "pyproject.toml").read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    try:
        # the benchmark itself is stdlib only; this label is worth the one exception
        from sandboxverify.sandbox._interpreters import select_interpreters  # noqa: PLC0415

        chosen = select_interpreters(["all"], match.group(1) if match else None)
    except Exception as exc:  # only a label: never fail the benchmark over it
        return f"interpreters unknown: {exc}"
    return f"{len(chosen)} interpreters: " + ", ".join(i.version for i in chosen)


def tool_versions() -> dict[str, str]:
    versions = {}
    for name in _VERSIONS_OF:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def write_results(
    summaries: Sequence[Summary],
    attempts: Sequence[Attempt],
    settings: Settings,
    repeat: int,
    started: datetime,
) -> Path:
    baseline = by_name(summaries, BASELINE)
    document: dict[str, Any] = {
        "started_at": started.isoformat(),
        "finished_at": datetime.now(timezone.utc).isoformat(),
        "fixture": str(settings.fixture),
        "distribution": settings.dist_name,
        "expect_tools": list(settings.expect_tools),
        "repeat": repeat,
        "method": "1 untimed warm-up round, then round-robin rounds rotated by one each round",
        "build_backend_hints": "cold" if settings.hints is None else "carried over",
        "machine": {
            "platform": platform.platform(),
            "python": sys.version,
            "executable": settings.python,
            "cpu_count": os.cpu_count(),
        },
        "versions": tool_versions(),
        "contenders": [
            {
                "name": s.name,
                "summary": s.summary,
                "ok": s.ok,
                "failure": s.failure,
                "warmup_seconds": s.warmup_seconds,
                "seconds": list(s.seconds),
                "median": s.median if s.ok else None,
                "min": min(s.seconds) if s.ok else None,
                "max": max(s.seconds) if s.ok else None,
                "median_ratio_to_baseline": s.ratio_to(baseline),
                "commands": list(s.commands),
            }
            for s in summaries
        ],
        "attempts": [
            {"contender": a.contender, "round": a.round, "seconds": a.seconds, "ok": a.ok}
            | ({"error": a.error} if a.error else {})
            for a in attempts
        ],
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    path = RESULTS_DIR / f"{stamp}.json"
    suffix = 1
    while path.exists():
        path = RESULTS_DIR / f"{stamp}-{suffix}.json"
        suffix += 1
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- command line


class UsageError(Exception):
    """Bad command-line input: exit status 2."""


def project_name(fixture: Path) -> str:
    """``[project] name`` from the fixture's pyproject.toml (a plain-text read: stdlib only)."""
    pyproject = fixture / "pyproject.toml"
    if not pyproject.is_file():
        raise UsageError(f"{fixture} has no pyproject.toml; pass --dist-name")
    text = pyproject.read_text(encoding="utf-8")
    section = re.search(r"^\[project\][ \t]*$(.*?)(?=^\[|\Z)", text, re.MULTILINE | re.DOTALL)
    name = section and re.search(
        r"""^name\s*=\s*["']([^"']+)["']""", section.group(1), re.MULTILINE
    )
    if not name:
        raise UsageError(f"no [project] name in {pyproject}; pass --dist-name")
    return name.group(1)


#: ``--compare-with PYTHON``: the same checks by the sandboxverify installed there (another
#: version, say the one before a change), interleaved with everything else.
OTHER_CONTENDERS = (
    Contender(
        f"{CHECK}{OTHER}",
        "sandboxverify check --installer uv, the other installation",
        sandboxverify_run("uv", other=True),
    ),
    Contender(
        f"{RECHECK}{OTHER}",
        "the re-check, the other installation",
        sandboxverify_run("uv", other=True),
        prepare_recheck(other=True),
    ),
)


def select(only: str | None, compare: bool = False) -> list[Contender]:
    available = list(CONTENDERS) + (list(OTHER_CONTENDERS) if compare else [])
    if not only:
        return available
    wanted = [name.strip() for name in only.split(",") if name.strip()]
    known = {c.name for c in available}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise UsageError(
            f"unknown contender(s) {', '.join(unknown)}; choose from {', '.join(sorted(known))}"
        )
    return [c for c in available if c.name in wanted]


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Time sandboxverify check against hand-rolled uv/pip, tox and nox.",
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument(
        "--fixture",
        type=Path,
        default=REPO / "fixtures" / "good-hatch",
        help="project to verify (default: fixtures/good-hatch)",
    )
    parser.add_argument(
        "--expect-tools", default="greet,add", help="comma-separated tools (default greet,add)"
    )
    parser.add_argument(
        "--dist-name", help="distribution name (default: [project] name of the fixture)"
    )
    parser.add_argument(
        "--only", help="comma-separated contenders: " + ", ".join(c.name for c in CONTENDERS)
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=900.0,
        help="seconds one repetition may take (default 900)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="print the commands each contender runs"
    )
    parser.add_argument(
        "--cold-hints",
        action="store_true",
        help="start every sandboxverify check without what earlier checks left beside the "
        "artifacts: build-backend hints, build environments' bytecode, the compiled "
        "pyproject.toml validator (by default they are carried over, like uv's cache)",
    )
    parser.add_argument(
        "--compare-with",
        metavar="PYTHON",
        help="also time the checks of the sandboxverify installed for this interpreter (say, the "
        "version before a change), interleaved with the others",
    )
    parser.add_argument(
        "--readme",
        type=Path,
        help=f"also write the Markdown table into this file, between {README_START} and "
        f"{README_END} (the project's README.md)",
    )
    return parser.parse_args(list(argv))


def make_settings(args: argparse.Namespace) -> Settings:
    fixture = Path(args.fixture).resolve()
    if not fixture.is_dir():
        raise UsageError(f"fixture {fixture} is not a directory")
    if args.repeat < 1 or args.timeout <= 0:
        raise UsageError("--repeat must be at least 1 and --timeout positive")
    tools = tuple(t.strip() for t in str(args.expect_tools).split(",") if t.strip())
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    return Settings(
        fixture=fixture,
        dist_name=args.dist_name or project_name(fixture),
        expect_tools=tools,
        python=sys.executable,
        uv=uv,
        timeout=args.timeout,
        other_python=str(Path(args.compare_with).absolute()) if args.compare_with else None,
        hints=None if args.cold_hints else Path(tempfile.mkdtemp(prefix="bench-hints-")),
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        settings = make_settings(args)
        contenders = select(args.only, compare=settings.other_python is not None)
        if args.readme is not None and README_START not in args.readme.read_text("utf-8"):
            raise UsageError(f"{args.readme} has no {README_START} marker")
    except (UsageError, OSError) as exc:
        print(f"bench_check: {exc}", file=sys.stderr)
        return 2
    started = datetime.now(timezone.utc)
    print(
        f"fixture {settings.fixture} ({settings.dist_name}), tools {settings.tools_arg}, "
        f"Python {platform.python_version()} at {settings.python}\n"
        f"{args.repeat} timed round(s) after 1 untimed warm-up round of every contender "
        "(so the pip/uv/tox/nox caches are warm for all); round-robin, start rotated each round; "
        "each repetition in a fresh temporary directory, removed afterwards.",
        flush=True,
    )
    try:
        attempts = run_rounds(contenders, settings, args.repeat, args.verbose)
    finally:
        if settings.hints is not None:
            shutil.rmtree(settings.hints, ignore_errors=True)
    summaries = summarize(contenders, attempts)
    path = write_results(summaries, attempts, settings, args.repeat, started)
    print()
    print(format_table(summaries))
    for line in format_targets(summaries):
        print(line)
    print(f"\nseconds are wall time per repetition; raw timings: {path}")
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    if load is not None:
        print(f"load average at the end (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    isolation = (
        sandboxverify_isolation(settings)
        if any(s.name.startswith("sandboxverify") for s in summaries)
        else "not measured"
    )
    print(f"sandboxverify's checks ran package code in: {isolation}")
    markdown = format_markdown(
        summaries, args.repeat, python_all_versions(settings.fixture), isolation
    )
    print(f"\n{markdown}")
    if args.readme is not None:
        write_readme(args.readme, markdown)
        print(f"\nthe table above replaced the one in {args.readme}")
    return 0 if all(s.ok for s in summaries) else 1


if __name__ == "__main__":
    sys.exit(main())
