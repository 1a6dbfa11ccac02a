"""A fresh session keyring for every process that runs package code (Linux).

The kernel's key store hands a process the session keyring of whoever started it, across
``execve`` and into new user namespaces alike (bubblewrap's ``--new-session`` is a terminal
session, not a keyring one): a check started from a login or a CI job's shell would let package
code read and add the keys of that session. Credentials are a thread's own, so the process is
started from a short-lived thread that has first joined a new, empty, anonymous session keyring
(``KEYCTL_JOIN_SESSION_KEYRING`` with no name): the process holds that one, and sandboxverify's
own threads keep theirs. One keyring per process, gone with it. Where the kernel refuses
(``keyctl`` filtered, as in Docker's default profile, or no key support) the process starts all
the same: there is no keyring to read there either.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Hashable
from typing import Any, Callable, TypeVar

from sandboxverify.sandbox._seccomp import native_arch

_KEYCTL_JOIN_SESSION_KEYRING = 1

T = TypeVar("T", bound=Hashable)


def in_fresh_keyring(start: Callable[[], T]) -> T:
    """``start()``, run on a thread that joined a new session keyring: a process it starts
    holds that keyring. The thread stays until :func:`ended` is told the process has ended: a
    process is told its parent died when the *thread* that started it ends
    (``PR_SET_PDEATHSIG``: bubblewrap's ``--die-with-parent`` would kill the sandbox at once).
    Where there is no ``keyctl`` to call, ``start()`` runs here."""
    join = _joiner()
    if join is None:
        return start()
    outcome: dict[str, Any] = {}
    started, done = threading.Event(), threading.Event()

    def run() -> None:
        join()
        try:
            outcome["value"] = start()
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc
            return
        finally:
            started.set()
        done.wait()

    threading.Thread(target=run, name="sandboxverify-fresh-keyring", daemon=True).start()
    started.wait()
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    with _waiting_lock:
        _waiting[value] = done
    return value


def ended(started: Hashable) -> None:
    """What :func:`in_fresh_keyring` started has ended: the thread that started it may end."""
    with _waiting_lock:
        done = _waiting.pop(started, None)
    if done is not None:
        done.set()


#: the threads that started a running process, each waiting to be told it has ended
_waiting: dict[Hashable, threading.Event] = {}
_waiting_lock = threading.Lock()


@functools.cache
def _joiner() -> Callable[[], None] | None:
    """What joins a new session keyring on the calling thread (``ctypes`` is loaded when first
    needed), or ``None`` on a machine without a system call table."""
    arch = native_arch()
    if arch is None:
        return None
    import ctypes  # noqa: PLC0415 - only where there is a keyring to leave

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    number = arch.numbers["keyctl"]

    def join() -> None:
        # a refusal leaves the thread's keyring as it is: where keyctl is refused (EPERM,
        # ENOSYS) there is nothing to read, and where it works but the user's key quota is
        # spent (EDQUOT) the system call filter, which every machine with a table gets, still
        # refuses package code every keyctl
        syscall(ctypes.c_long(number), ctypes.c_long(_KEYCTL_JOIN_SESSION_KEYRING), None)

    return join
