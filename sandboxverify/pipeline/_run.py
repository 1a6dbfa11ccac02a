"""One interpreter's share of a check: sandbox, install, then probe, imports and scripts at once,
then the smoke run."""

from __future__ import annotations

import platform
import sysconfig
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sandboxverify.artifacts._artifacts import Artifact, select_wheel
from sandboxverify.artifacts._build import BuildResult
from sandboxverify.pipeline._ahead import Premade, step_settings
from sandboxverify.pipeline._events import EventSink
from sandboxverify.pipeline._inspect import Inspector
from sandboxverify.pipeline._options import CheckOptions
from sandboxverify.pipeline._stages import StageTimer, command_observer
from sandboxverify.report._model import Failure, PluginRecord, Run, Stage, StageName, ToolRecord
from sandboxverify.report._records import ImportsRecord, ScriptRecord, SmokeRecord
from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.sandbox._interpreters import Interpreter
from sandboxverify.sandbox._isolation import PROCESS, Isolation
from sandboxverify.sandbox._toolchain import IndexOptions, Toolchain
from sandboxverify.sandbox._venv import Sandbox, StepSettings, create, install
from sandboxverify.sandbox._workspace import SandboxPaths, Workspace
from sandboxverify.stages._hosts import PlannedPlugin, no_smoke_driver, plan_plugins, smoke_driver
from sandboxverify.stages._runtime_call import ProbeSettings
from sandboxverify.stages._smoke import Playbook
from sandboxverify.stages._smoke import run as run_smoke

#: ``platform.system()`` names as people (and CI runners' ``RUNNER_OS``) say them
_OS_NAMES = {"Darwin": "macOS"}


def operating_system() -> str:
    """The operating system this runs on: ``Linux``, ``macOS``, ``Windows``..."""
    system = platform.system() or "unknown"
    return _OS_NAMES.get(system, system)


@dataclass(frozen=True)
class RunResult:
    run: Run
    failures: tuple[Failure, ...]
    #: what the run decided on the user's behalf (a distribution verified as a library)
    notes: tuple[str, ...] = ()


