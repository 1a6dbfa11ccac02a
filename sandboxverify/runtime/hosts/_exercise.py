"""What the hosts that run an application with the plugin share: a time limit per step, what
the plugin's code reached for while it ran, and telling "needs something this sandbox lacks" from
a break.

A step is bounded with ``SIGALRM`` (``setitimer``), which interrupts Python code in the main
thread; where there is none (Windows, a thread), the sandbox's own timeout for the whole load is
the bound.

Telling a need from a break follows what was measured on real service fixtures and application
plugins: the exception type alone is not enough (a PostgreSQL fixture raises
``CalledProcessError``, a Redis one its own ``RedisMisconfigured``), so what the code reached for
counts too:

1. a builtin ``ConnectionError`` or ``TimeoutError`` in the exception's chain, an ``OSError``
   whose errno says refused or unreachable, or a failed name lookup: a **service**;
2. an ``ImportError`` telling the user to install an extra (``pip install 'pkg[async]'``): an
   **extra**;
3. an interpreter built without an optional capability (sqlite3 extension loading): the
   **platform**;
4. a connection, a name lookup or a process started while the step ran (audit events), and an
   exception that is not a programming error (``AttributeError``, ``TypeError``...): a
   **service** too;
5. anything else is a break.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

#: exceptions that say the code is wrong, not its surroundings
PROGRAMMING_ERRORS: tuple[type[BaseException], ...] = (
    AttributeError,
    TypeError,
    NameError,
    SyntaxError,
    KeyError,
    IndexError,
    AssertionError,
    RecursionError,
)
#: errno values of a peer that is not there
_UNREACHABLE = frozenset(
    code
    for code in (
        getattr(errno, name, None)
        for name in ("ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "ETIMEDOUT", "ECONNRESET")
    )
    if code is not None
)
#: what a peer that is not there looks like in a message: C libraries (libpq, a Redis or Kafka
#: client) report the system's own words for the errno, not an ``OSError``
_UNREACHABLE_WORDS = (
    *(os.strerror(code) for code in sorted(_UNREACHABLE)),
    "Name or service not known",
    "Temporary failure in name resolution",
    "nodename nor servname provided",
)
#: audit events of code reaching outside the process
_REACHING = ("socket.connect", "socket.getaddrinfo", "subprocess.Popen", "os.posix_spawn")
_REACHING_PREFIXES = ("os.exec", "os.spawn", "os.system")
#: seconds between a step's ``StepTimeout`` and the next, until it ends
_AGAIN = 1.0
_EXTRA = re.compile(r"install\s+['\"]?[\w.-]+\[[\w.,-]+\]", re.IGNORECASE)
#: a message that says something is absent and how its user gets it apart from Python
#: packages: a command to download it (Playwright's browsers, NLTK's data) or PATH (Tesseract,
#: a WebDriver). Never a Python package: that is a dependency to declare, or an extra.
_ABSENT = re.compile(
    r"does ?n[o']t exist|not found|could ?n[o']t be found|(?:could|can) ?n[o']?t find|"
    r"not installed|needs? to be (?:on|in) (?:your |the )?PATH|"
    r"not (?:on|in) (?:your |the )?PATH",
    re.IGNORECASE,
)
_HOW_TO_GET = re.compile(
    r"\b(?:run|use|execute)\b[^\n]{0,80}\b(?:install|download|fetch)|\.download\(|"
    r"\bdownloader\b|\bPATH\b",
    re.IGNORECASE,
)
_PYTHON_PACKAGE = re.compile(r"\b(?:pip3?|uv(?: pip)?|poetry|pipx|conda) (?:install|add)\b", re.I)
#: the frames a missing program's ``FileNotFoundError`` is raised in
_EXEC_FRAMES = frozenset({"_execute_child", "_execvpe", "execvpe", "_spawnvef", "posix_spawnp"})


class StepTimeout(Exception):
    """A step ran out of its time. Raised again each second until the step ends, so a retry
    loop catching ``Exception`` (a service fixture polling a port) cannot swallow it; an
    ``Exception``, so the application handles it as it handles any error of a plugin's (pytest
    caches a fixture's)."""

    def __init__(self, what: str, seconds: float) -> None:
        super().__init__(f"{what} did not finish within {seconds:.3g}s")
        self.what = what
        self.seconds = seconds


class MissingPrerequisite(Exception):
    """The plugin needs what this sandbox does not give it: a service, the network, an extra,
    an interpreter capability. ``need`` says which; the cause is what the plugin raised."""

    def __init__(self, message: str, need: str) -> None:
        super().__init__(message)
        self.need = need


