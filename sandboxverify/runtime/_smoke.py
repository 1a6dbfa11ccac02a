"""The ``smoke`` action: run a playbook inside the sandbox against the installed plugins.

This process is the judge of the run, and runs no plugin code: every session's plugins live in a
process of their own (``harness._plugin_process``), reached over a pipe this process owns. A
declarative playbook arrives as the normalized spec (the host parsed the TOML) and its sessions
run here; a ``.py`` playbook runs in a process of its own (``_playbook_judge``), and this
process relays and judges what its sessions do. Either way the result is a summary of what was
called plus, on failure, the harness diagnostic; the trace goes to a file.

Nothing the playbook runs can end the run silently: an exit, a ``KeyboardInterrupt`` or any
other ``BaseException`` in plugin code fails its action (``aborted``), and so does the plugins'
process dying; a session whose run failed fails the playbook even if the script caught the
error. Whatever plugin code does to its own interpreter changes no verdict here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sandboxverify.runtime._descendants import ended_at_exit, keep_to_myself, kept_to_myself
from sandboxverify.runtime._playbook_judge import judge_script
from sandboxverify.runtime._results import excerpt
from sandboxverify.runtime._tracebacks import format_traceback
from sandboxverify.runtime.harness import (
    DIST_ENV,
    HOST_ENV,
    HarnessError,
    TestSession,
    run_spec,
    session_from_spec,
)

#: the report keeps this much of each result's text (a cut is marked)
_SHOWN_TEXT = 2000


def smoke(request: dict[str, Any]) -> dict[str, Any]:
    """Run ``request["spec"]`` (declarative) or ``request["script"]`` (a .py playbook).

    Optional keys: ``dist`` (whose plugins load by default), ``group``, ``plugins`` (explicit
    plugin specs, overriding the playbook's), ``run_timeout``, ``trace`` (a path for the JSONL).
    """
    if request.get("dist"):
        os.environ[DIST_ENV] = request["dist"]
    # a .py playbook's sessions host plugins the way the check does unless they say otherwise
    os.environ[HOST_ENV] = request.get("host") or "native"
    if request.get("nonce"):  # in a sandbox, for the host: nothing of the run reads this process
        keep_to_myself()
    # in place too (run), nothing the run starts attaches to this process to change its mind;
    # and nothing it started outlives the verdict, to rewrite it
    with kept_to_myself(), ended_at_exit():
        if "spec" in request:
            result = _declarative(request)
        else:
            result = judge_script(
                Path(request["script"]),
                run_timeout=request.get("run_timeout"),
                private=bool(request.get("nonce")),
                read_only=bool(request.get("read_only_files")),
            )
    _mark_diverged(result)
    return result


def _declarative(request: dict[str, Any]) -> dict[str, Any]:
    session: TestSession | None = None
    error: dict[str, Any] | None = None
    try:
        server = request.get("server")
        session = session_from_spec(
            request["spec"],
            plugins=[server["value"]] if server else request.get("plugins"),
            dist=request.get("dist"),
            group=request.get("group"),
            host=request.get("host"),
            run_timeout=request.get("run_timeout"),
            isolate=True,  # the plugins' code runs in a process of its own, never in the judge
        )
        run_spec(request["spec"], session)
    except HarnessError as exc:
        error = exc.to_json()
    except Exception as exc:  # a bug of ours: plugin code never runs in this process
        error = _crash("crashed", exc)
    finally:
        if session is not None:
            session.close()
    sessions = [session] if session is not None else []
    summary = summarize(sessions)
    if session is not None and request.get("trace"):
        session.write_trace(request["trace"])
        summary["trace"] = request["trace"]
    error = error or _nothing_called(summary)
    return {"ok": error is None, "error": error, **summary}


def _mark_diverged(result: dict[str, Any]) -> None:
    """The call the failure happened at (the last one recorded for its turn and action) is
    marked, so no report shows it as a plain success."""
    error = result.get("error") or {}
    if error.get("turn") is None or error.get("action") is None:
        return
    for call in reversed(result.get("calls") or []):
        if (call["turn"], call["action"]) == (error["turn"], error["action"]):
            call["diverged"] = True
            return


def _nothing_called(summary: dict[str, Any]) -> dict[str, Any] | None:
    """A smoke run exists to exercise tools: one that called none proves nothing."""
    if summary.get("tool_calls"):
        return None
    return {
        "code": "nothing_called",
        "turn": None,
        "action": None,
        "details": None,
        "message": "the playbook ran but called no tool: a smoke run that exercises nothing "
        "proves nothing; add call(...) actions (in a .py playbook: run a session)",
    }


def _crash(code: str, exc: BaseException, message: str | None = None) -> dict[str, Any]:
    return {
        "code": code,
        "message": message or f"{type(exc).__name__}: {exc}",
        "turn": None,
        "action": None,
        "details": format_traceback(exc),
    }


def summarize(sessions: list[TestSession]) -> dict[str, Any]:
    events = [session.events for session in sessions]
    return {
        "sessions": len(sessions),
        "turns": sum(1 for e in events for event in e.all if event.type == "turn_started"),
        "tool_calls": sum(len(e.tool_calls) for e in events),
        "ui_calls": sum(len(e.ui) for e in events),
        "calls": [
            {
                "tool": record.tool_name,
                "tool_call_id": record.tool_call_id,
                "turn": record.turn,
                "action": record.action,
                "is_error": record.is_error,
                "mocked": record.mocked,
                "blocked": record.blocked,
                "text": excerpt(record.text, _SHOWN_TEXT),
                "text_length": len(record.text),
            }
            for e in events
            for record in e.tool_results
        ],
    }
