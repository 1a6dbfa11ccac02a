"""Stage ``smoke``: a playbook run inside the sandbox after the probe.

The playbook is read and validated before anything is built (a malformed one is a usage error),
then runs in every sandbox through the same verified side channel as the probe. A failed run is
a ``smoke_failed`` failure carrying the harness diagnostic (code, turn, action, what happened).
"""

from __future__ import annotations

import shlex
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandboxverify._errors import UsageError
from sandboxverify.report import Failure, SmokeError, SmokeRecord
from sandboxverify.runtime import EntryPointRef
from sandboxverify.sandbox import RunContext, Sandbox
from sandboxverify.stages._runtime_call import (
    ProbeError,
    Subject,
    payload,
    request_runtime,
    result_dir,
    runtime_timeout,
)
from sandboxverify.stages.playbook import load_playbook


@dataclass(frozen=True)
class Playbook:
    path: Path
    spec: dict[str, Any] | None  # a declarative playbook, parsed and validated

    @property
    def name(self) -> str:
        return self.path.name


def load_smoke_playbook(path: str | Path) -> Playbook:
    playbook = Path(path)
    if playbook.suffix == ".toml":
        return Playbook(playbook, load_playbook(playbook))
    if playbook.suffix == ".py":
        if not playbook.is_file():
            raise UsageError(f"smoke playbook not found: {playbook}")
        return Playbook(playbook, None)
    raise UsageError(
        f"--smoke takes a .toml or .py playbook, got {playbook}",
        hint="see the README's 'Smoke playbooks' section",
    )


def run_smoke(
    sandbox: Sandbox,
    playbook: Playbook,
    *,
    dist: str,
    group: str,
    ctx: RunContext,
    keep_trace: bool,
    host: str = "native",
    server: EntryPointRef | None = None,
) -> tuple[SmokeRecord, Failure | None]:
    """The ``runs[].smoke`` record and, if the run failed, its failure."""
    started = time.perf_counter()
    request: dict[str, Any] = {
        "action": "smoke",
        "dist": dist,
        "group": group,
        "host": host,
        "timeout": runtime_timeout(ctx.plugin_timeout),
    }
    if server is not None:
        request["server"] = server.to_json()
    readable = _add_playbook(request, sandbox, playbook, ctx, keep_trace=keep_trace)
    subject = Subject(
        f"smoke playbook {playbook.name}",
        timeout_hint="a tool or plugin hangs during the playbook, or the run needs more time: "
        "raise --timeout",
        crash_hint="plugin code exited or killed the interpreter during the playbook",
    )
    try:
        result = request_runtime(
            sandbox, request, label="smoke", ctx=ctx, subject=subject, read_only=readable
        )
    except ProbeError as exc:
        stopped = SmokeError(exc.failure.code, exc.failure.message)
        return SmokeRecord(playbook.name, ok=False, error=stopped, reported=False), exc.failure
    record = SmokeRecord.from_json(
        {
            "playbook": playbook.name,
            **payload(result),
            "seconds": round(time.perf_counter() - started, 3),
        }
    )
    if record.ok and record.error is None:
        return record, None
    replay = _run_command(playbook, dist, host, server)
    return record, _smoke_failure(playbook, record.error, sandbox.interpreter.version, replay)


def _smoke_failure(
    playbook: Playbook, error: SmokeError | None, python: str, replay: str
) -> Failure:
    """The harness's diagnostic of a failed run, and the command that replays it."""
    error = error or SmokeError("crashed", "the smoke run reported failure without a reason")
    return Failure(
        "smoke_failed",
        f"smoke playbook {playbook.name}: [{error.code}] {error.message}",
        python=python,
        hint="the harness says which turn and action diverged; iterate quickly with "
        f"'{replay}' in an environment where the package is installed",
        details=error.details,
    )


def _add_playbook(
    request: dict[str, Any],
    sandbox: Sandbox,
    playbook: Playbook,
    ctx: RunContext,
    *,
    keep_trace: bool,
) -> list[Path]:
    """The playbook into the smoke request: a declarative one as its spec, a script as a copy
    inside the sandbox; what the run must be able to read besides the sandbox."""
    if playbook.spec is not None:
        request["spec"] = playbook.spec
        request["run_timeout"] = runtime_timeout(ctx.plugin_timeout)
        if keep_trace:
            request["trace"] = str(result_dir(sandbox, "smoke") / "trace.jsonl")
        return []
    # a copy inside the sandbox: the playbook must not run from (or import from) the tree
    copy = sandbox.paths.root / "playbooks" / playbook.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(playbook.path, copy)
    request["script"] = str(copy)
    return [copy.parent]


def _run_command(playbook: Playbook, dist: str, host: str, server: EntryPointRef | None) -> str:
    """The ``sandboxverify run`` line that replays this smoke run outside a sandbox; the
    playbook as it was given, so the line works from where ``check`` was run."""
    words = ["sandboxverify", "run", str(playbook.path)]
    if host != "native":
        words += ["--host", host]
    if server is not None and playbook.spec is not None:
        words += ["--plugin", server.value]  # a .py playbook's sessions name their own
    else:
        words += ["--dist", dist]
    return shlex.join(words)
