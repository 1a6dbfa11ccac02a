"""Running code for an action within its time: on a worker thread the caller can give up on.

Tool code, hooks and ``.then`` callbacks run here (one job per call: ``tool_call`` hooks,
execution, ``tool_result`` hooks; one per callback). Python cannot kill a thread: a job that
overruns is abandoned, its thread left to finish alone, and it takes no further step.
"""

from __future__ import annotations

import contextvars
import functools
import queue
import threading
from typing import Any, Callable

from sandboxverify.runtime.harness._errors import HarnessError, Step
from sandboxverify.runtime.harness._guards import settle


def contained(run: Callable[[], Any], at: Step, *, code: str, what: str) -> Any:
    """What ``run`` returns (awaited if async); what it raises is a failure of ``at``."""
    __tracebackhide__ = True  # pytest shows the test, not the harness
    try:
        return settle(run())
    except HarnessError:
        raise
    except BaseException as exc:
        raise at.failure(exc, code=code, what=what) from exc


class CallJob:
    """What a job running on the worker is doing now, for the message if it never returns."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.abandoned = False

    def step(self, what: str) -> None:
        if self.abandoned:  # the caller gave up on this call: its next step never starts
            raise _Abandoned
        self.what = what


class _Abandoned(BaseException):
    """Ends a job the caller stopped waiting for."""


class TimedOut(Exception):
    pass


class Worker:
    """Runs code on a daemon thread, so a per-call timeout can give up on a hung tool or hook.

    Python cannot kill a thread; a daemon thread at least never keeps the interpreter alive.
    Without a timeout, code runs inline (no thread hop). Either way the outcome is
    ``(True, value)`` or ``(False, exception)``: what the code raised never mixes with what
    happens to the caller while it waits (the user's Ctrl-C).
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], list[Any], threading.Event]]
        self._jobs = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def run(self, job: Callable[[], Any], timeout: float | None) -> tuple[bool, Any]:
        if timeout is None:
            try:
                return True, job()
            except BaseException as exc:  # judged by the caller
                return False, exc
        if timeout <= 0:
            raise TimedOut
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._serve, daemon=True, name="sandboxverify-tool"
            )
            self._thread.start()
        box: list[Any] = []
        done = threading.Event()
        # the caller's context variables travel with the job, as if it ran inline
        self._jobs.put((functools.partial(contextvars.copy_context().run, job), box, done))
        if not done.wait(timeout):
            raise TimedOut
        return box[0], box[1]

    def _serve(self) -> None:
        while True:
            job, box, done = self._jobs.get()
            try:
                box.extend((True, job()))
            except BaseException as exc:  # handed back to the caller's thread
                box.extend((False, exc))
            done.set()
