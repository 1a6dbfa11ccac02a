"""Stage ``record`` of ``record --sandbox``: a live model drives the plugins installed in a
sandbox, through the runtime's ``record`` action and the same verified side channel as the probe.

The sandbox sees only the allowlisted environment and ``--pass-env``: a model's key reaches it
only when named. The session's trace is written inside the sandbox and copied out through
``redact``; the playbook is written by the caller, as an in-place recording is.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandboxverify.report import Failure
from sandboxverify.sandbox import RunContext, Sandbox, read_bounded
from sandboxverify.stages._runtime_call import (
    ProbeError,
    Subject,
    payload,
    request_runtime,
    result_dir,
    runtime_timeout,
)


def record_live_session(
    sandbox: Sandbox,
    request: dict[str, Any],
    *,
    ctx: RunContext,
    trace: Path | None,
    redact: Callable[[str], str],
) -> dict[str, Any]:
    """What the runtime's ``record`` returned (see ``runtime._recording.record``); a session
    that timed out or crashed the interpreter is a failed recording (``timeout``,
    ``probe_crashed``). ``trace``: where the session's trace goes on this side."""
    # the request's own result directory: the one place the OS sandbox lets the session write
    inside = result_dir(sandbox, "record") / "trace.jsonl"
    inside.unlink(missing_ok=True)
    request = {
        **request,
        "action": "record",
        "trace": str(inside) if trace is not None else None,
        "run_timeout": runtime_timeout(ctx.plugin_timeout),
    }
    subject = Subject(
        f"the session with the model {request['model']!r}",
        timeout_hint="a tool or the model hangs, or the session needs more time: raise --timeout",
        crash_hint="plugin code exited or killed the interpreter during the session",
    )
    try:
        result = payload(
            request_runtime(sandbox, request, label="record", ctx=ctx, subject=subject)
        )
    except ProbeError as exc:
        result = {"ok": False, "error": failure_error(exc.failure)}
    result.pop("trace", None)
    if trace is not None and inside.is_file():
        try:
            recorded = read_bounded(inside).decode("utf-8", errors="replace")
        except (OSError, ValueError):  # a link, or past the bound: the session's code wrote it
            return result
        trace.write_text(redact(recorded), encoding="utf-8")
        result["trace"] = str(trace)
    return result


def failure_error(failure: Failure) -> dict[str, Any]:
    """A failure of the pipeline (build, install, the runtime's process) as the ``error`` of a
    recording, which the command line shows as it shows a failed session."""
    return {
        "code": failure.code,
        "message": failure.message,
        "hint": failure.hint,
        "turn": None,
        "action": None,
        "details": failure.details,
    }
