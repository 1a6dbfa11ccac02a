"""Running the stdlib-only runtime inside a sandbox and reading its side-channel result.

Each request goes in on stdin with a fresh nonce; the result comes back in a file the plugin code
never learns the name of. A result only counts when the process exited 0, the file parses, the
protocol matches and the nonce is ours: a plugin printing "ok" and exiting cannot pass.
The probe, the imports stage and the smoke stage all talk to the runtime this way.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sandboxverify._frozen import frozen
from sandboxverify.report import Failure
from sandboxverify.runtime import PROTOCOL
from sandboxverify.sandbox import (
    BoundExceeded,
    Command,
    Confined,
    Outcome,
    RunContext,
    Sandbox,
    loads_bounded,
    plugin_env,
    read_json,
)

#: The runtime is imported from its private copy before anything of the sandbox's
#: site-packages can run or be found (``-S``: no site-packages, no ``.pth`` file yet); a wheel
#: shipping its own ``sandboxverify`` cannot stand in for it. ``main`` then opens the site
#: (``_probe.open_site``): the runtime's directory ends up last on ``sys.path``.
_BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from sandboxverify.runtime._probe import main; del sys.path[0]; main(sys.argv[1])"
)


def runtime_timeout(timeout: float) -> float:
    """How long the runtime itself waits (on a server, on a smoke run) before reporting: a
    little less than ``timeout``, so its report, with a server's stderr, arrives before the
    process is killed at ``timeout``."""
    return max(timeout * 0.5, min(timeout * 0.9, timeout - 1.0))


class ProbeError(Exception):
    """The probe produced no trustworthy result."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def confined(
    sandbox: Sandbox,
    ctx: RunContext,
    *,
    writable: Sequence[Path] = (),
    read_only: Sequence[Path] = (),
) -> Confined:
    """How one process running plugin code starts: see :meth:`Sandbox.confined`; the runtime
    copy is read-only too."""
    return sandbox.confined(
        ctx.isolation, read_only=(ctx.runtime_copy, *read_only), writable=writable
    )


def result_dir(sandbox: Sandbox, label: str) -> Path:
    """The directory a runtime request may write to (its result, progress, trace): one per
    request, and nothing else of the sandbox's is writable from inside the OS sandbox."""
    path = sandbox.paths.root / "results" / label
    path.mkdir(parents=True, exist_ok=True)
    return path


#: what a timeout may be in a sandbox without a network
_OFFLINE = (
    "the sandbox has no network, so code that waits for one (a download, a tool that fetches "
    "what it lacks, npx or pip run from the plugin) hangs here where its users' does not: if "
    "it needs one, --network lets it reach the host's"
)


@frozen
class Subject:
    """Who a runtime request is about, for the failure messages."""

    text: str
    plugin: str | None = None
    timeout_hint: str = (
        "a plugin must not block at import or in setup(); if it is only slow, raise --timeout"
    )
    crash_hint: str = (
        "plugin code must not exit the interpreter or kill it while loading; "
        "the last output is below"
    )


#: the longest early result read (a discovery lists every installed distribution)
_EARLY_BYTES = 8 * 1024 * 1024
#: early results travel through a pipe waited on with ``poll``: POSIX only
EARLY_RESULTS = os.name == "posix"


class EarlyResult:
    """A second result of one runtime request, sent before the request runs any code of the
    package: one JSON line down a pipe the process inherits and closes first (``send_early`` in
    ``runtime._probe``). Another thread reads it while the process goes on (:meth:`receive`);
    it counts only whole and carrying its own nonce. Saves a process of its own (~30 ms of a
    check on two cores). Only where :data:`EARLY_RESULTS`."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.nonce = secrets.token_hex(16)
        read, self.fd = os.pipe()
        self.request = {**request, "fd": self.fd, "nonce": self.nonce}
        self._open = {"read": read, "write": self.fd}
        self._lock = threading.Lock()

    def ended(self) -> None:
        """The process that sends it ended, or never started: the pipe's end can be read."""
        self._close("write")

    def receive(self, timeout: float) -> dict[str, Any] | None:
        """The result, or ``None`` when none came whole within ``timeout`` (the process ended
        or hung before it was sent, it was too long, or its nonce or protocol is not ours)."""
        deadline = time.monotonic() + timeout
        data = b""
        try:
            read = self._open.get("read")
            # poll, not select: a check among many in one process may hold descriptors past
            # select's 1024
            waiting = select.poll()
            if read is not None:
                waiting.register(read, select.POLLIN)
            while read is not None and b"\n" not in data and len(data) <= _EARLY_BYTES:
                left = deadline - time.monotonic()
                if left <= 0 or not waiting.poll(left * 1000):
                    return None
                chunk = os.read(read, 1 << 16)
                if not chunk:
                    break
                data += chunk
        finally:
            self._close("read")
        line, newline, _ = data.partition(b"\n")
        try:
            result = loads_bounded(line) if newline and len(line) <= _EARLY_BYTES else None
        except ValueError:  # BoundExceeded included
            return None
        if not isinstance(result, dict) or result.get("nonce") != self.nonce:
            return None
        return result if result.get("protocol") == PROTOCOL else None

    def close(self) -> None:
        self._close("read")
        self._close("write")

    def _close(self, end: str) -> None:
        with self._lock:
            descriptor = self._open.pop(end, None)
        if descriptor is not None:
            os.close(descriptor)


