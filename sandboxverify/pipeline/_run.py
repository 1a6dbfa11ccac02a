"""One interpreter's share of a check: sandbox, install, then probe, imports and scripts at once,
then the smoke run."""

from __future__ import annotations

import platform
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from sandboxverify._frozen import frozen
from sandboxverify.artifacts import Artifact, BuildResult, select_wheel
from sandboxverify.pipeline._applications import Applications, find_applications
from sandboxverify.pipeline._dependency_wheels import (
    built_notes,
    install_building_dependencies,
    with_dependency_wheels,
)
from sandboxverify.pipeline._headstart import EarlySandbox
from sandboxverify.pipeline._inspect import Inspector
from sandboxverify.pipeline._stages import StageTimer
from sandboxverify.pipeline._state import Built, CheckState, Installed
from sandboxverify.report import (
    Failure,
    ImportsRecord,
    PluginRecord,
    Run,
    ScriptRecord,
    SmokeRecord,
    Stage,
    StageName,
    ToolRecord,
)
from sandboxverify.runtime.hosts import names_modules
from sandboxverify.sandbox import Interpreter, Sandbox, SandboxPaths, create_sandbox, install_wheel
from sandboxverify.stages import (
    PlannedPlugin,
    Playbook,
    PluginPlan,
    named_extensions,
    no_smoke_driver,
    plan_plugins,
    run_smoke,
    smoke_driver,
)

#: ``platform.system()`` names as people (and CI runners' ``RUNNER_OS``) say them
_OS_NAMES = {"Darwin": "macOS"}


def operating_system() -> str:
    """The operating system this runs on: ``Linux``, ``macOS``, ``Windows``..."""
    system = platform.system() or "unknown"
    return _OS_NAMES.get(system, system)


@frozen
class RunResult:
    run: Run
    failures: tuple[Failure, ...]
    #: what the run decided on the user's behalf (a distribution verified as a library)
    notes: tuple[str, ...] = ()


