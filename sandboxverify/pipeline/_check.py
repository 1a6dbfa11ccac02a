"""``check``: validate -> plan -> build -> a sandbox per Python, then its stages -> verdict.

Each step is a small function of the check's state (``_state``); what overlaps to end sooner
(work found side by side, imports and sandboxes made while the build runs) is ``_headstart``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from sandboxverify.artifacts import (
    ArtifactCache,
    BuildResult,
    KeepFailed,
    ProjectTarget,
    build_project,
    default_root,
    keep_artifacts,
    prepare_artifacts,
    promoted,
)
from sandboxverify.options import CheckOptions
from sandboxverify.pipeline._from_sdist import compared, planned_runs, with_differences
from sandboxverify.pipeline._headstart import (
    Footing,
    build_meanwhile,
    find_footing,
    import_later_stages,
)
from sandboxverify.pipeline._progress import EventSink, StageFinished, StageStarted, ignore
from sandboxverify.pipeline._request import CheckRequest, validated, with_configuration
from sandboxverify.pipeline._state import Built, CheckState, run_context
from sandboxverify.report import ArtifactRecord, Failure, Report, ReportWarning
from sandboxverify.sandbox import (
    HINT,
    PACKAGE,
    PROCESS_RISKS,
    SUBPROCESSES,
    Fingerprint,
    Interpreter,
    Isolation,
    RunContext,
    Runner,
    Workspace,
    changes,
    fingerprint,
    floor_note,
    parallel_map,
    resolve_all,
    select_interpreters,
    supervised,
    unfiltered_reason,
)

if TYPE_CHECKING:  # imported ahead at run time: see _headstart
    from sandboxverify.pipeline._run import RunResult


def check(
    options: CheckOptions,
    on_event: EventSink = ignore,
    *,
    runner: Runner = SUBPROCESSES,
    config: bool = True,
) -> Report:
    """Verify a project or its built artifacts; raises :class:`UsageError` on bad input only.
    ``runner`` runs every command (a stand-in, in tests); ``on_event`` hears of each all the
    same. ``config``: the project's ``[tool.sandboxverify]`` and the caller's configuration
    give what ``options`` leaves at its default, as they do on the command line (``False``:
    ``options`` alone)."""
    started = time.perf_counter()
    if config:
        options = with_configuration(options)
    request = validated(options)
    footing, context = plan(request, on_event, runner)
    with Workspace(keep=options.keep) as workspace, supervised():
        state = CheckState(request, workspace, context, on_event)
        built = build(state, footing)
        results = verify_each_python(state, built)
        report = verdict(state, footing, built, results, started)
        return kept(report, built.result, options.dist_dir)


def plan(request: CheckRequest, on_event: EventSink, runner: Runner) -> tuple[Footing, RunContext]:
    """What the check starts from (the isolation, the interpreters named, our own files) and
    what every step will run with."""
    footing = find_footing(request, on_event)
    context = run_context(request.options, footing.isolation, on_event, runner)
    import_later_stages(footing.isolation)
    return footing, context


def build(state: CheckState, footing: Footing) -> Built:
    """Stage ``build`` (:func:`build_target`); then the interpreters ``--python min|all``
    choose by what was built."""
    selectors = state.request.python_selectors
    known = None if selectors else _labelled(footing.interpreters)
    result, runtime_ready, early = build_meanwhile(
        lambda on_building: build_target(state, on_building),
        state.workspace,
        state.context,
        known,
    )
    interpreters = list(footing.interpreters)
    if selectors:
        interpreters = _selected(interpreters, selectors, result)
    pythons = tuple(_labelled(interpreters))
    differences, notes = compared(result, pythons)
    return Built(
        result,
        state.workspace.runtime,
        pythons,
        early,
        differences,
        notes,
        runtime_ready=runtime_ready,
    )


def verify_each_python(state: CheckState, built: Built) -> list[RunResult]:
    """A sandbox per interpreter, the wheel installed, then its stages: every interpreter at
    once (given a wheel and an sdist, a run of each wheel: ``_from_sdist``)."""
    from sandboxverify.pipeline._run import Verifier  # noqa: PLC0415 - imported ahead

    given = Verifier(state, built)
    from_sdist = Verifier(state.of_wheel_from_sdist(), built, from_sdist=True)
    planned = planned_runs(built)
    results = parallel_map(
        lambda run: (from_sdist if run.from_sdist else given).run(run.interpreter, run.label),
        planned,
        max_workers=len(planned),
    )
    return with_differences(planned, results)


def verdict(
    state: CheckState,
    footing: Footing,
    built: Built,
    results: Sequence[RunResult],
    started: float,
) -> Report:
    """What every run found, as the report (after the runs: our own files are compared to what
    they were before any package code ran)."""
    options, artifacts = state.options, built.result
    failures = [*artifacts.failures, *built.differences]
    failures.extend(f for result in results for f in result.failures)
    failures.extend(
        _host_modified(footing.installation, hidden=footing.isolation.name != "process")
    )
    notes = _floor_notes(options, [interpreter for interpreter, _ in built.pythons], artifacts)
    notes += dict.fromkeys(note for result in results for note in result.notes)
    notes += built.notes
    isolation = state.context.isolation
    notes += _isolation_notes(isolation)
    promoted_failures, warnings = promoted(
        _warnings(artifacts, footing.fallback), options.fail_on_warning
    )
    failures.extend(promoted_failures)
    return Report(
        target=" ".join(options.targets),
        artifacts=_artifact_records(artifacts),
        runs=tuple(result.run for result in results),
        failures=tuple(failures),
        warnings=tuple(warnings),
        host=options.host,
        groups=_judged_groups(state.request, results),
        installer=state.context.toolchain.name,
        seconds=time.perf_counter() - started,
        workdir=str(state.workspace.root) if options.keep else None,
        expect_tools=options.expect_tools,
        with_requirements=options.with_requirements,
        notes=tuple(notes),
        isolation=isolation.name,
        isolation_fallback=footing.fallback,
        network=isolation.network,
        syscall_filter=isolation.syscall_filter.arch if isolation.syscall_filter else None,
    )


def build_target(state: CheckState, on_building: Callable[[], None] | None = None) -> BuildResult:
    """Stage ``build``: the sdist and the wheel from it (or the artifacts given), announced;
    reused from the artifact cache when the tree is unchanged. ``on_building``: called once
    the project's backend is known to run."""
    options, target, workspace = state.options, state.request.target, state.workspace
    cache = ArtifactCache(default_root()) if options.cache else None
    state.on_event(StageStarted("build", None))
    if isinstance(target, ProjectTarget):
        result = build_project(
            target,
            workspace,
            state.context,
            cache=cache,
            expect_files=options.expect_files,
            follow_external_links=options.follow_external_links,
            on_building=on_building,
        )
    else:
        result = prepare_artifacts(
            target, workspace, state.context, cache=cache, expect_files=options.expect_files
        )
    names = ", ".join(a.path.name for a in result.artifacts)
    summary = names if result.ran else f"verifying as given: {names}"
    if result.reused:
        summary = f"reused (unchanged since they were built): {names}"
    wheel = result.from_sdist
    if wheel is not None:  # beside given wheels
        given = ", ".join(a.path.name for a in result.artifacts if a is not wheel)
        how = "reused, as built from the sdist" if result.reused else "built from the sdist"
        summary = f"verifying as given: {given}; {how}: {wheel.path.name}"
    state.on_event(
        StageFinished(
            "build",
            None,
            "passed" if result.ok else "failed",
            result.seconds,
            summary if result.ok else "failed",
        )
    )
    return result


