"""What the harness does about code it runs on a session's behalf (tools, mocks, hooks, callbacks).

Such code may try to end the run with it: ``sys.exit()`` raises ``SystemExit``, a stray
``KeyboardInterrupt`` reads as the user's Ctrl-C, and ``os._exit()`` ends the interpreter at once,
without a word, so a run would "pass" with exit 0 and no report. While a session runs,
:func:`watching_exits` makes ``os._exit`` raise :class:`HardExit` instead (in this process only:
a forked child still exits for real), also where a module bound it early
(``from os import _exit``), so every one of them is an exception the harness turns into a failure
of the action that raised it (``aborted``); :func:`ending` says what the code did.

Code may also be ``async``: :func:`settle` awaits what it returns, with ``asyncio.run`` as llm
does for its async tools (on a thread of its own when an event loop already runs in this one).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any, Callable, NoReturn


class HardExit(BaseException):
    """``os._exit(code)`` called while the harness was watching: raised instead of exiting."""

    def __init__(self, code: object) -> None:
        super().__init__(code)
        self.code = code


class _ExitWatch:
    """Who watches (a count: sessions nest, threads share it) and the real ``os._exit``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.watchers = 0
        self.real_exit: Callable[[int], NoReturn] = os._exit
        self.owner = os.getpid()
        #: module namespaces where ``_exit`` was bound by name, and under which names
        self.rebound: list[tuple[dict[str, Any], str]] = []
        #: one bound method, so that what was put in can be recognised when it is taken out
        self.raiser: Callable[[int], NoReturn] = self.raising_exit

    def rebind(self) -> None:
        """Every module global that is the real ``os._exit`` now raises: a plugin that wrote
        ``from os import _exit`` holds the function itself, not the ``os`` attribute."""
        for module in list(sys.modules.values()):
            namespace = getattr(module, "__dict__", None)
            if not isinstance(namespace, dict):
                continue
            for name, value in list(namespace.items()):
                if value is self.real_exit:
                    namespace[name] = self.raiser
                    self.rebound.append((namespace, name))

    def restore(self) -> None:
        for namespace, name in self.rebound:
            if namespace.get(name) is self.raiser:
                namespace[name] = self.real_exit
        self.rebound.clear()

    def raising_exit(self, code: int) -> NoReturn:
        if os.getpid() != self.owner:  # a forked child (multiprocessing): it must really end
            self.real_exit(code)
        raise HardExit(code)


_watch = _ExitWatch()


@contextlib.contextmanager
def watching_exits() -> Iterator[None]:
    """While inside, ``os._exit(code)`` raises :class:`HardExit`; nests, and threads share it."""
    with _watch.lock:
        if _watch.watchers == 0:
            _watch.real_exit, _watch.owner = os._exit, os.getpid()
            _watch.rebind()
        _watch.watchers += 1
    try:
        yield
    finally:
        with _watch.lock:
            _watch.watchers -= 1
            if _watch.watchers == 0:
                _watch.restore()


def ending(exc: BaseException) -> str:
    """What code that raised ``exc`` (not an ``Exception``) tried to do, for a failure message."""
    if isinstance(exc, HardExit):
        return f"called os._exit({exc.code!r})"
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})" if exc.code is not None else "called sys.exit()"
    text = str(exc)
    return f"raised {type(exc).__name__}" + (f": {text}" if text else "")


ABORT_HINT = (
    "code run during a session must never end the interpreter or raise BaseException; "
    "raise an Exception (or return an error) to report a problem"
)


def settle(value: Any) -> Any:
    """``value``, or what it resolves to if it is awaitable (an ``async def`` tool or callback)."""
    # cheaper than inspect.isawaitable (an ABC check), which this runs for every call
    if not (isinstance(value, types.CoroutineType) or hasattr(type(value), "__await__")):
        return value
    import asyncio  # noqa: PLC0415 - only sessions with async code pay for it

    async def wait() -> Any:
        return await value

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    # an event loop already runs in this thread (an async test calling run()): use another one
    box: list[Any] = []

    def run() -> None:
        try:
            box.append((True, asyncio.run(wait())))
        except BaseException as exc:  # handed back to the caller
            box.append((False, exc))

    thread = threading.Thread(target=run, name="sandboxverify-await", daemon=True)
    thread.start()
    thread.join()
    ok, result = box[0]
    if ok:
        return result
    raise result


def deferred(value: Any) -> str | None:
    """What ``value`` is if it stands for work that has not run (so a callback that returned it
    checked nothing), else None: a generator (a stray ``yield`` turns a function into one, and
    its body runs only when iterated), an async generator, a coroutine or awaitable nobody
    awaited, a lazy iterator (``map``, ``filter``, a generator expression), a future. Those are
    closed where they can be, so nothing of them runs later either."""
    if isinstance(value, types.GeneratorType):
        value.close()
        return "a generator (a `yield` makes it one: its body, assertions included, never ran)"
    if isinstance(value, types.AsyncGeneratorType):
        return "an async generator (a `yield` in an async def; its body never ran)"
    if isinstance(value, types.CoroutineType):
        value.close()
        return "a coroutine nobody awaited (its body never ran)"
    if hasattr(type(value), "__await__"):
        return f"an awaitable {type(value).__name__} nobody awaited"
    if hasattr(type(value), "__next__") or hasattr(type(value), "__anext__"):
        return f"a lazy iterator ({type(value).__name__}: what it would compute never ran)"
    if callable(getattr(value, "add_done_callback", None)) and callable(
        getattr(value, "done", None)
    ):
        return (
            f"a {type(value).__name__} (work that may not have finished, whose failure nobody sees)"
        )
    return None
