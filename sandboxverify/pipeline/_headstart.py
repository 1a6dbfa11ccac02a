"""A check's head start: what it does early, or side by side, so that it ends sooner.

The steps of a check (``_check``) read as if each ran in turn; what overlaps is here:

- what the check starts from is found side by side, each part mostly waiting on a process or the
  disk (:func:`find_footing`);
- what the stages after the build import is imported in the background while the build runs,
  waited for first where unconfined build code could rewrite a module of ours
  (:func:`import_later_stages`); what inspecting new artifacts imports, once the backend is
  known to run (reused artifacts' findings are read back, :func:`build_meanwhile`);
- while the build runs, and until the first request to the runtime needs it, the runtime is
  copied; in the OS sandbox, which hides them from the build, the sandboxes are made and the
  installer learns their interpreters (:func:`build_meanwhile`).
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from sandboxverify._frozen import frozen
from sandboxverify.artifacts import BuildResult, pyproject_validator
from sandboxverify.pipeline._progress import EventSink
from sandboxverify.pipeline._request import CheckRequest, decide_isolation
from sandboxverify.report import Failure
from sandboxverify.sandbox import (
    Fingerprint,
    Interpreter,
    Isolation,
    RunContext,
    Sandbox,
    Workspace,
    create_sandbox,
    fingerprint,
    learn_interpreter,
    resolve_all,
)

#: what the stages after the build import (the probe, the imports...)
_IMPORTED_LATER = ("sandboxverify.pipeline._run",)
#: what they import only when something failed: ahead only where package code could rewrite it
_IMPORTED_ON_FAILURE = (
    # modules that failed to import, judged as users meet them (with an extra, elsewhere...),
    # and plugins that lack their application, loaded again with the extra that brings it
    "sandboxverify.stages._excuses",
    "sandboxverify.stages._plugin_extras",
    "sandboxverify.pipeline._dependents",
    # a module written for an older release of a requirement, a dependency published only as
    # an sdist (built in the sandbox): the index's releases of it
    "sandboxverify.artifacts._index",
)
#: what inspecting newly built artifacts imports (packaging.metadata and the email package it
#: parses with: ~30 ms); a re-check reads its reused artifacts' findings back instead
_IMPORTED_TO_INSPECT = ("sandboxverify.artifacts._metadata", "sandboxverify.artifacts._pyproject")


@frozen
class Footing:
    """What a check starts from."""

    isolation: Isolation
    #: why package code runs without the OS sandbox where it could have had it
    fallback: str | None
    #: the interpreters ``--python`` names, resolved (``min`` and ``all`` choose after the build)
    interpreters: tuple[Interpreter, ...]
    #: our own files' digests, taken before any code from the package runs
    installation: Fingerprint


def find_footing(request: CheckRequest, on_event: EventSink) -> Footing:
    """Our own files' digests, whether the OS sandbox is there, and the interpreters named,
    found side by side; the interpreters are resolved before the build, so a typo costs no
    build time."""
    explicit, selectors = request.explicit_pythons, request.python_selectors
    with ThreadPoolExecutor(max_workers=3) as pool:
        digests = pool.submit(fingerprint)
        deciding = pool.submit(decide_isolation, request.options, on_event)
        resolving = pool.submit(resolve_all, list(explicit)) if explicit or not selectors else None
        isolation, fallback = deciding.result()
        interpreters = resolving.result() if resolving is not None else []
        installation = digests.result()
    return Footing(isolation, fallback, tuple(interpreters), installation)


def import_later_stages(isolation: Isolation) -> None:
    """Import in the background what the stages after the build need, while the check goes on
    to its build; started only once the footing is found (importing holds the interpreter, and
    finding it wants the interpreter briefly). In process isolation the import is waited for:
    the build's code could rewrite a module of ours not yet imported, and every module must be
    what it was when the check began."""
    if isolation.name == "process":
        _import(_IMPORTED_LATER + _IMPORTED_TO_INSPECT + _IMPORTED_ON_FAILURE)
        # compiled into the cache directory, which unconfined build code can write: loaded
        # before that code runs
        pyproject_validator()
        return
    threading.Thread(
        target=_import, args=(_IMPORTED_LATER,), name="import-later-stages", daemon=True
    ).start()


def _import(names: Sequence[str]) -> None:
    for name in names:
        with contextlib.suppress(Exception):  # only a head start: the stage imports it itself
            importlib.import_module(name)


@frozen
class EarlySandbox:
    """A sandbox made while the build ran, and how long making it took."""

    sandbox: Sandbox
    failure: Failure | None
    seconds: float


class _BuildPhase:
    """What the build is doing, as the sandboxes made meanwhile need to know: running the
    project's backend (for a while: the installer is worth teaching the sandbox's interpreter
    meanwhile) or over (reused artifacts end it at once: the install would wait for the
    teaching)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._phase: str | None = None

    def building(self) -> None:
        with self._changed:
            self._phase = self._phase or "building"
            self._changed.notify_all()

    def over(self) -> None:
        with self._changed:
            self._phase = "over"
            self._changed.notify_all()

    def still_building(self) -> bool:
        """Once the build has started its backend or ended: whether it is still running."""
        with self._changed:
            self._changed.wait_for(lambda: self._phase is not None)
            return self._phase == "building"