def _warnings(build: BuildResult, fallback: str | None) -> list[ReportWarning]:
    """The static rules' warnings, and the OS sandbox missing (``--isolation auto``)."""
    warnings = list(dict.fromkeys(build.warnings))  # the sdist and its wheel share metadata
    if fallback:
        warnings.insert(
            0,
            ReportWarning(
                "no-os-sandbox",
                f"ran without the OS sandbox ({fallback}): code from the package ran as you",
                hint=HINT,
            ),
        )
    return warnings


def kept(report: Report, build: BuildResult, dist_dir: str | None) -> Report:
    """``--dist-dir``: a passed check's sdist and wheel(s), written there byte for byte (the
    wheel built from a given sdist beside given wheels is not one of them: the given ones are
    published); a failure when they cannot be written."""
    if dist_dir is None or not report.ok:
        return report
    published = ((build.sdist,) if build.sdist else ()) + build.wheels
    try:
        written = keep_artifacts(published, Path(dist_dir))
    except KeepFailed as exc:
        failure = Failure(
            "artifact_invalid",
            f"--dist-dir: {exc}",
            hint="give --dist-dir a directory you can write to (an empty one: the publish "
            "step uploads all it holds)",
        )
        return replace(report, failures=(*report.failures, failure))
    # a wheel built from the given sdist may share a given wheel's name, never its bytes
    by_file = {
        (artifact.path.name, artifact.sha256): str(written[artifact.path]) for artifact in published
    }
    records = tuple(
        replace(record, kept=by_file.get((record.filename, record.sha256)))
        for record in report.artifacts
    )
    return replace(report, artifacts=records, dist_dir=str(Path(dist_dir)))


