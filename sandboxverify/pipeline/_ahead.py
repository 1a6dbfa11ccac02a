"""What a check does ahead of its stages, while the build runs: it imports what the stages after
the build need, and makes the sandboxes (in the OS sandbox, which hides them from the build)."""

from __future__ import annotations

import contextlib
import importlib
import threading
import time
from dataclasses import dataclass

from sandboxverify.report._model import Failure
from sandboxverify.sandbox._context import RunContext
from sandboxverify.sandbox._interpreters import Interpreter
from sandboxverify.sandbox._venv import Sandbox, create, learn_interpreter
from sandboxverify.sandbox._workspace import Workspace

#: what the stages after the build import (the artifacts' metadata, the probe...): ~30 ms
_IMPORTED_LATER = ("sandboxverify.artifacts._metadata", "sandboxverify.pipeline._run")


def import_ahead() -> threading.Thread:
    """Import in the background what the stages after the build need, while the check goes
    on to its build; join it before code from the package runs where that code could rewrite
    a module of ours (process isolation): every module is what it was when the check began."""
    thread = threading.Thread(target=_import_later, name="import-ahead", daemon=True)
    thread.start()
    return thread


def _import_later() -> None:
    for name in _IMPORTED_LATER:
        with contextlib.suppress(Exception):  # only a head start: the stage imports it itself
            importlib.import_module(name)


@dataclass(frozen=True)
class Premade:
    """A sandbox made while the build ran, and how long making it took."""

    sandbox: Sandbox
    failure: Failure | None
    seconds: float


def make_sandbox(
    interpreter: Interpreter,
    label: str,
    *,
    workspace: Workspace,
    ctx: RunContext,
    built: threading.Event,
) -> Premade:
    """Stage ``venv``'s work, done ahead: a fresh sandbox of ``interpreter``; while the build
    is still running (not ``built``), the installer learns its interpreter too (it would at
    the install)."""
    started = time.perf_counter()
    ctx = ctx.for_python(interpreter.version)
    sandbox, failure = create(interpreter, workspace.sandbox(label), ctx)
    seconds = time.perf_counter() - started
    if failure is None and not built.is_set():
        learn_interpreter(sandbox, ctx)
    return Premade(sandbox, failure, seconds)