class Deadline:
    """The time a load has, shared by its steps; each step is bounded by what is left."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds
        self._armed: list[float] = []

    def remaining(self) -> float:
        return self.end - time.monotonic()

    @contextlib.contextmanager
    def bound(self, what: str, seconds: float | None = None) -> Iterator[None]:
        """Raise :class:`StepTimeout` in the step when it outlasts ``seconds`` (at most what is
        left of the load). An enclosing bound is armed again afterwards."""
        limit = self.remaining() if seconds is None else min(seconds, self.remaining())
        if limit <= 0:
            raise StepTimeout(what, 0.0)
        signal = _alarm_signal()
        if signal is None:
            yield
            return

        def expire(signum: int, frame: Any) -> None:
            raise StepTimeout(what, limit)

        previous = signal.signal(signal.SIGALRM, expire)
        self._armed.append(time.monotonic() + limit)
        signal.setitimer(signal.ITIMER_REAL, limit, _AGAIN)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self._armed.pop()
            signal.signal(signal.SIGALRM, previous)
            if self._armed:  # the enclosing step's alarm, with what is left of it
                signal.setitimer(signal.ITIMER_REAL, max(0.001, self._armed[-1] - time.monotonic()))

    def disarm(self) -> None:
        """Stop raising :class:`StepTimeout` in the current step: the application has it."""
        signal = _alarm_signal()
        if signal is not None and self._armed:
            signal.setitimer(signal.ITIMER_REAL, 0)


def _alarm_signal() -> Any:
    """``signal``, when a step can be interrupted here: POSIX, in the main thread."""
    import signal  # noqa: PLC0415 - only a load that runs an application pays
    import threading  # noqa: PLC0415

    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        return None
    return signal


# -- what the code reached for ----------------------------------------------------------------

#: what each ``reaching()`` records into, innermost last; the audit hook, once added
_recorders: list[list[str]] = []
_hooked: list[bool] = []


@contextlib.contextmanager
def reaching() -> Iterator[list[str]]:
    """What the code running inside reaches outside the process for: connections, name
    lookups, processes (audit events, described briefly)."""
    if not _hooked:  # an audit hook cannot be removed: one per process, idle when not recording
        sys.addaudithook(_audit)
        _hooked.append(True)
    seen: list[str] = []
    _recorders.append(seen)
    try:
        yield seen
    finally:
        _recorders.remove(seen)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _recorders or not (event in _REACHING or event.startswith(_REACHING_PREFIXES)):
        return
    seen = _recorders[-1]
    if len(seen) < 8:
        seen.append(f"{event} {_described(event, args)}".rstrip())


def _described(event: str, args: tuple[Any, ...]) -> str:
    try:
        if event == "socket.connect":
            return repr(args[1])[:80]
        if event == "socket.getaddrinfo":
            return repr(args[0])[:80]
        if event == "subprocess.Popen":
            return repr(args[0] if args[0] is not None else args[1])[:80]
        return repr(args[0])[:80]
    except Exception:  # an argument whose repr raises
        return ""


# -- a need, or a break -----------------------------------------------------------------------


def step_timed_out(exc: BaseException | None) -> bool:
    """A step's time-out, though it reached the application as something else. The alarm
    raises :class:`StepTimeout` wherever the step is; if that is a weak reference's callback
    or a finalizer, where nothing can propagate, Python reports it as unraisable (pytest:
    ``PytestUnraisableExceptionWarning``, the traceback in its message) and the alarm fires
    again."""
    if exc is None:
        return False
    return any(
        isinstance(link, StepTimeout)
        or ("Exception ignored" in str(link) and f"{StepTimeout.__name__}: " in str(link))
        for link in chain(exc)
    )


def chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not other for other in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def need_of(
    exc: BaseException, reached: list[str] | tuple[str, ...] = ()
) -> MissingPrerequisite | None:
    """What ``exc`` says the plugin needs and did not get here, or ``None`` for a break."""
    cause = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, StepTimeout):
        cause = f"no answer within {exc.seconds:.3g}s"
        evidence = [link for link in chain(exc)[1:] if _unreachable(link)]
        if evidence:  # what it was retrying when its time ran out
            cause += f" ({type(evidence[0]).__name__}: {evidence[0]})"
    tried = f" (it tried {', '.join(reached[:3])})" if reached else ""
    platform = _platform_need(exc)
    if platform is not None:
        return MissingPrerequisite(
            f"needs {platform}, which this Python lacks: {cause}", "platform"
        )
    if isinstance(exc, PROGRAMMING_ERRORS):  # whatever it was handling: the code is wrong
        return None
    # before services: a server program that is not installed is what its fixture needed
    absent = None if isinstance(exc, ImportError) else _fetched_apart(exc)
    if absent is not None:
        return MissingPrerequisite(
            f"needs {absent}, which its users install apart from Python packages and this "
            f"sandbox lacks: {cause}",
            "resource",
        )
    if any(_unreachable(link) for link in chain(exc)):
        return MissingPrerequisite(f"needs a service it cannot reach{tried}: {cause}", "service")
    if isinstance(exc, ImportError) and _EXTRA.search(str(exc)):
        return MissingPrerequisite(f"needs an extra that is not installed: {cause}", "extra")
    if reached:
        return MissingPrerequisite(f"needs a service it cannot reach{tried}: {cause}", "service")
    return None


def _fetched_apart(exc: BaseException) -> str | None:
    """What ``exc`` says is missing that no Python package brings: a program it ran that is
    not installed (not one of the sandbox's own), or what a message says is absent and how
    to download it or put it on PATH."""
    for link in chain(exc):
        if isinstance(link, ImportError):
            return None
        program = _program_not_found(link)
        if program is not None:
            return f"the program {program!r}"
        text = str(link)
        if _ABSENT.search(text) and _HOW_TO_GET.search(text) and not _PYTHON_PACKAGE.search(text):
            return "a program or data"
    return None


def _program_not_found(exc: BaseException) -> str | None:
    """The program a process could not be started with: ``FileNotFoundError`` raised where
    ``subprocess`` or ``os`` executes it, naming no file of this environment."""
    if not isinstance(exc, FileNotFoundError):
        return None
    if not isinstance(exc.filename, (str, os.PathLike)):  # mirakuru passes a Path
        return None
    frames = []
    trace = exc.__traceback__
    while trace is not None:
        frames.append(trace.tb_frame.f_code.co_name)
        trace = trace.tb_next
    if not frames or frames[-1] not in _EXEC_FRAMES:
        return None
    name = str(os.fspath(exc.filename))
    inside = os.path.isabs(name) and os.path.realpath(name).startswith(
        os.path.realpath(sys.prefix) + os.sep
    )
    return None if inside else name


def _unreachable(exc: BaseException) -> bool:
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    if isinstance(exc, OSError) and exc.errno in _UNREACHABLE:
        return True
    if type(exc).__name__ == "gaierror" and type(exc).__module__ == "socket":
        return True
    text = str(exc)
    return any(words in text for words in _UNREACHABLE_WORDS)


def _platform_need(exc: BaseException) -> str | None:
    """An optional capability the interpreter was built without (the pyenv builds lack sqlite3
    extension loading: ``--enable-loadable-sqlite-extensions``)."""
    if not isinstance(exc, AttributeError):
        return None
    name = getattr(exc, "name", None)
    owner = type(getattr(exc, "obj", None)).__module__
    if name in ("enable_load_extension", "load_extension") and owner == "sqlite3":
        return "sqlite3 extension loading (a Python built with --enable-loadable-sqlite-extensions)"
    return None


def within(module: Any, package: str) -> bool:
    return isinstance(module, str) and (module == package or module.startswith(package + "."))


def in_files(exc: BaseException, roots: tuple[str, ...]) -> bool:
    """Does ``exc`` (or what it was raised from) pass through a frame of a file under
    ``roots``: the plugin's own code?"""
    for link in chain(exc):
        tb = link.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename.startswith(roots):
                return True
            tb = tb.tb_next
    return False


def package_roots(package: str) -> tuple[str, ...]:
    """Where the files of the imported top-level ``package`` lie (a directory, or one module)."""
    import os  # noqa: PLC0415

    module = sys.modules.get(package)
    if module is None:
        return ()
    paths = list(getattr(module, "__path__", None) or ())
    filename = getattr(module, "__file__", None)
    if not paths and isinstance(filename, str):
        return (os.path.realpath(filename), filename)
    roots: list[str] = []
    for path in paths:
        roots += [os.path.join(path, ""), os.path.join(os.path.realpath(path), "")]
    return tuple(dict.fromkeys(roots))


class _Output:
    text = ""


@contextlib.contextmanager
def captured() -> Iterator[_Output]:
    """The application's output (stdout and stderr, in a real file: it may ask for its fileno),
    written to standard output again afterwards."""
    output = _Output()
    stdout, stderr = sys.stdout, sys.stderr
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="backslashreplace") as capture:
        sys.stdout = sys.stderr = capture
        try:
            yield output
        finally:
            sys.stdout, sys.stderr = stdout, stderr
            with contextlib.suppress(Exception):
                capture.flush()
                capture.seek(0)
                output.text = capture.read()
            with contextlib.suppress(Exception):
                stdout.write(output.text)
                stdout.flush()
