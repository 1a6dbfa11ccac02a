"""``check``: build -> sandbox per Python (``_run``) -> verdict -> clean up."""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from sandboxverify._errors import UsageError
from sandboxverify.artifacts._artifacts import ProjectTarget, Target, classify
from sandboxverify.artifacts._build import BuildResult, build_project, prepare_artifacts
from sandboxverify.artifacts._cache import ArtifactCache, default_root
from sandboxverify.pipeline._ahead import Premade, import_ahead, make_sandbox
from sandboxverify.pipeline._events import (
    EventSink,
    IsolationChosen,
    StageFinished,
    StageStarted,
    ignore,
)
from sandboxverify.pipeline._options import CheckOptions, validate
from sandboxverify.pipeline._stages import AnnouncingRunner
from sandboxverify.report._model import (
    ArtifactRecord,
    Failure,
    Report,
)
from sandboxverify.runtime._protocol import EntryPointRef, server_ref
from sandboxverify.sandbox._context import SUBPROCESSES, RunContext, Runner
from sandboxverify.sandbox._integrity import PACKAGE, Fingerprint, changes, fingerprint
from sandboxverify.sandbox._interpreters import (
    SELECTORS,
    Interpreter,
    floor_note,
    resolve_all,
    select_interpreters,
)
from sandboxverify.sandbox._isolation import HINT, PROCESS_RISKS, Isolation
from sandboxverify.sandbox._isolation import choose as choose_isolation
from sandboxverify.sandbox._subprocess import parallel_map, supervised
from sandboxverify.sandbox._toolchain import IndexOptions, choose
from sandboxverify.sandbox._workspace import Workspace
from sandboxverify.stages._smoke import load as load_playbook


def check(options: CheckOptions, on_event: EventSink = ignore) -> Report:
    """Verify a project or its built artifacts; raises :class:`UsageError` on bad input only."""
    started = time.perf_counter()
    validate(options)
    target = classify(options.targets)
    options = _with_group_suffixes(options)
    groups = options.effective_groups
    if not groups and options.host != "auto":
        raise UsageError(
            f"--host {options.host} needs --group NAME: it has no default group",
            hint="e.g. --host entrypoints --group myapp.plugins",
        )
    _check_hookspecs(options)
    server = _server_ref(options)
    check_requirements(options.with_requirements)
    if options.smoke and options.host == "entrypoints":
        raise UsageError(
            "--smoke does not apply to --host entrypoints: its entry points are not tools a "
            "model calls",
            hint="drop --smoke, or use --host native, llm or mcp",
        )
    playbook = load_playbook(options.smoke) if options.smoke else None
    explicit = [spec for spec in options.python if spec.lower() not in SELECTORS]
    selectors = [spec.lower() for spec in options.python if spec.lower() in SELECTORS]
    # what the check starts from, found side by side (each mostly waits on a process or the
    # disk): our own files' digests, taken before any code from the package runs; whether the
    # OS sandbox is there; the interpreters named, resolved before the build, so a typo costs
    # no build time
    with ThreadPoolExecutor(max_workers=3) as pool:
        digests = pool.submit(fingerprint)
        deciding = pool.submit(decide_isolation, options, on_event)
        resolving = pool.submit(resolve_all, explicit) if explicit or not selectors else None
        isolation, fallback = deciding.result()
        interpreters = resolving.result() if resolving is not None else []
        installation = digests.result()
    context = run_context(options, isolation, on_event)
    # started only now: importing holds the interpreter, and the steps above want it briefly
    importing = import_ahead()
    if isolation.name == "process":  # the build's code could reach our files from here on
        importing.join()
    with Workspace(keep=options.keep) as workspace, supervised():
        # the OS sandbox hides the sandboxes from the build: they are made while it runs
        ahead = isolation.name != "process" and not selectors
        build, runtime, premade = _build_meanwhile(
            target,
            workspace,
            context,
            options,
            on_event,
            sandboxes=list(zip(interpreters, _labels(interpreters))) if ahead else [],
        )
        if selectors:
            interpreters = _selected(interpreters, selectors, build)
        labels = _labels(interpreters)
        from sandboxverify.pipeline._run import Verifier  # noqa: PLC0415 - imported ahead

        verify = Verifier(
            options=options,
            groups=groups,
            context=context,
            workspace=workspace,
            build=build,
            runtime=runtime,
            on_event=on_event,
            playbook=playbook,
            server=server,
            premade=premade,
        )
        results = parallel_map(
            lambda item: verify.run(*item),
            list(zip(interpreters, labels)),
            max_workers=len(interpreters),
        )
    failures = list(build.failures) + [f for result in results for f in result.failures]
    failures.extend(_host_modified(installation))
    notes = _floor_notes(options, interpreters, build)
    notes += dict.fromkeys(note for result in results for note in result.notes)
    if options.host == "auto" and not options.groups:
        # the groups the distribution declares, as they were judged
        groups = tuple(
            dict.fromkeys(plugin.group for result in results for plugin in result.run.plugins)
        )
    return Report(
        target=" ".join(options.targets),
        artifacts=tuple(
            ArtifactRecord(
                a.kind, a.path.name, a.sha256, built=a.path in build.built, reused=build.reused
            )
            for a in build.artifacts
        ),
        runs=tuple(result.run for result in results),
        failures=tuple(failures),
        host=options.host,
        groups=groups,
        installer=context.toolchain.name,
        seconds=time.perf_counter() - started,
        workdir=str(workspace.root) if options.keep else None,
        expect_tools=options.expect_tools,
        with_requirements=options.with_requirements,
        notes=tuple(notes),
        isolation=isolation.name,
        isolation_fallback=fallback,
    )


