"""Stage ``smoke``: a playbook run inside the sandbox after the probe.

The playbook is read and validated before anything is built (a malformed one is a usage error),
then runs in every sandbox through the same verified side channel as the probe. A failed run is
a ``smoke_failed`` failure carrying the harness diagnostic (code, turn, action, what happened).
"""

from __future__ import annotations

import shlex
import shutil
import time
from pathlib import Path
from typing import Any

from sandboxverify._errors import UsageError
from sandboxverify._frozen import frozen
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
from sandboxverify.stages.playbook import (
    copy_travelling,
    load_playbook,
    named_in_script,
    plugin_file,
    travelling,
)


@frozen
class Playbook:
    path: Path
    spec: dict[str, Any] | None  # a declarative playbook, parsed and validated
    #: what travels with it into a sandbox: files at or below its directory it names (a .py
    #: playbook's traces, snapshots, data; a TOML playbook's plugin files)
    files: tuple[Path, ...] = ()

    @property
    def name(self) -> str:
        return self.path.name


def load_smoke_playbook(path: str | Path) -> Playbook:
    playbook = Path(path)
    if playbook.suffix == ".toml":
        spec = load_playbook(playbook)
        named = [found[0] for found in map(plugin_file, spec.get("plugins") or ()) if found]
        return Playbook(playbook, spec, travelling(playbook.parent, _beside(playbook, named)))
    if playbook.suffix == ".py":
        if not playbook.is_file():
            raise UsageError(f"smoke playbook not found: {playbook}")
        return Playbook(playbook, None, travelling(playbook.parent, named_in_script(playbook)))
    raise UsageError(
        f"--smoke takes a .toml or .py playbook, got {playbook}",
        hint="see the README's 'Smoke playbooks' section",
    )


def _beside(playbook: Path, paths: list[str]) -> list[str]:
    """The relative ``paths`` that stay at or below the playbook's directory."""
    root = playbook.parent.resolve()
    kept = []
    for path in paths:
        resolved = (root / path).resolve()
        if not Path(path).is_absolute() and root in resolved.parents:
            kept.append(resolved.relative_to(root).as_posix())
    return kept


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
    inside the sandbox; either way with the files it brings along copied beside it, read-only
    (snapshots are compared there, never written). Returns what the run must be able to read
    besides the sandbox."""
    # a copy inside the sandbox: the playbook must not run from (or import from) the tree
    copy = sandbox.paths.root / "playbooks"
    copy.mkdir(parents=True, exist_ok=True)
    copy_travelling(playbook.path.parent, playbook.files, copy)
    request["read_only_files"] = True
    if playbook.spec is not None:
        request["spec"] = _spec_in(playbook, copy)
        request["run_timeout"] = runtime_timeout(ctx.plugin_timeout)
        if keep_trace:
            request["trace"] = str(result_dir(sandbox, "smoke") / "trace.jsonl")
        return [copy]
    shutil.copy2(playbook.path, copy / playbook.name)
    request["script"] = str(copy / playbook.name)
    return [copy]


def _spec_in(playbook: Playbook, copy: Path) -> dict[str, Any]:
    """The spec as the sandbox sees it: its plugin files beside the copy if they travelled, else
    where they are (the host's file system is readable from the sandbox)."""
    assert playbook.spec is not None
    spec = {**playbook.spec, "base": str(copy)}
    base = Path(str(playbook.spec.get("base") or playbook.path.parent)).resolve()
    travelled = {path.resolve() for path in playbook.files}
    if spec.get("plugins"):
        spec["plugins"] = [_seen_from(p, base, copy, travelled) for p in spec["plugins"]]
    return spec


def _seen_from(plugin: str, base: Path, copy: Path, travelled: set[Path]) -> str:
    found = plugin_file(plugin)
    if found is None:
        return plugin
    path = (base / found[0]).resolve()
    if path in travelled:
        return str(copy / path.relative_to(base)) + found[1]
    return str(path) + found[1]


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
