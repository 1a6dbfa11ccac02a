"""One interpreter's share of a check: sandbox, install, then probe, imports and scripts at once,
then the smoke run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandboxverify.artifacts._artifacts import Artifact, select_wheel
from sandboxverify.artifacts._build import BuildResult
from sandboxverify.pipeline._events import EventSink, PluginLoaded
from sandboxverify.pipeline._options import CheckOptions
from sandboxverify.pipeline._stages import StageTimer, command_observer
from sandboxverify.report._model import (
    Failure,
    PluginRecord,
    Run,
    Stage,
    StageName,
    ToolRecord,
)
from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.sandbox._interpreters import Interpreter
from sandboxverify.sandbox._subprocess import parallel_map
from sandboxverify.sandbox._toolchain import IndexOptions, Toolchain
from sandboxverify.sandbox._venv import Sandbox, StepSettings, create, install
from sandboxverify.sandbox._workspace import Workspace
from sandboxverify.stages._expectations import Expectations, evaluate
from sandboxverify.stages._imports import (
    ImportRun,
    failed_plugin_modules,
    judge_imports,
    run_imports,
)
from sandboxverify.stages._probe import probe
from sandboxverify.stages._runtime_call import ProbeSettings
from sandboxverify.stages._scripts import SCRIPT_GROUPS, ScriptsOutcome, check_scripts
from sandboxverify.stages._smoke import Playbook
from sandboxverify.stages._smoke import run as run_smoke


@dataclass(frozen=True)
class RunResult:
    run: Run
    failures: tuple[Failure, ...]


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
    ) -> None:
        self.options = options
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
        plugins: tuple[PluginRecord, ...] = ()
        tools: tuple[ToolRecord, ...] = ()
        smoke: dict[str, Any] | None = None
        imports: dict[str, Any] | None = None
        scripts: tuple[dict[str, Any], ...] | None = None
        paths = self.workspace.sandbox(label)
        observer = command_observer(self.on_event, python)
        steps = StepSettings(self.options.pass_env, self.options.install_timeout, observer)

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
            )
            return RunResult(run, tuple(failures))

        if not self.build.ok:
            return finish()
        wheel = select_wheel(self.build.wheels, interpreter.version_info)
        if wheel is None:
            failures.append(
                Failure(
                    "install_failed",
                    f"none of the wheels fits Python {python}: "
                    + ", ".join(w.path.name for w in self.build.wheels),
                    python=python,
                    hint="build a wheel for this interpreter, or drop it from --python",
                )
            )
            return finish()

        with self._stage(stages, "venv", python) as stage:
            sandbox, failure = create(interpreter, paths, self.toolchain.sandbox, steps)
            stage.fail_with(failure)
        failures.extend(stage.failures)
        if stage.failed:
            return finish()

        with self._stage(stages, "install", python) as stage:
            stage.fail_with(
                *install(
                    sandbox,
                    wheel.path,
                    self.toolchain.installer,
                    IndexOptions(self.options.index_url, self.options.find_links),
                    steps,
                    extra=self.options.with_requirements,
                    requires_python=wheel.requires_python,
                )
            )
            stage.summary = wheel.path.name
        failures.extend(stage.failures)
        if stage.failed:
            return finish()

        settings = ProbeSettings(
            runtime=self.runtime,
            pass_env=self.options.pass_env,
            timeout=self.options.timeout,
            observer=observer,
        )
        planned = [ref for ref in wheel.entry_points if ref.group in self.groups]
        to_load = [self.server] if self.server is not None else planned
        # What the wheel ships beyond the plugins is checked even when a plugin failed, so one
        # run shows every problem; the smoke run needs plugins that loaded.
        found = self._inspect(
            sandbox,
            wheel=wheel,
            planned=planned,
            to_load=to_load,
            settings=settings,
            stages=stages,
        )
        plugins, tools, imports, scripts = found.plugins, found.tools, found.imports, found.scripts
        failures.extend(found.failures)
        if found.probe_failed or self.playbook is None:
            return finish()

        with self._stage(stages, "smoke", python) as stage:
            smoke, failure = run_smoke(
                sandbox,
                self.playbook,
                dist=str(wheel.name),
                host=self.options.host,
                server=self.server,
                group=self.groups[0],
                settings=settings,
                keep_trace=self.options.keep,
            )
            stage.fail_with(failure)
            stage.summary = f"{self.playbook.name}: {smoke.get('tool_calls', 0)} tool call(s)"
        failures.extend(stage.failures)
        return finish()

    def _inspect(
        self,
        sandbox: Sandbox,
        *,
        wheel: Artifact,
        planned: Sequence[EntryPointRef],
        to_load: Sequence[EntryPointRef],
        settings: ProbeSettings,
        stages: list[Stage],
    ) -> _Inspection:
        """Stages ``probe``, ``imports`` and ``scripts``, all at once: they share nothing but
        the sandbox. The import run cannot wait to learn which plugins failed; their modules
        are judged as skipped afterwards, and if one of them stopped the run (it hung or
        killed the interpreter) the run is repeated without them."""
        python = sandbox.interpreter.version
        probe_stages: list[Stage] = []
        imports_stages: list[Stage] = []
        scripts_stages: list[Stage] = []
        probed: list[tuple[tuple[PluginRecord, ...], tuple[ToolRecord, ...], list[Failure]]] = []
        import_runs: list[ImportRun] = []
        ran_scripts: list[ScriptsOutcome] = []

        def probe_all() -> None:
            probed.append(
                self._probe(
                    sandbox,
                    wheel,
                    planned=planned,
                    to_load=to_load,
                    settings=settings,
                    stages=probe_stages,
                )
            )

        imports_timer = self._stage(imports_stages, "imports", python)

        def import_all() -> None:
            imports_timer.start()
            import_runs.append(
                run_imports(
                    sandbox,
                    wheel=wheel,
                    skip=self.options.import_skip,
                    exclude={},
                    settings=settings,
                )
            )

        def run_scripts() -> None:
            with self._stage(scripts_stages, "scripts", python) as stage:
                ran = check_scripts(
                    sandbox,
                    [ref for ref in wheel.entry_points if ref.group in SCRIPT_GROUPS],
                    skip_help=self.options.skip_script_help,
                    # an MCP server's start-up is checked by the host; --help would start it
                    servers=[ref.name for ref in to_load] if self.options.host == "mcp" else [],
                    settings=settings,
                )
                stage.fail_with(*ran.failures)
                stage.summary = ran.summary
            ran_scripts.append(ran)

        tasks = [probe_all, run_scripts] + ([import_all] if self.options.import_all else [])
        parallel_map(lambda task: task(), tasks, len(tasks))
        [(plugins, tools, probe_failures)] = probed
        failures = [*probe_failures]
        imports: dict[str, Any] | None = None
        if import_runs:
            run = self._complete_imports(sandbox, wheel, import_runs[0], plugins, settings)
            imported = judge_imports(
                run,
                sandbox=sandbox,
                wheel=wheel,
                plugins=plugins,
                allow_fail=self.options.import_allow_fail,
            )
            imports = imported.record
            imports_timer.fail_with(*imported.failures)
            imports_timer.summary = imported.summary
            imports_timer.finish(seconds=run.seconds)
            failures.extend(imported.failures)
        failures.extend(ran_scripts[0].failures)
        stages.extend(probe_stages + imports_stages + scripts_stages)
        return _Inspection(
            plugins, tools, imports, ran_scripts[0].records, failures, bool(probe_failures)
        )

    def _probe(
        self,
        sandbox: Sandbox,
        wheel: Artifact,
        *,
        planned: Sequence[EntryPointRef],
        to_load: Sequence[EntryPointRef],
        settings: ProbeSettings,
        stages: list[Stage],
    ) -> tuple[tuple[PluginRecord, ...], tuple[ToolRecord, ...], list[Failure]]:
        """Stage ``probe``: discovery, every plugin load, the expectations."""
        python = sandbox.interpreter.version
        with self._stage(stages, "probe", python) as stage:
            outcome = probe(
                sandbox,
                host=self.options.host,
                dist=str(wheel.name),
                groups=self.groups,
                planned=planned,
                settings=settings,
                to_load=to_load,
            )
            plugins = tuple(load.record for load in outcome.loads)
            tools = tuple(tool for load in outcome.loads for tool in load.tools)
            for load in outcome.loads:
                self.on_event(PluginLoaded(python, load.record, tuple(t.name for t in load.tools)))
            stage.fail_with(*outcome.failures)
            if outcome.discovery is not None and not outcome.failures:
                stage.fail_with(
                    *evaluate(
                        python=python,
                        host=self.options.host,
                        groups=self.groups,
                        discovery=outcome.discovery,
                        loads=outcome.loads,
                        expected=Expectations(
                            self.options.expect_tools,
                            self.options.exact,
                            self.options.expect_plugins,
                        ),
                        own_modules=wheel.top_level,
                    )
                )
            stage.summary = f"{len(plugins)} plugin(s), {len(tools)} tool(s)"
        return plugins, tools, stage.failures

    def _complete_imports(
        self,
        sandbox: Sandbox,
        wheel: Artifact,
        run: ImportRun,
        plugins: tuple[PluginRecord, ...],
        settings: ProbeSettings,
    ) -> ImportRun:
        """The import run, repeated without the failed plugins' modules if one of them
        stopped it. The runtime imports a package before its submodules, so a failed plugin
        stopped the run only if the run stopped in that plugin's own module."""
        excluded = failed_plugin_modules(plugins)
        if run.result.get("stopped_at") not in excluded:
            return run
        again = run_imports(
            sandbox,
            wheel=wheel,
            skip=self.options.import_skip,
            exclude=excluded,
            settings=settings,
        )
        return ImportRun(again.result, again.failures, run.seconds + again.seconds)

    def _stage(self, stages: list[Stage], name: StageName, python: str) -> StageTimer:
        return StageTimer(stages, name, python, self.on_event)


@dataclass(frozen=True)
class _Inspection:
    plugins: tuple[PluginRecord, ...]
    tools: tuple[ToolRecord, ...]
    imports: dict[str, Any] | None
    scripts: tuple[dict[str, Any], ...]
    failures: list[Failure]
    probe_failed: bool