class Verifier:
    """One interpreter's share of the check: sandbox, install, probe, expectations."""

    def __init__(
        self,
        *,
        options: CheckOptions,
        groups: tuple[str, ...],
        toolchain: Toolchain,
        workspace: Workspace,
        build: BuildResult,
        runtime: Path,
        on_event: EventSink,
        playbook: Playbook | None,
        server: EntryPointRef | None = None,
        isolation: Isolation = PROCESS,
        premade: Mapping[str, Premade] | None = None,
    ) -> None:
        self.options = options
        #: sandboxes made while the build ran, by label
        self.premade = dict(premade or {})
        self.isolation = isolation
        self.server = server
        self.groups = groups
        self.toolchain = toolchain
        self.workspace = workspace
        self.build = build
        self.runtime = runtime
        self.on_event = on_event
        self.playbook = playbook
        self.stage_names: tuple[StageName, ...] = (
            ("venv", "install", "probe")
            + (("imports",) if options.import_all else ())
            + ("scripts",)
            + (("smoke",) if playbook else ())
        )

    def run(self, interpreter: Interpreter, label: str) -> RunResult:
        python = interpreter.version
        stages: list[Stage] = [
            Stage("build", "passed" if self.build.ok else "failed", self.build.seconds)
        ]
        failures: list[Failure] = []
        notes: list[str] = []
        plugins: tuple[PluginRecord, ...] = ()
        tools: tuple[ToolRecord, ...] = ()
        smoke: SmokeRecord | None = None
        imports: ImportsRecord | None = None
        scripts: tuple[ScriptRecord, ...] | None = None
        installed: tuple[dict[str, str], ...] = ()
        paths = self.workspace.sandbox(label)
        observer = command_observer(self.on_event, python)
        steps = step_settings(self.options, observer, self.isolation)

        def finish() -> RunResult:
            done = {stage.name for stage in stages}
            stages.extend(
                Stage(name, "skipped", 0.0) for name in self.stage_names if name not in done
            )
            run = Run(
                python=python,
                interpreter=str(interpreter.path),
                ok=self.build.ok and not failures,
                stages=tuple(stages),
                plugins=plugins,
                tools=tools,
                smoke=smoke,
                sandbox=str(paths.root) if self.options.keep else None,
                imports=imports,
                scripts=scripts,
                installed=installed,
                os=operating_system(),
                platform=sysconfig.get_platform(),
            )
            return RunResult(run, tuple(failures), tuple(notes))

        if not self.build.installable:
            return finish()
        ready, failed = sandbox_with_wheel(
            interpreter,
            paths,
            build=self.build,
            toolchain=self.toolchain,
            options=self.options,
            steps=steps,
            stage=lambda name: self._stage(stages, name, python),
            premade=self.premade.get(label),
        )
        failures.extend(failed)
        if ready is None:
            return finish()
        sandbox, wheel = ready

        settings = ProbeSettings(
            runtime=self.runtime,
            pass_env=self.options.pass_env,
            timeout=self.options.timeout,
            observer=observer,
            isolation=self.isolation,
        )
        plan = plan_plugins(
            wheel.entry_points,
            wheel.dependencies,
            host=self.options.host,
            groups=self.groups,
            callable_groups=self.options.callable_groups,
            hookspecs=self.options.hookspecs_by_group,
        )
        to_load = (
            [PlannedPlugin(self.server, "mcp", "--server-command")]
            if self.server is not None
            else list(plan.plugins)
        )
        # What the wheel ships beyond the plugins is checked even when a plugin failed, so one
        # run shows every problem; the smoke run needs plugins that loaded.
        found = Inspector(self.options, self.on_event).inspect(
            sandbox, wheel=wheel, plan=plan, to_load=to_load, settings=settings, stages=stages
        )
        plugins, tools, imports, scripts = found.plugins, found.tools, found.imports, found.scripts
        installed = found.installed
        notes.extend(note for note in found.notes if note not in notes)
        failures.extend(found.failures)
        if found.probe_failed or self.playbook is None:
            return finish()

        with self._stage(stages, "smoke", python) as stage:
            driver = smoke_driver(to_load, self.options.host)
            if driver is None:
                stage.fail_with(no_smoke_driver(python, to_load))
            else:
                smoke, failure = run_smoke(
                    sandbox,
                    self.playbook,
                    dist=str(wheel.name),
                    host=driver.host,
                    server=self.server,
                    group=driver.ref.group,
                    settings=settings,
                    keep_trace=self.options.keep,
                )
                stage.fail_with(failure)
                stage.summary = f"{self.playbook.name}: {smoke.tool_calls} tool call(s)"
        failures.extend(stage.failures)
        return finish()

    def _stage(self, stages: list[Stage], name: StageName, python: str) -> StageTimer:
        return StageTimer(stages, name, python, self.on_event)


def sandbox_with_wheel(
    interpreter: Interpreter,
    paths: SandboxPaths,
    *,
    build: BuildResult,
    toolchain: Toolchain,
    options: CheckOptions,
    steps: StepSettings,
    stage: Callable[[StageName], StageTimer],
    premade: Premade | None = None,
) -> tuple[tuple[Sandbox, Artifact] | None, list[Failure]]:
    """Stages ``venv`` and ``install``: a fresh sandbox with the wheel that fits
    ``interpreter`` (and ``--with``) installed, or the failures that stopped it. ``premade``:
    the sandbox, made while the build ran."""
    python = interpreter.version
    wheel = select_wheel(build.wheels, interpreter.version_info)
    if wheel is None:
        return None, [
            Failure(
                "install_failed",
                f"none of the wheels fits Python {python}: "
                + ", ".join(w.path.name for w in build.wheels),
                python=python,
                hint="build a wheel for this interpreter, or drop it from --python",
            )
        ]
    with stage("venv") as timer:
        if premade is None:
            sandbox, failure = create(interpreter, paths, toolchain.sandbox, steps)
        else:
            sandbox, failure = premade.sandbox, premade.failure
            timer.own_seconds = premade.seconds
        timer.fail_with(failure)
    if timer.failed:
        return None, timer.failures

    with stage("install") as timer:
        timer.fail_with(
            *install(
                sandbox,
                wheel.path,
                toolchain.installer,
                IndexOptions(options.index_url, options.find_links),
                steps,
                extra=options.with_requirements,
                requires_python=wheel.requires_python,
                requirements=bool(wheel.dependencies),
            )
        )
        timer.summary = wheel.path.name
    return (None if timer.failed else (sandbox, wheel)), timer.failures
