"""JSON lines between two processes: the judge of a session and the process running plugin code.

One message is one JSON object on one line. Reading happens on a thread of its own, so the
reader can wait with a timeout on every platform (``select`` does not work on pipes everywhere)
and a writer on the other side never blocks on a full pipe while this side waits. The end of
the stream (the other process gone) is ``None``; anything that is not a JSON object is
:class:`ChannelBroken`: a process that writes nonsense on the channel has broken it.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
from typing import Any, BinaryIO

#: what a reader thread hands over at the end of the stream
END: dict[str, Any] = {}
#: messages of several channels in one queue, each as ``(tag, message | error | END)``
Merged = queue.SimpleQueue  # of tuple[Any, dict[str, Any] | BaseException]


class ChannelTimeout(Exception):
    """No message arrived within the time given."""


class ChannelBroken(Exception):
    """The other side wrote something that is not a message, or the pipe failed."""


class Channel:
    """Messages out on ``writer``, in from ``reader`` (binary files over pipe ends)."""

    def __init__(
        self,
        reader: BinaryIO,
        writer: BinaryIO,
        *,
        name: str = "channel",
        merged: queue.SimpleQueue[tuple[Any, Any]] | None = None,
        tag: Any = None,
    ) -> None:
        """``merged``: put what arrives there, tagged with ``tag``, for a reader of several
        channels at once (``receive`` is then not used)."""
        self._writer = writer
        self._lock = threading.Lock()
        self._inbox: queue.SimpleQueue[dict[str, Any] | BaseException] = queue.SimpleQueue()
        self._merged = merged
        self._tag = tag
        self.closed = False
        self._thread = threading.Thread(
            target=self._read, args=(reader,), daemon=True, name=f"sandboxverify-{name}"
        )
        self._thread.start()

    @classmethod
    def over_fds(cls, read_fd: int, write_fd: int, **options: Any) -> Channel:
        return cls(os.fdopen(read_fd, "rb"), os.fdopen(write_fd, "wb"), **options)

    def send(self, message: dict[str, Any]) -> None:
        """Write one message; a closed pipe (the other side gone) raises ``ChannelBroken``."""
        line = json.dumps(message, ensure_ascii=False, default=repr).encode("utf-8") + b"\n"
        with self._lock:
            try:
                self._writer.write(line)
                self._writer.flush()
            except (OSError, ValueError) as exc:
                raise ChannelBroken(f"cannot write to the other process: {exc}") from None

    def receive(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next message; ``None`` at the end of the stream. ``timeout`` in seconds."""
        if self.closed:
            return None
        try:
            if timeout is not None and timeout <= 0:
                item = self._inbox.get_nowait()
            else:
                item = self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise ChannelTimeout from None
        if isinstance(item, BaseException):
            self.closed = True
            raise item
        if item is END:
            self.closed = True
            return None
        return item

    def close(self) -> None:
        """Stop writing: the other side reads the end of its stream."""
        with self._lock, contextlib.suppress(OSError):
            self._writer.close()

    def _put(self, item: dict[str, Any] | BaseException) -> None:
        if self._merged is not None:
            self._merged.put((self._tag, item))
        else:
            self._inbox.put(item)

    def _read(self, reader: BinaryIO) -> None:
        try:
            while True:
                line = reader.readline()
                if not line:
                    break
                try:
                    message = json.loads(line)
                except ValueError:
                    message = None
                if not isinstance(message, dict):
                    self._put(ChannelBroken(f"not a message: {line[:200]!r}"))
                    return
                self._put(message)
        except (OSError, ValueError) as exc:
            self._put(ChannelBroken(f"cannot read from the other process: {exc}"))
            return
        finally:
            with contextlib.suppress(OSError):
                reader.close()
        self._put(END)
