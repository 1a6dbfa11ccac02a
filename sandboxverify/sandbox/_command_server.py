"""A command asked one request at a time: a JSON line in on its stdin, a JSON line back on its
stdout, until its stdin is closed.

For a process worth keeping between requests (the PEP 517 hook runner, which has imported the
build backend once for both steps). It is run like every other command (``_subprocess``): its
own process group, its output (stderr) in a log, each answer awaited for at most the command's
timeout, everything it started stopped when it ends or an interrupt stops the check. The
outcome, with the log's tail, comes when it is closed, and the check's runner hears of it
(``_context``).
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import threading
import time
from typing import IO, Any

from sandboxverify._errors import Interrupted
from sandboxverify.report import redact
from sandboxverify.sandbox._bounds import OutputLog, loads_bounded
from sandboxverify.sandbox._context import RunContext
from sandboxverify.sandbox._processes import GRACE_SECONDS, stop
from sandboxverify.sandbox._subprocess import (
    SLICE_SECONDS,
    Command,
    Outcome,
    read_tail,
    release,
    shutting_down,
    start,
)

#: the longest answer read, and how many unread ones are kept, before it counts as broken
_MAX_ANSWER_BYTES = 4 * 1024 * 1024
_MAX_UNREAD = 4


class CommandServer:
    """``ask`` as often as needed, then ``close``; a command that cannot answer (it ended,
    timed out or said something that is not JSON) is stopped, and every later ``ask`` is
    ``None``. ``ctx``: the context of the step it serves, whose runner hears how it ended."""

    def __init__(self, command: Command, ctx: RunContext) -> None:
        self.command = command
        self.ctx = ctx
        self.timed_out = False
        self._outcome: Outcome | None = None
        self._started = time.perf_counter()
        self._log = OutputLog(command.log_path)
        self._answers: queue.Queue[bytes | None] = queue.Queue()
        self._proc: subprocess.Popen[bytes] | None = None
        try:
            self._proc = start(
                command,
                self._log,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log.write_end,
            )
        except OSError:  # said in the log; every answer is None
            self._log.close(0)
            return
        except BaseException:
            self._log.close(0)
            raise
        proc = self._proc
        self._log.started(lambda: stop(proc))
        assert self._proc.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(self._proc.stdout,), daemon=True)
        self._reader.start()

    def ask(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The answer to ``request``, or ``None`` when there is none to trust."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.poll() is not None:
            return None
        try:
            proc.stdin.write(json.dumps(request).encode() + b"\n")
            proc.stdin.flush()
        except OSError:  # it ended before it read the request
            return None
        line = self._answer(time.monotonic() + self.command.timeout)
        try:
            answer = loads_bounded(line) if line is not None else None
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            stop(proc)
            return None
        return answer

    def close(self) -> Outcome:
        """End it (its input closes, then it has a moment to exit before it is stopped) and
        say how it went. Closing twice gives the same outcome."""
        if self._outcome is not None:
            return self._outcome
        proc = self._proc
        if proc is not None:
            try:
                if proc.stdin is not None:
                    with contextlib.suppress(OSError):  # it ended with a request unread
                        proc.stdin.close()
                self._wait(proc, time.monotonic() + GRACE_SECONDS)
            finally:
                stop(proc)
                release(proc)
                self._reader.join(GRACE_SECONDS)  # its stdout ended with it
                if proc.stdout is not None and not self._reader.is_alive():
                    proc.stdout.close()
                self._log.close(GRACE_SECONDS)
        self._outcome = Outcome(
            self.command,
            returncode=proc.returncode if proc is not None else 127,
            timed_out=self.timed_out,
            seconds=time.perf_counter() - self._started,
            tail=redact(read_tail(self.command.log_path)),
            output_exceeded=self._log.exceeded,
        )
        self.ctx.ended(self._outcome)
        return self._outcome

    def _answer(self, deadline: float) -> bytes | None:
        """The next line it writes; in slices, so the main thread still handles signals."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.timed_out = True
                return None
            try:
                return self._answers.get(timeout=min(left, SLICE_SECONDS))
            except queue.Empty:
                if shutting_down():
                    raise Interrupted("interrupted") from None

    def _wait(self, proc: subprocess.Popen[bytes], deadline: float) -> None:
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                proc.wait(timeout=SLICE_SECONDS)
            except subprocess.TimeoutExpired:
                continue

    def _read(self, stream: IO[bytes]) -> None:
        """Its answers, as it writes them; one that never ends, or more of them than it was
        asked for, is not an answer (a flood stops here, not in memory)."""
        while True:
            line = stream.readline(_MAX_ANSWER_BYTES)
            if not line or not line.endswith(b"\n") or self._answers.qsize() >= _MAX_UNREAD:
                break
            self._answers.put(line)
        self._answers.put(None)
