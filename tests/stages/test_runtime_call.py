"""An early result counts only whole, with its own nonce and our protocol."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxverify.runtime import PROTOCOL
from sandboxverify.stages._runtime_call import EarlyResult


@pytest.fixture
def early() -> Iterator[EarlyResult]:
    made = EarlyResult({"dist": "demo", "groups": ["g"]})
    yield made
    made.close()


def _send(early: EarlyResult, data: bytes) -> None:
    os.write(early.fd, data)
    early.ended()


def test_the_request_names_the_descriptor_and_the_nonce(early: EarlyResult) -> None:
    assert early.request == {"dist": "demo", "groups": ["g"], "fd": early.fd, "nonce": early.nonce}
    assert not os.get_inheritable(early.fd)  # only the process it is handed to inherits it


def test_a_whole_line_with_its_nonce_is_the_result(early: EarlyResult) -> None:
    sent = {"protocol": PROTOCOL, "nonce": early.nonce, "ok": True}
    _send(early, json.dumps(sent).encode() + b"\n" + b"what the package printed later")

    assert early.receive(5) == sent


@pytest.mark.parametrize(
    "line",
    [
        b'{"protocol": PROTOCOL, "nonce": NONCE, "ok": true}',  # cut short: no end of line
        b'{"protocol": PROTOCOL, "nonce": "forged", "ok": true}\n',
        b'{"protocol": 0, "nonce": NONCE, "ok": true}\n',
        b'["protocol", "nonce"]\n',
        b"not json\n",
        b"",
    ],
    ids=["partial", "forged", "protocol", "not-an-object", "not-json", "nothing"],
)
def test_anything_else_is_no_result(early: EarlyResult, line: bytes) -> None:
    text = line.replace(b"PROTOCOL", str(PROTOCOL).encode())
    _send(early, text.replace(b"NONCE", json.dumps(early.nonce).encode()))

    assert early.receive(5) is None


def test_nothing_sent_by_a_process_still_running_is_no_result(early: EarlyResult) -> None:
    assert early.receive(0.2) is None  # the writer is still open: the timeout ends the wait


def test_a_result_sent_while_waiting_arrives(early: EarlyResult) -> None:
    sent = {"protocol": PROTOCOL, "nonce": early.nonce}
    later = threading.Timer(0.1, _send, (early, json.dumps(sent).encode() + b"\n"))
    later.start()
    try:
        assert early.receive(30) == sent
    finally:
        later.join()


def test_closing_twice_closes_each_end_once(early: EarlyResult) -> None:
    early.ended()
    early.close()
    early.close()
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(early.fd)


def test_a_result_arrives_whatever_the_descriptors_number(tmp_path: Path) -> None:
    """A check among many in one process (a survey) may hold more than select's 1024."""
    held = [os.open(tmp_path, os.O_RDONLY) for _ in range(1100)]
    try:
        early = EarlyResult({"dist": "demo", "groups": []})
        try:
            assert early.fd > 1024
            sent = {"protocol": PROTOCOL, "nonce": early.nonce}
            _send(early, json.dumps(sent).encode() + b"\n")
            assert early.receive(5) == sent
        finally:
            early.close()
    finally:
        for descriptor in held:
            os.close(descriptor)
