"""What a check does ahead of its stages, while the build runs: it makes the sandboxes (in the
OS sandbox, which hides them from the build)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from sandboxverify.pipeline._events import EventSink
from sandboxverify.pipeline._options import CheckOptions
from sandboxverify.pipeline._stages import command_observer
from sandboxverify.report._model import Failure
from sandboxverify.sandbox._interpreters import Interpreter
from sandboxverify.sandbox._isolation import Isolation
from sandboxverify.sandbox._subprocess import Observer
from sandboxverify.sandbox._toolchain import Toolchain
from sandboxverify.sandbox._venv import Sandbox, StepSettings, acquaint, create
from sandboxverify.sandbox._workspace import Workspace


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