def _artifact_records(build: BuildResult) -> tuple[ArtifactRecord, ...]:
    return tuple(
        ArtifactRecord(
            a.kind,
            a.path.name,
            a.sha256,
            built=a.path in build.built,
            reused=build.reused and a.path in build.built,
        )
        for a in build.artifacts
    )


def _judged_groups(request: CheckRequest, results: Sequence[RunResult]) -> tuple[str, ...]:
    """The groups looked in; ``--host auto`` without ``--group``: the groups the distribution
    declares, as they were judged."""
    if request.options.host != "auto" or request.options.groups:
        return request.groups
    return tuple(dict.fromkeys(plugin.group for result in results for plugin in result.run.plugins))


def _host_modified(before: Fingerprint, *, hidden: bool) -> list[Failure]:
    """sandboxverify's own files changed during the check: this verdict was reached with what
    was loaded before, but nothing may pass. ``hidden``: package code ran in the OS sandbox,
    which never shows it those files, so something outside the check changed them."""
    changed = changes(before, fingerprint())
    if not changed:
        return []
    shown = ", ".join(changed[:5]) + (f" (and {len(changed) - 5} more)" if len(changed) > 5 else "")
    hint = (
        "the OS sandbox never lets the package's code write them, so something outside the "
        "check changed them meanwhile (an edit of a checkout sandboxverify runs from, an "
        "upgrade): run the check again once they stay unchanged"
        if hidden
        else "code from the package under test wrote to it; reinstall sandboxverify, and "
        "verify untrusted packages with the OS sandbox (--isolation strict)"
    )
    return [
        Failure(
            "host_modified",
            f"sandboxverify's own installation ({PACKAGE}) changed during the check: {shown}",
            hint=hint,
        )
    ]


def _isolation_notes(isolation: Isolation) -> list[str]:
    """What package code could do that the report's reader should know: without the OS sandbox,
    what stays possible; on Linux without a system call table for this machine, that it ran
    unfiltered."""
    notes = [f"process isolation: {PROCESS_RISKS}"] if isolation.name == "process" else []
    if isolation.syscall_filter is None and sys.platform.startswith("linux"):
        notes.append(
            f"code from the package ran without the system call filter: {unfiltered_reason()}"
        )
    return notes


def _floor_notes(
    options: CheckOptions, interpreters: list[Interpreter], build: BuildResult
) -> list[str]:
    if "min" not in (spec.lower() for spec in options.python):
        return []
    releases = [*build.wheels, *([build.sdist] if build.sdist else [])]
    chosen = sorted(interpreters, key=lambda interpreter: interpreter.version_info)
    note = floor_note(releases[0].requires_python, chosen) if releases else None
    return [note] if note else []


def _selected(
    explicit: list[Interpreter], selectors: Sequence[str], build: BuildResult
) -> list[Interpreter]:
    """``--python min|all``: chosen by the built release's Requires-Python."""
    releases = [*build.wheels, *([build.sdist] if build.sdist else [])]
    if not releases:  # nothing built: the build failure is the report
        return explicit or resolve_all([])
    chosen = select_interpreters(list(selectors), releases[0].requires_python)
    return list({i.path: i for i in [*explicit, *chosen]}.values())


def _labelled(interpreters: Sequence[Interpreter]) -> list[tuple[Interpreter, str]]:
    """Each interpreter with a label of its own: ``3.12``, then ``3.12-2``..."""
    labels: list[str] = []
    for interpreter in interpreters:
        label = interpreter.label
        suffix = 2
        while label in labels:
            label = f"{interpreter.label}-{suffix}"
            suffix += 1
        labels.append(label)
    return list(zip(interpreters, labels))
