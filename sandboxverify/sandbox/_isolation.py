"""Which isolation a check runs untrusted code with, decided once, before any work.

Build backend hooks, plugin loads, the import check, console scripts, smoke runs and the MCP
servers those start all go through one seam, :class:`~._confinement.Isolation`, which wraps a
command's argv:

- ``namespaces``: the OS sandbox (Linux, bubblewrap; see ``_bwrap``), with no network unless the
  check asks for the host's (``--network``);
- ``process``: the environment allowlists, a private HOME and TMPDIR, ``-I`` and an empty working
  directory, and a reaper for whatever a step leaves running; the code runs as the user, on the
  host's file system and network.

Both start every process with a session keyring of its own and, where this machine has a system
call table (x86_64, aarch64), under the system call filter (``_seccomp``).

``--isolation auto`` (the default) takes the OS sandbox when it works here and otherwise falls
back to ``process`` with a warning naming what stays possible; ``strict`` refuses to run without
it (a usage error before any work); ``process`` asks for no OS sandbox.
"""

from __future__ import annotations

import functools
import subprocess
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from sandboxverify._errors import UsageError
from sandboxverify.sandbox._bwrap import PROBE_TIMEOUT, Bubblewrap, available, sandbox_filter
from sandboxverify.sandbox._confinement import (
    PROCESS,
    Confined,
    Confinement,
    Isolation,
    IsolationName,
    NetworkName,
    ProcessIsolation,
)
from sandboxverify.sandbox._seccomp import syscall_filter, unfiltered_reason

__all__ = [
    "ISOLATION_CHOICES",
    "PROCESS",
    "PROCESS_RISKS",
    "Confined",
    "Confinement",
    "Isolation",
    "IsolationChoice",
    "IsolationName",
    "NetworkName",
    "ProcessIsolation",
    "choose_isolation",
    "interpreter_roots",
    "unfiltered_reason",
]

IsolationChoice = Literal["auto", "strict", "process"]
ISOLATION_CHOICES: tuple[IsolationChoice, ...] = ("auto", "strict", "process")

#: What code from the package can still do without the OS sandbox (the fallback warning; the
#: README says the same at length).
PROCESS_RISKS = (
    "code from the package runs as you on your file system: it can read your files (~/.netrc, "
    "~/.pypirc, ~/.config), the environment of your other processes (/proc/<pid>/environ, "
    "secrets included), write wherever you can (the source tree, $GITHUB_ENV, the installed "
    "sandboxverify: a change to it fails the check), reach the network and local services, "
    "and stop or kill sandboxverify itself (a stopped check waits for the CI job's time limit)"
)
HINT = (
    "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap) and allow "
    "unprivileged user namespaces (Ubuntu 24.04: sysctl "
    "kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile for bwrap); "
    "--isolation process runs without the OS sandbox"
)


def choose_isolation(
    choice: IsolationChoice, hide: Iterable[Path] = (), *, network: bool = False
) -> tuple[Isolation, str | None]:
    """The isolation a check runs with, and why it fell back to ``process`` (a warning).

    ``hide``: what the OS sandbox must never show (the check's targets). ``network``: package
    code reaches the host's network (``--network``); without the OS sandbox it always does.
    ``strict`` raises :class:`UsageError` when the OS sandbox is unavailable."""
    if choice == "process":
        return ProcessIsolation(syscall_filter()), None
    bwrap, problem = available()
    if bwrap is not None:
        shared: NetworkName = "host" if network else "none"
        hidden = tuple(Path(p).absolute() for p in hide)
        return Bubblewrap(bwrap, hidden, network=shared, syscall_filter=sandbox_filter()), None
    if choice == "strict":
        raise UsageError(f"--isolation strict: the OS sandbox is unavailable: {problem}", hint=HINT)
    return ProcessIsolation(syscall_filter()), problem


def interpreter_roots(*pythons: Path, prefixes: Sequence[str] = ()) -> tuple[Path, ...]:
    """The directories these interpreters need to run: the base prefixes (the standard
    library, ``libpython``) and where their executables really are. ``prefixes``: their base
    prefixes when known (a resolved interpreter, and every venv made from it, has them);
    else they are asked with ``-I -S`` of interpreters the user named or sandboxverify runs
    on: nothing from a sandbox runs."""
    roots = {Path(prefix) for prefix in prefixes}
    for python in pythons:
        roots.add(python.resolve().parent.parent)
        if not prefixes:
            roots.update(_asked_prefixes(python))
    roots = {root for root in roots if root.is_absolute() and root != Path("/")}
    # /usr/bin/python3's prefix is /usr, bound anyway; keep only the outermost of the rest
    return tuple(
        sorted(
            root
            for root in roots
            if root != Path("/usr")
            and not any(root != other and other in root.parents for other in roots | {Path("/usr")})
        )
    )


_asking = threading.Lock()


def _asked_prefixes(python: Path) -> tuple[Path, ...]:
    with _asking:  # stages confine in parallel: one of them asks, the others get its answer
        return _ask_prefixes(python)


@functools.cache
def _ask_prefixes(python: Path) -> tuple[Path, ...]:
    try:
        completed = subprocess.run(
            [str(python), "-I", "-S", "-c", _PREFIXES],
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    if completed.returncode != 0:
        return ()
    return tuple(Path(line) for line in completed.stdout.decode().splitlines() if line)


_PREFIXES = "import sys; print(sys.base_prefix); print(sys.base_exec_prefix)"