@dataclass
class _Findings:
    """What one interpreter's run has found so far: each step adds to it."""

    stages: list[Stage]
    failures: list[Failure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    plugins: tuple[PluginRecord, ...] = ()
    tools: tuple[ToolRecord, ...] = ()
    smoke: SmokeRecord | None = None
    imports: ImportsRecord | None = None
    scripts: tuple[ScriptRecord, ...] | None = None
    installed: tuple[dict[str, str], ...] = ()
    #: the wheel the run installs, if any fits its interpreter
    wheel: Artifact | None = None


class Verifier:
    """One interpreter's share of the check: sandbox, install, probe, expectations."""

    def __init__(self, state: CheckState, built: Built, *, from_sdist: bool = False) -> None:
        self.state = state
        self.built = built
        #: the runs install the wheel built from the given sdist, not a given wheel
        self.from_sdist = from_sdist
        build = built.result
        self.wheels = (build.from_sdist,) if from_sdist and build.from_sdist else build.wheels
        options = state.options
        self.stage_names: tuple[StageName, ...] = (
            ("venv", "install", "probe")
            + (("imports",) if options.import_all else ())
            + ("scripts",)
            + (("smoke",) if state.request.playbook else ())
        )

    def run(self, interpreter: Interpreter, label: str) -> RunResult:
        """Stages ``venv`` and ``install``, then ``probe``, ``imports`` and ``scripts`` at
        once, then ``smoke``; each only if the one before left something to go on with."""
        build = self.built.result
        paths = self.state.workspace.sandbox(
            f"{label}-from-sdist" if self.from_sdist else label, interpreter.path
        )
        found = _Findings([Stage("build", "passed" if build.ok else "failed", build.seconds)])
        if self.from_sdist or build.installable:
            found.wheel = select_wheel(self.wheels, interpreter.version_info)
            early = None if self.from_sdist else self.built.early.get(label)
            self._verify(interpreter, paths, found, early=early)
        return self._finish(interpreter, paths, found)

    def _verify(
        self,
        interpreter: Interpreter,
        paths: SandboxPaths,
        found: _Findings,
        *,
        early: EarlySandbox | None,
    ) -> None:
        runtime = self.built.runtime
        ctx = self.state.context.with_runtime(runtime, self.built.runtime_ready)
        ctx = ctx.for_python(interpreter.version)
        looked_for: list[Applications] = []

        def applications(sandbox: Sandbox, wheel: Artifact, timer: StageTimer) -> None:
            """Part of stage ``install``: the applications the plugins need, found and added
            (an MCP server command replaces the plugins: there is none to look for)."""
            if self.state.request.server is not None:
                return
            done = find_applications(
                self.state,
                Installed(sandbox, wheel, ctx),
                self._plan(wheel, interpreter.version_info),
            )
            timer.fail_with(*done.failures)
            timer.summary = " ".join(filter(None, (timer.summary, done.summary)))
            looked_for.append(done)

        ready, failures = sandbox_with_wheel(
            self.state,
            self.built.result,
            interpreter,
            paths,
            found.stages,
            early=early,
            then=applications,
            wheels=self.wheels,
        )
        found.failures.extend(failures)
        found.notes.extend(built_notes(self.state, self.built.result))
        if ready is None:
            return
        installed = Installed(*ready, with_dependency_wheels(ctx, self.state))
        plan = (
            looked_for[0].plan
            if looked_for
            else self._plan(installed.wheel, interpreter.version_info)
        )
        found.notes.extend(plan.notes)
        found.notes.extend(note for done in looked_for for note in done.notes)
        to_load = self._inspect_with_dependents(installed, plan, found)
        playbook = self.state.request.playbook
        if to_load is not None and playbook is not None:
            self._smoke(installed, playbook, to_load, found)

    def _plan(self, wheel: Artifact, python: Sequence[int]) -> PluginPlan:
        """Which host judges each plugin of ``wheel`` on an interpreter of version ``python``,
        before any application is looked for."""
        request, options = self.state.request, self.state.options
        plan = plan_plugins(
            wheel.entry_points,
            wheel.dependencies,
            host=options.host,
            groups=request.groups,
            callable_groups=options.callable_groups,
            hookspecs=options.hookspecs_by_group,
        )
        # a distribution may also be an extension users name in an application's
        # configuration, which no entry point says; with --host or --group the user says which
        # plugins there are, and --expect-plugins counts them (0: none, or its entry points)
        # (--host pylint, whose application reads no entry point: the modules it names)
        only = options.host if names_modules(options.host) and not options.groups else None
        said = options.host != "auto" or bool(request.groups) or bool(plan.near_misses)
        counted = options.expect_plugins == 0 or bool(options.expect_plugins and plan.plugins)
        if (said or counted) and only is None:
            return plan
        judged_by = {plugin.host for plugin in plan.plugins}
        named, notes = named_extensions(wheel, judged_by, only=only, python=python)
        return replace(plan, plugins=(*plan.plugins, *named), notes=tuple(notes))

    def _inspect(
        self,
        installed: Installed,
        plan: PluginPlan,
        found: _Findings,
        *,
        also: Sequence[str] | None = None,
    ) -> list[PlannedPlugin] | None:
        """Stages ``probe``, ``imports`` and ``scripts``: the plugins loaded, or ``None`` when
        the probe failed. What the wheel ships beyond the plugins is checked even when a plugin
        failed, so one run shows every problem; the smoke run needs plugins that loaded."""
        request = self.state.request
        to_load = (
            [PlannedPlugin(request.server, "mcp", "--server-command")]
            if request.server is not None
            else list(plan.plugins)
        )
        inspection = Inspector(self.state, also=also).inspect(
            installed, plan=plan, to_load=to_load, stages=found.stages
        )
        found.plugins, found.tools = inspection.plugins, inspection.tools
        found.imports, found.scripts = inspection.imports, inspection.scripts
        found.installed = inspection.installed
        found.notes.extend(note for note in inspection.notes if note not in found.notes)
        found.failures.extend(inspection.failures)
        return None if inspection.probe_failed else to_load

    def _inspect_with_dependents(
        self, installed: Installed, plan: PluginPlan, found: _Findings
    ) -> list[PlannedPlugin] | None:
        """:meth:`_inspect`; then, if what failed imports an application that depends on the
        distribution (``_dependents``), that application installed and :meth:`_inspect` again:
        the second verdict replaces the first, as that is what the application's users meet.
        A module excused as only its users' (``lacks``) is looked for so too."""
        marks = len(found.stages), len(found.failures), len(found.notes)
        to_load = self._inspect(installed, plan, found)
        lacking = found.imports is not None and any(e.lacks for e in found.imports.excused)
        if self.state.request.server is not None or not (found.failures[marks[1] :] or lacking):
            return to_load
        # only where something failed (~6 ms); in process isolation imported ahead, before any
        # package code ran (``_headstart``)
        from sandboxverify.pipeline._dependents import (  # noqa: PLC0415
            add_dependents,
            with_dependents,
        )

        dependents = add_dependents(
            installed,
            found.failures[marks[1] :],
            found.plugins,
            found.imports,
            self.state.options.with_requirements,
        )
        if dependents.requirements:
            del found.stages[marks[0] :], found.failures[marks[1] :], found.notes[marks[2] :]
            also = (*self.state.options.with_requirements, *dependents.requirements)
            to_load = self._inspect(installed, plan, found, also=also)
            found.plugins = with_dependents(found.plugins, dependents.confirmed)
        found.notes.extend(dependents.notes + dependents.after)
        return to_load

    def _smoke(
        self,
        installed: Installed,
        playbook: Playbook,
        to_load: list[PlannedPlugin],
        found: _Findings,
    ) -> None:
        """Stage ``smoke``: the playbook, driven through the plugins' host."""
        options, python = self.state.options, installed.python
        with self.state.stage(found.stages, "smoke", python) as stage:
            driver = smoke_driver(to_load, options.host)
            if driver is None:
                stage.fail_with(no_smoke_driver(python, to_load))
            else:
                found.smoke, failure = run_smoke(
                    installed.sandbox,
                    playbook,
                    dist=str(installed.wheel.name),
                    host=driver.host,
                    server=self.state.request.server,
                    group=driver.ref.group,
                    ctx=installed.ctx,
                    keep_trace=options.keep,
                )
                stage.fail_with(failure)
                stage.summary = f"{playbook.name}: {found.smoke.tool_calls} tool call(s)"
        found.failures.extend(stage.failures)

    def _finish(self, interpreter: Interpreter, paths: SandboxPaths, found: _Findings) -> RunResult:
        """The run's record: a stage that never started is ``skipped``."""
        wheel = found.wheel
        wheel_name = wheel.path.name if wheel else None
        built = (self.from_sdist or wheel.path in self.built.result.built) if wheel else None
        done = {stage.name for stage in found.stages}
        stages = [*found.stages]
        stages.extend(Stage(name, "skipped", 0.0) for name in self.stage_names if name not in done)
        run = Run(
            python=interpreter.version,
            interpreter=str(interpreter.path),
            ok=self.built.result.ok and not found.failures,
            stages=tuple(stages),
            plugins=found.plugins,
            tools=found.tools,
            smoke=found.smoke,
            sandbox=str(paths.root) if self.state.options.keep else None,
            imports=found.imports,
            scripts=found.scripts,
            installed=found.installed,
            os=operating_system(),
            platform=sysconfig.get_platform(),
            wheel=wheel_name,
            wheel_built=built,
        )
        failures = tuple(replace(f, wheel=wheel_name, wheel_built=built) for f in found.failures)
        return RunResult(run, failures, tuple(found.notes))


def sandbox_with_wheel(
    state: CheckState,
    build: BuildResult,
    interpreter: Interpreter,
    paths: SandboxPaths,
    stages: list[Stage],
    *,
    early: EarlySandbox | None = None,
    then: Callable[[Sandbox, Artifact, StageTimer], None] | None = None,
    wheels: Sequence[Artifact] | None = None,
) -> tuple[tuple[Sandbox, Artifact] | None, list[Failure]]:
    """Stages ``venv`` and ``install``: a fresh sandbox with the wheel of ``wheels`` (default:
    the build's) that fits ``interpreter`` (and ``--with``) installed, or the failures that
    stopped it. ``early``: the sandbox, made while the build ran; ``then``: what stage
    ``install`` does once the wheel is in (the applications its plugins need)."""
    python = interpreter.version
    ctx = state.context.for_python(python)
    wheels = build.wheels if wheels is None else wheels
    wheel = select_wheel(wheels, interpreter.version_info)
    if wheel is None:
        return None, [_no_wheel_fits(python, wheels)]
    with state.stage(stages, "venv", python) as timer:
        if early is None:
            sandbox, failure = create_sandbox(interpreter, paths, ctx)
        else:
            sandbox, failure = early.sandbox, early.failure
            timer.own_seconds = early.seconds
        timer.fail_with(failure)
    if timer.failed:
        return None, timer.failures
    with state.stage(stages, "install", python) as timer:
        failures, built = install_building_dependencies(
            state,
            ctx,
            python,
            lambda with_built: install_wheel(
                sandbox,
                wheel.path,
                with_built,
                extra=state.options.with_requirements,
                requires_python=wheel.requires_python,
                requirements=bool(wheel.dependencies),
            ),
        )
        timer.fail_with(*failures)
        timer.summary = wheel.path.name + (
            f" (dependencies built from their sdists: {', '.join(built)})" if built else ""
        )
        if then is not None and not timer.failed:
            then(sandbox, wheel, timer)
    return (None if timer.failed else (sandbox, wheel)), timer.failures


def _no_wheel_fits(python: str, wheels: Sequence[Artifact]) -> Failure:
    return Failure(
        "install_failed",
        f"none of the wheels fits Python {python}: " + ", ".join(w.path.name for w in wheels),
        python=python,
        hint="build a wheel for this interpreter, or drop it from --python",
    )
