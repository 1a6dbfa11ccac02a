"""The options ``run`` gains for recordings: ``--live`` (the contract run: a live model chooses
again from the recorded prompts; every step where it leaves the recording is reported) and
``--compare-results/--no-compare-results`` (each tool's result compared with the recorded one:
the default where the playbook records results)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

from sandboxverify._errors import EXIT_CHECK_FAILED, EXIT_OK, UsageError
from sandboxverify.cli._output import stdout_to_stderr, write_json
from sandboxverify.cli._record import (
    counts,
    failure_lines,
    short,
    usable,
)
from sandboxverify.cli._render import Style, smoke_call_lines
from sandboxverify.report import Redactor, inert
from sandboxverify.stages import Playbook


def run_live(
    loaded: Playbook,
    request: dict[str, Any],
    *,
    model: str | None,
    model_options: Sequence[tuple[str, str]],
    max_steps: int,
    compare_results: bool | None,
    live: bool,
    json_out: str | None,
    verbose: int,
) -> int:
    """``run PLAYBOOK --live``: the contract run, reported step by step."""
    del live
    if loaded.spec is None:
        raise UsageError("--live runs a .toml playbook: a .py playbook scripts its own model")
    if compare_results is not None:
        raise UsageError(
            "--compare-results replays the recorded calls; --live lets the model choose again",
            hint="run them one after the other: the replay in CI, --live nightly",
        )
    from sandboxverify.runtime import live as run_here  # noqa: PLC0415

    started = time.perf_counter()
    with stdout_to_stderr(json_out == "-"):  # plugin code prints; the JSON owns stdout
        result = usable(
            run_here(
                {
                    **request,
                    "spec": loaded.spec,
                    "model": model,
                    "options": dict(model_options),
                    "max_steps": max_steps,
                }
            )
        )
    result = {"playbook": loaded.name, **result, "seconds": round(time.perf_counter() - started, 3)}
    secrets = Redactor()
    human = secrets.stream(sys.stderr if json_out == "-" else sys.stdout)
    style = Style(human.isatty())
    lines = smoke_call_lines(result, style)
    for divergence in result.get("divergences") or []:
        lines.append(
            f"{style.paint('DIVERGED', 'failed')} turn {divergence['turn']}, step "
            f"{divergence['step']} ({short(divergence['prompt'])}):"
        )
        lines.append(f"    recorded: {inert(divergence['recorded'])}")
        lines.append(f"    live:     {inert(divergence['live'])}")
        if len(divergence.get("not_made") or []) + len(divergence.get("instead") or []) > 1:
            lines += [f"      not made: {inert(call)}" for call in divergence["not_made"]]
            lines += [f"      instead:  {inert(call)}" for call in divergence["instead"]]
    error = result.get("error")
    if error and error.get("code") != "live_diverged":
        lines += failure_lines(result, style, verbose)
    verdict = "PASSED" if result.get("ok") else "FAILED"
    summary = (
        f"the live model {result.get('model')!r} made the recorded calls"
        if result.get("ok")
        else f"{len(result.get('divergences') or [])} step(s) diverged from the recording"
    )
    lines.append(
        f"{style.paint(verdict, 'passed' if result.get('ok') else 'failed')}: {loaded.name}, "
        f"{summary}; {counts(result)}"
    )
    human.write("\n".join(lines) + "\n")
    human.flush()
    write_json(result, json_out, secrets)
    return EXIT_OK if result.get("ok") else EXIT_CHECK_FAILED


def replayed(
    loaded: Playbook, *, compare_results: bool | None, model: str | None, **_: Any
) -> None:
    """A replay (no --live): ``--compare-results`` / ``--no-compare-results`` say what the
    playbook's own ``compare_results`` would (a replay compares recorded results by default)."""
    if model:
        raise UsageError("--model applies to --live runs", hint="add --live, or drop --model")
    if compare_results is None:
        return
    if loaded.spec is None:
        raise UsageError(
            "--compare-results applies to .toml playbooks that record results",
            hint="a .py playbook compares what it likes with .then(...) callbacks",
        )
    if compare_results and not any(
        call.get("result") is not None
        for turn in loaded.spec["turns"]
        for action in turn["actions"]
        for call in (action.get("calls") or [action])
    ):
        raise UsageError(
            f'--compare-results: {loaded.path} records no results (result = "..." on calls)',
            hint="record the session with 'sandboxverify record', or add result to the calls",
        )
    loaded.spec["compare_results"] = compare_results
