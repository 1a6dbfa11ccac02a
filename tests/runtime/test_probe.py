"""The probe's ``imports`` action sends discovery first, down a pipe the package never holds."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from sandboxverify.runtime import PROTOCOL, _probe

HEAD = {"protocol": PROTOCOL, "nonce": "the request's", "action": "imports", "python": "3"}


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    for descriptor in (read, write):
        try:
            os.close(descriptor)
        except OSError:
            continue


def _sent(read: int) -> bytes:
    data = b""
    while chunk := os.read(read, 1 << 16):
        data += chunk
    return data


def test_discovery_is_one_line_with_the_early_nonce_and_the_descriptor_is_closed(
    pipe: tuple[int, int],
) -> None:
    read, write = pipe
    early = {"fd": write, "nonce": "early", "dist": "pytest", "groups": ["pytest11"]}

    _probe.send_early(early, HEAD)

    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(write)  # closed before anything of the package is imported
    line, newline, rest = _sent(read).partition(b"\n")
    assert (newline, rest) == (b"\n", b"")
    sent = json.loads(line)
    assert (sent["nonce"], sent["action"], sent["protocol"]) == ("early", "discover", PROTOCOL)
    assert sent["ok"] is True
    assert sent["dist"]["name"] == "pytest"
    assert sent["sys_path"] == json.loads(json.dumps(__import__("sys").path))


def test_a_discovery_that_raises_sends_nothing_and_still_closes(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    read, write = pipe

    def broken(request: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("metadata unreadable")

    monkeypatch.setattr(_probe, "discover", broken)
    _probe.send_early({"fd": write, "nonce": "early", "dist": "x", "groups": []}, HEAD)

    assert _sent(read) == b""  # the host asks for discovery on its own, and hears why


def test_a_host_that_stopped_reading_costs_the_import_run_nothing(pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.close(read)

    _probe.send_early({"fd": write, "nonce": "n", "dist": "pytest", "groups": []}, HEAD)

    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(write)