def _build_meanwhile(
    target: Target,
    workspace: Workspace,
    context: RunContext,
    options: CheckOptions,
    on_event: EventSink,
    *,
    sandboxes: Sequence[tuple[Interpreter, str]],
) -> tuple[BuildResult, Path, dict[str, Premade]]:
    """The build; meanwhile the runtime is copied (needed from the first probe on) and
    ``sandboxes`` (interpreters with their labels) are made: the build, the runtime's copy and
    the sandboxes made, by label."""
    built = threading.Event()
    with ThreadPoolExecutor(max_workers=1 + len(sandboxes)) as pool:
        copying = pool.submit(workspace.install_runtime)
        making = {
            label: pool.submit(
                contextvars.copy_context().run,
                make_sandbox,
                interpreter,
                label,
                workspace=workspace,
                ctx=context,
                built=built,
            )
            for interpreter, label in sandboxes
        }
        try:
            build = build_target(target, workspace, context, options, on_event)
        finally:
            built.set()
        return build, copying.result(), {label: done.result() for label, done in making.items()}


def _host_modified(before: Fingerprint) -> list[Failure]:
    """Code from the package changed sandboxverify's own files (possible without the OS
    sandbox): this verdict was reached with what was loaded before, but nothing may pass."""
    changed = changes(before, fingerprint())
    if not changed:
        return []
    shown = ", ".join(changed[:5]) + (f" (and {len(changed) - 5} more)" if len(changed) > 5 else "")
    return [
        Failure(
            "host_modified",
            f"sandboxverify's own installation ({PACKAGE}) changed during the check: {shown}",
            hint="code from the package under test wrote to it; reinstall sandboxverify, and "
            "verify untrusted packages with the OS sandbox (--isolation strict)",
        )
    ]


def _floor_notes(
    options: CheckOptions, interpreters: list[Interpreter], build: BuildResult
) -> list[str]:
    if "min" not in (spec.lower() for spec in options.python):
        return []
    releases = [*build.wheels, *([build.sdist] if build.sdist else [])]
    chosen = sorted(interpreters, key=lambda interpreter: interpreter.version_info)
    note = floor_note(releases[0].requires_python, chosen) if releases else None
    return [note] if note else []


def _with_group_suffixes(options: CheckOptions) -> CheckOptions:
    """``--group NAME:callable``: the group's entry points must name callables."""
    groups: list[str] = []
    callables = list(options.callable_groups)
    for group in options.groups:
        name, _, suffix = group.partition(":")
        if suffix and suffix != "callable":
            raise UsageError(
                f"--group {group!r}: unknown suffix {suffix!r}",
                hint="a group is NAME, or NAME:callable when its entry points must name callables",
            )
        if not name.strip():
            raise UsageError(
                f"--group {group!r}: the group name is empty", hint="e.g. --group myapp.plugins"
            )
        groups.append(name.strip())
        if suffix:
            callables.append(name.strip())
    return replace(options, groups=tuple(groups), callable_groups=tuple(dict.fromkeys(callables)))


def _check_hookspecs(options: CheckOptions) -> None:
    for spec in options.hookspecs:
        group, _, module = spec.partition("=")
        if not group.strip() or not module.strip() or " " in module.strip():
            raise UsageError(
                f"--hookspecs {spec!r}: expected GROUP=MODULE",
                hint="e.g. --hookspecs myapp=myapp.hookspecs (the module that defines the "
                "application's pluggy hookspecs)",
            )


