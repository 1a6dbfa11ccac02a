"""Bounds on what a process running package code makes sandboxverify keep or read.

- **Output**: a command's stdout and stderr reach its log through a pipe of ours, never a file it
  holds. The log keeps the first and the last :data:`LOG_END_BYTES` of it (what failed is at
  the end, what started it at the beginning) and says how much lies between; a command that
  prints more than :data:`OUTPUT_BYTES` in all is stopped, and its outcome says so. 300 MiB on
  stdout costs the host 2 MiB of disk.
- **Results** and the other files the runtime leaves for the host (progress, traces): read only
  when they are a regular file (never through a link, never a FIFO that would block), of at most
  :data:`RESULT_BYTES`, nested at most :data:`RESULT_DEPTH` deep. Past a bound,
  :class:`BoundExceeded` (a ``ValueError``) says which.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import select
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

_MIB = 1 << 20
#: what one command may print, stdout and stderr together, before it is stopped
OUTPUT_BYTES = 64 * _MIB
#: what a log keeps of its beginning, and of its end
LOG_END_BYTES = 1 * _MIB
#: the largest result (or progress, or trace) file read
RESULT_BYTES = 64 * _MIB
#: how deeply a result's arrays and objects may nest
RESULT_DEPTH = 100
_CHUNK = 1 << 16
_SLICE_SECONDS = 0.05


class BoundExceeded(ValueError):
    """A file left by package code is past a bound; the message says which."""


def describe_output_bound() -> str:
    return f"printed more than {OUTPUT_BYTES // _MIB} MiB (the bound on a command's output)"


class OutputLog:
    """A command's output on its way to its log file. Hand :attr:`write_end` to the process
    (its stdout and stderr), then call :meth:`started`; once it has ended, :meth:`close`."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("wb")
        self._read_end, self.write_end = os.pipe()
        self.printed = 0
        #: it printed more than :data:`OUTPUT_BYTES`, and was stopped
        self.exceeded = False
        self._head = 0
        self._tail: collections.deque[bytes] = collections.deque()
        self._tail_bytes = 0
        self._dropped = 0
        self._deadline: float | None = None
        self._pump: threading.Thread | None = None
        self._stopping: threading.Thread | None = None
        self._on_exceeded: Callable[[], None] = lambda: None

    def write(self, data: bytes) -> int:
        """A line of ours (it could not start), straight into the log."""
        return self._file.write(data)

    def flush(self) -> None:
        self._file.flush()

    def started(self, on_exceeded: Callable[[], None]) -> None:
        """The process holds the write end now: read what it prints. ``on_exceeded`` stops it
        (it runs on a thread of its own, while its output is still drained)."""
        os.close(self.write_end)
        self._on_exceeded = on_exceeded
        self._pump = threading.Thread(target=self._read, name="sandboxverify-output", daemon=True)
        self._pump.start()

    def close(self, within: float) -> None:
        """The process has ended: what it left in the pipe is read, for ``within`` seconds at
        most (a process of its that escaped and still holds the pipe does not hold us), and
        the log is written and closed."""
        if self._pump is None:  # it never started
            with contextlib.suppress(OSError):
                os.close(self.write_end)
            os.close(self._read_end)
            self._file.close()
            return
        self._deadline = time.monotonic() + within
        self._pump.join()
        if self._stopping is not None:
            self._stopping.join()

    def _read(self) -> None:
        try:
            while self._deadline is None or time.monotonic() < self._deadline:
                if sys.platform != "win32":
                    ready, _, _ = select.select([self._read_end], [], [], _SLICE_SECONDS)
                    if not ready:
                        continue
                chunk = os.read(self._read_end, _CHUNK)
                if not chunk:
                    break
                self._keep(chunk)
        finally:
            os.close(self._read_end)
            self._write_tail()
            self._file.close()

    def _keep(self, chunk: bytes) -> None:
        self.printed += len(chunk)
        if self.printed > OUTPUT_BYTES and not self.exceeded:
            self.exceeded = True
            self._stopping = threading.Thread(target=self._on_exceeded, daemon=True)
            self._stopping.start()
        room = LOG_END_BYTES - self._head
        if room > 0:
            self._file.write(chunk[:room])
            self._head += min(room, len(chunk))
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail.append(chunk)
        self._tail_bytes += len(chunk)
        while self._tail_bytes - len(self._tail[0]) >= LOG_END_BYTES:
            first = self._tail.popleft()
            self._tail_bytes -= len(first)
            self._dropped += len(first)

    def _write_tail(self) -> None:
        tail = b"".join(self._tail)
        extra = max(0, len(tail) - LOG_END_BYTES)
        self._dropped += extra
        if self._dropped:
            self._file.write(
                f"\n[... {self._dropped} bytes of output not kept: a log keeps the first and the "
                f"last {LOG_END_BYTES // _MIB} MiB ...]\n".encode()
            )
        self._file.write(tail[extra:])


def read_bounded(path: Path, limit: int = RESULT_BYTES) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes: never through a link,
    never waiting on a FIFO. ``OSError`` when it is not there; :class:`BoundExceeded` past a
    bound."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BoundExceeded("it is not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise BoundExceeded(f"it is larger than {limit // _MIB} MiB (the bound on a result)")
    return data


def loads_bounded(data: bytes, depth: int = RESULT_DEPTH) -> Any:
    """``data`` as JSON (UTF-8), nested at most ``depth`` deep: ``ValueError`` when it is not
    JSON, :class:`BoundExceeded` when it nests deeper."""
    try:
        value = json.loads(data.decode("utf-8"))
    except RecursionError:
        value = None
    else:
        if not _deeper_than(value, depth):
            return value
    raise BoundExceeded(f"it nests deeper than {depth} levels (the bound on a result)")


def read_json(path: Path) -> Any:
    """The JSON document in ``path``, within every bound (:func:`read_bounded`,
    :func:`loads_bounded`)."""
    return loads_bounded(read_bounded(path))


def _deeper_than(value: Any, depth: int) -> bool:
    """Whether arrays and objects in ``value`` nest deeper than ``depth`` (walked without
    recursion)."""
    todo = [(value, 1)] if isinstance(value, (dict, list)) else []
    while todo:
        item, level = todo.pop()
        if level > depth:
            return True
        children = item.values() if isinstance(item, dict) else item
        todo.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return False
