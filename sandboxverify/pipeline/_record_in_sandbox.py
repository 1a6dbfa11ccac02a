"""``record --sandbox``: the plugins a live model drives come from a fresh sandbox, as ``check``
would install them: build the project (or take its built artifacts), create a throwaway
environment, install the wheel with ``--with`` (``llm`` and the model's plugin), then record there.

What comes back is what an in-place recording returns (``runtime._recording.record``), plus
``sandbox`` (the interpreter, the wheel, ``--with``); a build or install that failed comes back
as the recording's ``error`` with its failure code and hint, before any model was asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sandboxverify.artifacts import Artifact, classify
from sandboxverify.options import CheckOptions, validate
from sandboxverify.pipeline._check import build_target
from sandboxverify.pipeline._progress import EventSink, ignore
from sandboxverify.pipeline._request import CheckRequest, decide_isolation
from sandboxverify.pipeline._run import sandbox_with_wheel
from sandboxverify.pipeline._state import CheckState, run_context
from sandboxverify.report import Failure, Redactor, Stage
from sandboxverify.sandbox import Interpreter, Workspace, resolve_all, supervised
from sandboxverify.stages import failure_error, record_live_session


def record_in_sandbox(
    options: CheckOptions,
    request: dict[str, Any],
    *,
    trace: Path | None,
    on_event: EventSink = ignore,
) -> dict[str, Any]:
    """Record ``request`` (as ``runtime._recording.record`` takes it) against the wheel of
    ``options.targets`` installed in a sandbox. ``options`` gives what ``check`` would use to
    build and install (``installer``, ``with_requirements``, ``pass_env``, ``python``,
    ``timeout`` for the whole session); raises :class:`UsageError` on bad input only, before
    any work."""
    validate(options)
    target = classify(options.targets)
    [interpreter] = resolve_all(options.python[:1])
    isolation, _ = decide_isolation(options, on_event)
    context = run_context(options, isolation, on_event)
    with Workspace(keep=options.keep) as workspace, supervised():
        state = CheckState(CheckRequest(options, target), workspace, context, on_event)
        result, wheel = _record_installed(state, interpreter, request, trace)
    if wheel is None:
        return result
    result["sandbox"] = {
        "python": interpreter.version,
        "wheel": wheel.path.name,
        "with": list(options.with_requirements),
        "pass_env": list(options.pass_env),
        "isolation": isolation.name,
    }
    return result


def _record_installed(
    state: CheckState, interpreter: Interpreter, request: dict[str, Any], trace: Path | None
) -> tuple[dict[str, Any], Artifact | None]:
    """Build, sandbox and install as ``check`` does, then record there: the recording and the
    wheel it ran against, or the failed build or install and no wheel."""
    build = build_target(state)
    if not build.installable:
        return _failed(build.failures), None
    stages: list[Stage] = []
    paths = state.workspace.sandbox(interpreter.label, interpreter.path)
    ready, failures = sandbox_with_wheel(state, build, interpreter, paths, stages)
    if ready is None:
        return _failed(failures), None
    sandbox, wheel = ready
    ctx = state.context.with_runtime(state.workspace.install_runtime())
    result = record_live_session(
        sandbox,
        {**request, "dist": request.get("dist") or str(wheel.name)},
        ctx=ctx.for_python(interpreter.version),
        trace=trace,
        redact=Redactor().text,
    )
    return result, wheel


def _failed(failures: Sequence[Failure]) -> dict[str, Any]:
    """The build or install failed: nothing was recorded, and the first failure says why."""
    first, *more = failures or [
        Failure(
            "install_failed",
            "no wheel to install: an sdist alone was given",
            hint="pass the project directory, or its wheel too",
        )
    ]
    error = failure_error(first)
    if more:
        error["message"] += "; " + "; ".join(f"[{f.code}] {f.message}" for f in more)
    return {"ok": False, "error": error}