def _selected(
    explicit: list[Interpreter], selectors: list[str], build: BuildResult
) -> list[Interpreter]:
    """``--python min|all``: chosen by the built release's Requires-Python."""
    releases = [*build.wheels, *([build.sdist] if build.sdist else [])]
    if not releases:  # nothing built: the build failure is the report
        return explicit or resolve_all([])
    chosen = select_interpreters(selectors, releases[0].requires_python)
    return list({i.path: i for i in [*explicit, *chosen]}.values())


def run_context(
    options: CheckOptions,
    isolation: Isolation,
    on_event: EventSink,
    runner: Runner = SUBPROCESSES,
) -> RunContext:
    """What every step of a check with ``options`` runs with: its commands go through
    ``runner``, and ``on_event`` hears how each one ended."""
    return RunContext(
        # with no OS sandbox to keep the environments read-only, untrusted code could write to
        # what gets installed: nothing installed may be shared with the installer's cache
        toolchain=choose(options.installer, writable_installs=isolation.name == "process"),
        plugin_timeout=options.timeout,
        install_timeout=options.install_timeout,
        isolation=isolation,
        pass_env=options.pass_env,
        index=IndexOptions(options.index_url, options.find_links),
        runner=AnnouncingRunner(runner, on_event),
    )


def build_target(
    target: Target,
    workspace: Workspace,
    context: RunContext,
    options: CheckOptions,
    on_event: EventSink,
) -> BuildResult:
    """Stage ``build``: the sdist and the wheel from it (or the artifacts given), announced
    to ``on_event``; reused from the artifact cache when the tree is unchanged."""
    cache = ArtifactCache(default_root()) if options.cache else None
    on_event(StageStarted("build", None))
    if isinstance(target, ProjectTarget):
        result = build_project(
            target, workspace, context, cache=cache, expect_files=options.expect_files
        )
    else:
        result = prepare_artifacts(
            target, workspace, context, cache=cache, expect_files=options.expect_files
        )
    names = ", ".join(a.path.name for a in result.artifacts)
    summary = names if result.ran else f"verifying as given: {names}"
    if result.reused:
        summary = f"reused (unchanged since they were built): {names}"
    on_event(
        StageFinished(
            "build",
            None,
            "passed" if result.ok else "failed",
            result.seconds,
            summary if result.ok else "failed",
        )
    )
    return result


def _server_ref(options: CheckOptions) -> EntryPointRef | None:
    """``--server-command`` as the one plugin an mcp check loads, named after its program."""
    if options.server_command is None:
        return None
    if options.host != "mcp":
        raise UsageError(
            f"--server-command only applies to --host mcp (the host is {options.host})",
            hint="add --host mcp, or drop --server-command",
        )
    if not options.server_command.strip():
        raise UsageError(
            "--server-command is empty", hint="e.g. --server-command 'my-server --stdio'"
        )
    try:
        return server_ref(options.server_command)
    except ValueError as exc:
        raise UsageError(f"--server-command {options.server_command!r}: {exc}") from None


def decide_isolation(options: CheckOptions, on_event: EventSink) -> tuple[Isolation, str | None]:
    """The isolation package code runs in, and why it is not the OS sandbox when it could have
    been, announced to ``on_event``. Decided before any work: ``--isolation strict`` without
    the OS sandbox is a usage error."""
    isolation, fallback = choose_isolation(
        options.isolation, hide=(*(Path(t) for t in options.targets), Path.cwd())
    )
    on_event(
        IsolationChosen(
            isolation.name,
            f"running without the OS sandbox ({fallback}); {PROCESS_RISKS}. To sandbox: {HINT}"
            if fallback
            else None,
        )
    )
    return isolation, fallback


def check_requirements(requirements: Sequence[str]) -> None:
    """``--with`` takes requirement strings only: never an installer option in disguise."""
    for text in requirements:
        try:
            Requirement(text)
        except InvalidRequirement as exc:
            raise UsageError(
                f"--with {text!r} is not a requirement: {str(exc).splitlines()[0]}",
                hint="e.g. --with pytest or --with 'llm>=0.26'",
            ) from None


def _labels(interpreters: list[Interpreter]) -> list[str]:
    labels: list[str] = []
    for interpreter in interpreters:
        label = interpreter.label
        suffix = 2
        while label in labels:
            label = f"{interpreter.label}-{suffix}"
            suffix += 1
        labels.append(label)
    return labels
