"""What a check does ahead of its stages, while the build runs: it imports what the stages after
the build need, and makes the sandboxes (in the OS sandbox, which hides them from the build)."""

from __future__ import annotations

import contextlib
import importlib
import threading
import time
from dataclasses import dataclass

from sandboxverify.options._check_options import CheckOptions
from sandboxverify.pipeline._events import EventSink
from sandboxverify.pipeline._stages import command_observer
from sandboxverify.report._model import Failure
from sandboxverify.sandbox._interpreters import Interpreter
from sandboxverify.sandbox._isolation import Isolation
from sandboxverify.sandbox._subprocess import Observer
from sandboxverify.sandbox._toolchain import Toolchain
from sandboxverify.sandbox._venv import Sandbox, StepSettings, acquaint, create
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
    toolchain: Toolchain,
    options: CheckOptions,
    on_event: EventSink,
    isolation: Isolation,
    built: threading.Event,
) -> Premade:
    """Stage ``venv``'s work, done ahead: a fresh sandbox of ``interpreter``; while the build
    is still running (not ``built``), the installer meets it too (it would at the install)."""
    started = time.perf_counter()
    steps = step_settings(options, command_observer(on_event, interpreter.version), isolation)
    sandbox, failure = create(interpreter, workspace.sandbox(label), toolchain.sandbox, steps)
    seconds = time.perf_counter() - started
    if failure is None and not built.is_set():
        acquaint(sandbox, toolchain.installer, steps)
    return Premade(sandbox, failure, seconds)


def step_settings(options: CheckOptions, observer: Observer, isolation: Isolation) -> StepSettings:
    return StepSettings(options.pass_env, options.install_timeout, observer, isolation)
