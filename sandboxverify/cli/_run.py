"""What ``run`` does: a playbook here, against the installed plugins (its options are in
``_commands``)."""

from __future__ import annotations

import os
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from sandboxverify._errors import EXIT_CHECK_FAILED, EXIT_OK, UsageError
from sandboxverify.cli import _terminal
from sandboxverify.cli._live import replayed, run_live
from sandboxverify.cli._output import check_json_path, stdout_to_stderr, write_json
from sandboxverify.cli._render import render_smoke
from sandboxverify.report import Redactor
from sandboxverify.runtime.harness import DIST_ENV, project_name
from sandboxverify.stages import Playbook, load_smoke_playbook
from sandboxverify.stages.playbook import LLM_ENV, llm_mode


def run_playbook(
    *,
    playbook: str,
    plugins: tuple[str, ...],
    dist: str | None,
    host: str | None,
    group: str | None,
    trace: str | None,
    timeout: float | None,
    json_out: str | None,
    verbose: int,
    **replay: Any,
) -> int:
    check_json_path(json_out, (playbook,))
    loaded = load_smoke_playbook(playbook)
    mode = llm_mode("live" if replay["live"] else None, os.environ)
    if mode == "record":  # SANDBOXVERIFY_LLM=record: the playbook recorded again, then replayed
        code = _refresh(loaded, dist=dist, timeout=timeout, verbose=verbose, **replay)
        if code != EXIT_OK:
            return code
        loaded = load_smoke_playbook(playbook)
        replay["model"] = None  # the replay needs no model
    host = host or (loaded.spec or {}).get("host") or "native"
    request: dict[str, Any] = {"group": group, "dist": dist, "host": host}
    if mode == "live":
        replay["live"] = True
        request.update(plugins=list(plugins) or None, run_timeout=timeout, trace=trace)
        return run_live(loaded, request, json_out=json_out, verbose=verbose, **replay)
    replayed(loaded, **replay)
    if loaded.spec is not None:
        if not plugins and not loaded.spec.get("plugins"):
            _check_default_plugins(dist)
        request.update(
            spec=loaded.spec, plugins=list(plugins) or None, run_timeout=timeout, trace=trace
        )
    elif plugins or trace:
        raise UsageError(
            "--plugin and --trace apply to .toml playbooks; a .py playbook creates its own sessions"
        )
    else:
        request["script"] = str(loaded.path)
    # the in-process harness: only this command pays for importing it
    from sandboxverify.runtime import smoke as run_smoke_here  # noqa: PLC0415

    started = time.perf_counter()
    with stdout_to_stderr(json_out == "-"):  # plugin code prints; the JSON owns stdout
        outcome = run_smoke_here(request)
    result = {
        "playbook": loaded.name,
        **outcome,
        "seconds": round(time.perf_counter() - started, 3),
    }
    secrets = Redactor()
    human = secrets.stream(sys.stderr if json_out == "-" else sys.stdout)
    human.write(render_smoke(result, colour=_terminal.colour(human), verbose=verbose) + "\n")
    human.flush()
    write_json(result, json_out, secrets)
    return EXIT_OK if result.get("ok") else EXIT_CHECK_FAILED


def _check_default_plugins(dist: str | None) -> None:
    """A playbook that names no plugins runs the distribution's: there must be one, installed
    here. Without it, a usage error in the command line's words (not the harness's)."""
    where = f"--dist {dist}" if dist else None
    name = dist
    if name is None and os.environ.get(DIST_ENV):
        name = os.environ[DIST_ENV]
        where = f"{DIST_ENV}={name}"
    if name is None:
        name = project_name(Path.cwd())
        where = f"the project here ({name})"
    hint = (
        "pass --plugin module:attr (or an entry-point name) or --dist NAME, or run from the "
        "project's directory with the project installed (pip install -e .)"
    )
    if name is None:
        raise UsageError(
            "no plugins to run: the playbook names none, no --plugin or --dist was given, and "
            "there is no project here (no pyproject.toml with a [project] name)",
            hint=hint,
        )
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        raise UsageError(
            f"no plugins to run: {where} is not installed in this environment", hint=hint
        ) from None


def _refresh(
    loaded: Playbook, *, dist: str | None, timeout: float | None, verbose: int, **replay: Any
) -> int:
    """``record --refresh`` on the playbook, as ``SANDBOXVERIFY_LLM=record`` asks; its exit
    code (a recording that fails stops the run before anything is replayed)."""
    if loaded.spec is None:
        raise UsageError(
            f"{LLM_ENV}=record records .toml playbooks; {loaded.name} is a script",
            hint=f"unset {LLM_ENV} for .py playbooks",
        )
    from sandboxverify.cli._record import Recording, record  # noqa: PLC0415

    recording = Recording.refreshing(
        loaded.path,
        model=replay.get("model"),
        dist=dist,
        timeout=timeout,
        max_steps=replay["max_steps"],
        verbose=verbose,
    )
    return record(recording)