def build_meanwhile(
    build: Callable[[Callable[[], None]], BuildResult],
    workspace: Workspace,
    ctx: RunContext,
    pythons: Sequence[tuple[Interpreter, str]] | None,
) -> tuple[BuildResult, Future[Path], dict[str, EarlySandbox]]:
    """``build`` (given what to call once its backend is known to run); meanwhile the runtime
    is copied (needed from the first request to it on, which waits for it: the installs need
    not) and, in the OS sandbox, the sandboxes of ``pythons`` (interpreters with their labels;
    ``None``: not known before the build) are made: the build, the runtime's copy under way,
    the sandboxes made early by label."""
    # in process isolation the build's code could reach a sandbox made now
    early = pythons if pythons is not None and ctx.isolation.name != "process" else ()
    phase = _BuildPhase()
    # in process isolation the build's code runs as the user beside the copy, and could write
    # bytecode of ours the integrity check does not look at: the sources are copied alone
    copying = workspace.install_runtime_meanwhile(
        bytecode=ctx.isolation.name != "process", kept_in=ctx.runtime_templates
    )
    with ThreadPoolExecutor(max_workers=max(1, len(early))) as pool:
        making = {
            label: pool.submit(
                contextvars.copy_context().run,
                _make_early,
                interpreter,
                label,
                workspace,
                ctx.for_python(interpreter.version),
                phase,
            )
            for interpreter, label in early
        }
        try:
            result = build(lambda: _backend_runs(phase))
        finally:
            phase.over()
        return result, copying, {label: done.result() for label, done in making.items()}


def _backend_runs(phase: _BuildPhase) -> None:
    """Artifacts will be built (not reused): what inspecting them needs is made ready
    meanwhile."""
    threading.Thread(target=_ready_to_inspect, name="ready-to-inspect", daemon=True).start()
    phase.building()


def _ready_to_inspect() -> None:
    """The modules that inspect new artifacts, and the ``pyproject.toml`` validator (~12 ms to
    load). Loaded while the backend runs: in process isolation both are loaded before it runs
    (:func:`import_later_stages`), and in the OS sandbox it cannot write the cache directory
    the validator is loaded from."""
    _import(_IMPORTED_TO_INSPECT)
    with contextlib.suppress(Exception):  # only a head start: the inspection loads it itself
        pyproject_validator()


def _make_early(
    interpreter: Interpreter,
    label: str,
    workspace: Workspace,
    ctx: RunContext,
    phase: _BuildPhase,
) -> EarlySandbox:
    """Stage ``venv``'s work, done early: a fresh sandbox of ``interpreter``; while the
    project's backend runs, the installer learns its interpreter too (it would at the
    install). Artifacts reused end the build before that would pay."""
    started = time.perf_counter()
    sandbox, failure = create_sandbox(interpreter, workspace.sandbox(label, interpreter.path), ctx)
    seconds = time.perf_counter() - started
    if failure is None and phase.still_building():
        learn_interpreter(sandbox, ctx)
    return EarlySandbox(sandbox, failure, seconds)