def request_runtime(
    sandbox: Sandbox,
    request: dict[str, Any],
    *,
    label: str,
    ctx: RunContext,
    subject: Subject,
    read_only: Sequence[Path] = (),
    early: EarlyResult | None = None,
) -> dict[str, Any]:
    """Run one runtime action in the sandbox; only a verified result comes back.

    ``read_only``: more the action needs to read (a playbook script); ``early``: a result the
    action sends first, before any code of the package runs."""
    try:
        return _request(
            sandbox, request, label, ctx=ctx, subject=subject, read_only=read_only, early=early
        )
    finally:
        if early is not None:  # the process ended, or never started: the pipe ends
            early.ended()


def _request(
    sandbox: Sandbox,
    request: dict[str, Any],
    label: str,
    *,
    ctx: RunContext,
    subject: Subject,
    read_only: Sequence[Path],
    early: EarlyResult | None,
) -> dict[str, Any]:
    nonce = secrets.token_hex(16)
    outputs = result_dir(sandbox, label)
    result_path = outputs / "result.json"
    result_path.unlink(missing_ok=True)
    payload = {**request, "protocol": PROTOCOL, "nonce": nonce, "result": str(result_path)}
    if early is not None:
        payload["early"] = early.request
    command = Command(
        argv=[str(sandbox.python), "-I", "-S", "-c", _BOOTSTRAP, str(ctx.runtime_copy)],
        env=plugin_env(sandbox.bin, sandbox.paths.home, sandbox.paths.tmp, ctx.pass_env),
        cwd=sandbox.paths.work,
        timeout=ctx.plugin_timeout,
        log_path=sandbox.paths.logs / f"{label}.log",
        label=label,
        stdin=json.dumps(payload).encode(),
        launcher=confined(sandbox, ctx, writable=[outputs], read_only=read_only),
        inherit=(early.fd,) if early is not None else (),
    )
    outcome = ctx.run(command)
    if outcome.timed_out and ctx.isolation.network == "none":
        subject = replace(subject, timeout_hint=f"{subject.timeout_hint}; {_OFFLINE}")
    return _read_result(outcome, result_path, nonce, sandbox, subject)


def _read_result(
    outcome: Outcome, path: Path, nonce: str, sandbox: Sandbox, subject: Subject
) -> dict[str, Any]:
    version = sandbox.interpreter.version
    if outcome.timed_out:
        raise ProbeError(
            Failure(
                "timeout",
                f"{subject.text} did not finish within {outcome.command.timeout:g}s and was "
                "killed" + (" (it hangs while importing or in setup)" if subject.plugin else ""),
                python=version,
                plugin=subject.plugin,
                hint=subject.timeout_hint,
                details=outcome.tail,
            )
        )
    if outcome.output_exceeded:
        raise ProbeError(_past_a_bound(subject, version, outcome, outcome.describe()))
    problem: str | None = None
    data: Any = None
    if outcome.returncode != 0:
        problem = f"the interpreter {outcome.describe()}"
    elif not path.is_file():
        problem = "the interpreter exited without writing a result (os._exit or a hard crash)"
    else:
        try:
            data = read_json(path)
        except BoundExceeded as exc:
            raise ProbeError(
                _past_a_bound(subject, version, outcome, f"its result: {exc}")
            ) from None
        except (OSError, ValueError) as exc:
            problem = f"its result is unreadable: {exc}"
        else:
            if not isinstance(data, dict) or data.get("nonce") != nonce:
                problem = "its result does not carry this run's nonce (forged or stale)"
            elif data.get("protocol") != PROTOCOL:
                problem = (
                    f"the runtime speaks protocol {data.get('protocol')!r}, expected "
                    f"{PROTOCOL} (another sandboxverify is installed in the sandbox?)"
                )
    if problem is not None:
        raise ProbeError(
            Failure(
                "probe_crashed",
                f"{subject.text} crashed: {problem}",
                python=version,
                plugin=subject.plugin,
                hint=subject.crash_hint,
                details=outcome.tail,
            )
        )
    assert isinstance(data, dict)
    return data


def _past_a_bound(subject: Subject, version: str, outcome: Outcome, what: str) -> Failure:
    """A request whose process printed too much, or left a result too large or too deep."""
    return Failure(
        "limit_exceeded",
        f"{subject.text} went past a bound: {what}",
        python=version,
        plugin=subject.plugin,
        hint="plugin code must not flood its output or its result; the last output is below",
        details=outcome.tail,
    )


def payload(result: dict[str, Any]) -> dict[str, Any]:
    """What an action returned, without the envelope of the side channel."""
    return {
        key: value
        for key, value in result.items()
        if key not in ("protocol", "nonce", "action", "python")
    }


def safe_label(name: str) -> str:
    """``name`` as part of a file name (logs, results)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60]
