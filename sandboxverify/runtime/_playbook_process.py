"""The process that runs a ``.py`` playbook for its judge (``_playbook_judge``).

The script runs here as ``__main__``, from its own directory, with the harness importable; the
sessions it creates start their plugins through the judge, which relays every message to the
plugins' processes and keeps its own account. What this process reports at the end (how the
script ended, a session failure it went on after) can only add failures to that account.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
from typing import Any

from sandboxverify.runtime._descendants import keep_to_myself
from sandboxverify.runtime._tracebacks import format_traceback
from sandboxverify.runtime.harness import (
    SESSION_OBSERVERS,
    Channel,
    HardExit,
    HarnessError,
    TestSession,
    ending,
    serve_judge,
    watching_exits,
)


def main(argv: list[str]) -> None:
    """``argv``: the pipe ends the judge reads and writes."""
    channel = Channel.over_fds(int(argv[0]), int(argv[1]), name="playbook")
    start = channel.receive()
    if start is None or start.get("op") != "start":
        os._exit(2)
    if start.get("private"):  # its declarations stay its own: no plugin process reads it
        keep_to_myself()
    serve_judge(channel)
    sys.path[:] = [str(entry) for entry in start["sys_path"]]
    sessions: list[TestSession] = []
    SESSION_OBSERVERS.append(sessions.append)
    with watching_exits():
        error = _run(str(start["script"]))
    caught = None if error is not None else _caught(sessions)
    channel.send({"op": "done", "error": error, "caught": caught, "summary": _summary(sessions)})
    sys.stdout.flush()
    sys.stderr.flush()
    # what the script left behind (threads, atexit hooks) must not keep the judge waiting
    os._exit(0)


def _run(path: str) -> dict[str, Any] | None:
    """Run the script; how it failed, if it did."""
    sys.argv = [path]
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            return _error("script_failed", f"the playbook exited with {exc.code!r}")
    except HarnessError as exc:
        return {**exc.to_json(), "details": exc.details or format_traceback(exc)}
    except HardExit as exc:
        return _error("script_failed", f"the playbook {ending(exc)}", format_traceback(exc))
    except BaseException as exc:  # KeyboardInterrupt too: the user's goes to the judge
        return _error("script_failed", f"{type(exc).__name__}: {exc}", format_traceback(exc))
    return None


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


def _summary(sessions: list[TestSession]) -> dict[str, int]:
    events = [session.events for session in sessions]
    return {
        "turns": sum(1 for e in events for event in e.all if event.type == "turn_started"),
        "ui_calls": sum(len(e.ui) for e in events),
    }


def _error(code: str, message: str, details: str | None = None) -> dict[str, Any]:
    return {"code": code, "message": message, "turn": None, "action": None, "details": details}
