"""JSON-RPC 2.0 over a child process's stdin and stdout, one message per line (MCP's stdio).

A reader thread parses stdout lines and queues them; a second one keeps the tail of stderr. The
thread that waits for a message takes it from the queue, so whatever a message asks for (an
answer to a server's request) runs on that thread, never on a reader.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
from typing import IO, TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from typing import Final

#: the longest stdout line read as one message; longer is reported as garbage, not buffered
MAX_LINE = 64 * 1024 * 1024
#: how much of the server's stderr is kept (the tail) for failure details
STDERR_TAIL = 4000
_STDERR_KEEP = 4 * STDERR_TAIL  # bytes; decoding may merge several into one character


class Received:
    """One item from the server's stdout: a JSON-RPC message, a line that is not one, or EOF.

    A plain class, not a dataclass: an MCP server's load needs nothing else of ``dataclasses``
    (nor of the ``inspect`` it imports)."""

    def __init__(
        self,
        kind: Literal["message", "garbage", "eof"],
        message: dict[str, Any] | None = None,
        line: str = "",
    ) -> None:
        self.kind: Final = kind
        self.message: Final = message
        self.line: Final = line


def parse_line(raw: bytes) -> list[Received]:
    """One stdout line as JSON-RPC messages (a batch is an array of them)."""
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        return []
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        return [Received("garbage", line=text)]
    items = parsed if isinstance(parsed, list) and parsed else [parsed]
    if not all(is_jsonrpc(item) for item in items):
        return [Received("garbage", line=text)]
    return [Received("message", message=item) for item in items]


def is_jsonrpc(value: Any) -> bool:
    """A JSON-RPC 2.0 request, notification or response."""
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        return False
    if "method" in value:
        return isinstance(value["method"], str)
    return "id" in value and ("result" in value or "error" in value)


def describe_exit(returncode: int) -> str:
    """``exited with code 3`` or ``was killed by signal SIGKILL``."""
    if returncode >= 0:
        return f"exited with code {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = str(-returncode)
    return f"was killed by signal {name}"


class StdioConnection:
    """A started server process and the messages it writes; :meth:`close` ends it."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=os.getcwd(),
            env=dict(os.environ),
        )
        self._queue: queue.Queue[Received] = queue.Queue()
        self._stderr = bytearray()
        self._stderr_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = False
        self._close_lock = threading.Lock()
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        self._readers = [
            threading.Thread(target=self._read_stdout, args=(self.process.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(self.process.stderr,), daemon=True),
        ]
        for thread in self._readers:
            thread.start()

    # -- reader threads -------------------------------------------------------------------
    def _read_stdout(self, stream: IO[bytes]) -> None:
        try:
            while True:
                raw = stream.readline(MAX_LINE)
                if not raw:
                    break
                if len(raw) >= MAX_LINE and not raw.endswith(b"\n"):
                    line = raw[:200].decode("utf-8", errors="replace")
                    self._queue.put(Received("garbage", line=f"{line}... (over {MAX_LINE} bytes)"))
                    break
                for item in parse_line(raw):
                    self._queue.put(item)
        except (OSError, ValueError):  # the pipe was closed under us
            pass
        self._queue.put(Received("eof"))

    def _read_stderr(self, stream: IO[bytes]) -> None:
        try:
            while True:
                chunk = os.read(stream.fileno(), 65536)
                if not chunk:
                    return
                with self._stderr_lock:
                    self._stderr += chunk
                    del self._stderr[:-_STDERR_KEEP]
        except (OSError, ValueError):
            return

    # -- the waiting thread's side --------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        """Write one message; raises ``OSError`` (``BrokenPipeError``) if the server is gone."""
        data = json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"
        stdin = self.process.stdin
        if stdin is None or stdin.closed:
            raise BrokenPipeError("the server's stdin is closed")
        with self._write_lock:
            stdin.write(data)
            stdin.flush()

    def receive(self, timeout: float) -> Received | None:
        """The next item from stdout, or None when nothing came within ``timeout`` seconds."""
        try:
            return self._queue.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return None

    def stderr_tail(self, settle: float = 0.0) -> str:
        """The last :data:`STDERR_TAIL` characters of stderr; ``settle``: wait for the reader to
        finish (after the process exited) up to that many seconds."""
        if settle > 0:
            self._readers[1].join(settle)
        with self._stderr_lock:
            text = self._stderr.decode("utf-8", errors="replace")
        return text[-STDERR_TAIL:]

    def wait_exit(self, timeout: float) -> int | None:
        """The exit status, waiting up to ``timeout`` seconds; None if it is still running."""
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def close(self, grace: float = 2.0) -> None:
        """Close stdin, wait; terminate, wait; kill. Idempotent."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        process = self.process
        try:
            if process.stdin is not None:
                process.stdin.close()
        except OSError:
            pass
        if self.wait_exit(grace) is None:
            process.terminate()
            if self.wait_exit(grace) is None:
                process.kill()
                process.wait()
        for thread in self._readers:
            thread.join(grace)
        # a reader still blocked means a grandchild holds the pipe open; leave that stream be
        for thread, stream in zip(self._readers, (process.stdout, process.stderr)):
            if not thread.is_alive() and stream is not None:
                stream.close()
