"""The ``smoke`` action: run a playbook inside the sandbox against the installed plugins.

A declarative playbook arrives as the normalized spec (the host parsed the TOML); a ``.py``
playbook is a script run as ``__main__`` with the harness importable. Either way the result is a
summary of what was called plus, on failure, the harness diagnostic; the trace goes to a file.

Nothing the playbook runs can end the run silently: ``os._exit`` raises while it runs, and an
exit, a ``KeyboardInterrupt`` or any other ``BaseException`` is a failure (``aborted``). A session
whose run failed fails the playbook even if the script caught the error.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
from pathlib import Path
from typing import Any

from sandboxverify.runtime._results import excerpt
from sandboxverify.runtime._tracebacks import format_traceback
from sandboxverify.runtime.harness import (
    DIST_ENV,
    HOST_ENV,
    SESSION_OBSERVERS,
    HardExit,
    HarnessError,
    TestSession,
    ending,
    run_spec,
    session_from_spec,
    watching_exits,
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
    with watching_exits():
        result = _declarative(request) if "spec" in request else _script(Path(request["script"]))
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
        )
        run_spec(request["spec"], session)
    except HarnessError as exc:
        error = exc.to_json()
    except Exception as exc:  # a bug in plugin code outside any tool call, or in ours
        error = _crash("crashed", exc)
    except KeyboardInterrupt:  # outside any action: the user's Ctrl-C
        raise
    except BaseException as exc:  # plugin code outside any action ended the run
        error = _crash("aborted", exc, f"plugin code {ending(exc)}")
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


def _script(path: Path) -> dict[str, Any]:
    error: dict[str, Any] | None = None
    sessions: list[TestSession] = []
    SESSION_OBSERVERS.append(sessions.append)
    sys.argv = [str(path)]
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            error = {
                "code": "script_failed",
                "message": f"the playbook exited with {exc.code!r}",
                "turn": None,
                "action": None,
                "details": None,
            }
    except HarnessError as exc:
        error = {**exc.to_json(), "details": exc.details or format_traceback(exc)}
    except HardExit as exc:
        error = _crash("script_failed", exc, f"the playbook {ending(exc)}")
    except KeyboardInterrupt:  # outside any action: the user's Ctrl-C
        raise
    except BaseException as exc:
        error = _crash("script_failed", exc)
    finally:
        SESSION_OBSERVERS.remove(sessions.append)
    summary = {"script": path.name, **summarize(sessions)}
    error = error or _caught(sessions) or _nothing_called(summary)
    return {"ok": error is None, "error": error, **summary}


def _caught(sessions: list[TestSession]) -> dict[str, Any] | None:
    """The failure of a session the script went on after (it caught the HarnessError), or a
    session that left list mocks or UI answers unused: the playbook fails all the same."""
    for session in sessions:
        if session.failure is None and session.auto_assert:
            with contextlib.suppress(HarnessError):  # it becomes the session's failure
                session.assert_mocks_used()
        if session.failure is not None:
            failure = session.failure
            return {
                **failure.to_json(),
                "message": f"{failure.message} (the playbook caught this failure and went on; "
                "a session whose run failed fails the playbook)",
                "details": failure.details or format_traceback(failure),
            }
    return None


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
