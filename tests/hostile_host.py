"""What the attack tests plant on the host for package code to reach for: services on the host's
loopback and on an abstract unix socket, and a key in the session keyring of whoever runs the
check."""

from __future__ import annotations

import ctypes
import os
import secrets
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Callable, TypeVar

import pytest

from sandboxverify.sandbox._seccomp import native_arch

_KEY_SPEC_SESSION_KEYRING = -3
#: what every host service answers
ANSWER = "host"
T = TypeVar("T")


@contextmanager
def host_services() -> Iterator[tuple[int, str]]:
    """A TCP service on 127.0.0.1 and one on an abstract unix socket, both answering ``host``."""
    tcp = socket.create_server(("127.0.0.1", 0))
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = f"svtest-{secrets.token_hex(6)}"
    abstract.bind("\0" + name)
    abstract.listen()

    def answer(server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            with client:
                client.sendall(ANSWER.encode())

    for server in (tcp, abstract):
        threading.Thread(target=answer, args=(server,), daemon=True).start()
    try:
        yield tcp.getsockname()[1], name
    finally:
        tcp.close()
        abstract.close()


def holding_a_key(description: str, call: Callable[[], T], secret: str = "svtest-secret") -> T:
    """``call()`` on a thread whose session keyring (a fresh one, so the suite's own is left
    alone) holds a key ``description`` whose payload is ``secret``: as a check started from a
    login shell would. A machine that refuses keyrings skips the test: nothing to read there."""
    arch = native_arch()
    assert arch is not None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    result: dict[str, Any] = {}

    def planted() -> None:
        libc.syscall(ctypes.c_long(arch.numbers["keyctl"]), ctypes.c_long(1), None)
        added = libc.syscall(
            ctypes.c_long(arch.numbers["add_key"]),
            b"user",
            description.encode(),
            secret.encode(),
            ctypes.c_long(len(secret.encode())),
            ctypes.c_long(_KEY_SPEC_SESSION_KEYRING),
        )
        if added < 0:
            result["error"] = os.strerror(ctypes.get_errno())
            return
        result["value"] = call()

    thread = threading.Thread(target=planted)
    thread.start()
    thread.join()
    if "error" in result:
        pytest.skip(f"no keyring to plant a key in here: {result['error']}")
    value: T = result["value"]
    return value
