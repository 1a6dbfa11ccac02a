"""Stages ``probe``, ``imports`` and ``scripts`` of one sandbox, all at once: they share nothing
but the installed environment."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sandboxverify.artifacts._artifacts import Artifact
from sandboxverify.pipeline._events import EventSink, PluginLoaded
from sandboxverify.pipeline._options import CheckOptions
from sandboxverify.pipeline._stages import StageTimer
from sandboxverify.report._model import (
    Failure,
    PluginRecord,
    Stage,
    StageName,
    ToolRecord,
    registrations,
)
from sandboxverify.report._records import ImportsRecord, ScriptRecord
from sandboxverify.sandbox._subprocess import parallel_map
from sandboxverify.sandbox._venv import Sandbox
from sandboxverify.stages._expectations import Expectations, Judgement, evaluate
from sandboxverify.stages._hosts import PlannedPlugin, PluginPlan
from sandboxverify.stages._imports import (
    ImportRun,
    failed_plugin_modules,
    judge_imports,
    run_imports,
)
from sandboxverify.stages._probe import probe
from sandboxverify.stages._runtime_call import ProbeSettings
from sandboxverify.stages._scripts import SCRIPT_GROUPS, ScriptsOutcome, check_scripts


@dataclass(frozen=True)
class Inspection:
    plugins: tuple[PluginRecord, ...]
    tools: tuple[ToolRecord, ...]
    imports: ImportsRecord | None
    scripts: tuple[ScriptRecord, ...]
    failures: list[Failure]
    probe_failed: bool
    installed: tuple[dict[str, str], ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Probed:
    plugins: tuple[PluginRecord, ...]
    tools: tuple[ToolRecord, ...]
    failures: list[Failure]
    installed: tuple[dict[str, str], ...]
    notes: tuple[str, ...]


class Inspector:
    """What one sandbox is checked for once the wheel is installed, except the smoke run."""

    def __init__(self, options: CheckOptions, on_event: EventSink) -> None:
        self.options = options
        self.on_event = on_event

    def inspect(
        self,
        sandbox: Sandbox,
        *,
        wheel: Artifact,
        plan: PluginPlan,
        to_load: Sequence[PlannedPlugin],
        settings: ProbeSettings,
        stages: list[Stage],
    ) -> Inspection:
        """The import run cannot wait to learn which plugins failed; their modules are judged
        as skipped afterwards, and if one of them stopped the run (it hung or killed the
        interpreter) the run is repeated without them."""
        python = sandbox.interpreter.version
        probe_stages: list[Stage] = []
        imports_stages: list[Stage] = []
        scripts_stages: list[Stage] = []
        probed: list[_Probed] = []
        import_runs: list[ImportRun] = []
        ran_scripts: list[ScriptsOutcome] = []

        def probe_all() -> None:
            probed.append(
                self._probe(
                    sandbox,
                    wheel,
                    plan=plan,
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
                    skip=_import_skip(self.options.import_skip, wheel),
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
                    servers=[plugin.ref.name for plugin in to_load if plugin.host == "mcp"],
                    settings=settings,
                )
                stage.fail_with(*ran.failures)
                stage.summary = ran.summary
            ran_scripts.append(ran)

        tasks = [probe_all, run_scripts] + ([import_all] if self.options.import_all else [])
        parallel_map(lambda task: task(), tasks, len(tasks))
        [found] = probed
        plugins = found.plugins
        failures = [*found.failures]
        imports: ImportsRecord | None = None
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
            failures, plugins = one_failure_per_cause(failures, plugins)
        failures.extend(ran_scripts[0].failures)
        stages.extend(probe_stages + imports_stages + scripts_stages)
        return Inspection(
            plugins,
            found.tools,
            imports,
            ran_scripts[0].records,
            failures,
            bool(found.failures),
            found.installed,
            found.notes,
        )

    def _probe(
        self,
        sandbox: Sandbox,
        wheel: Artifact,
        *,
        plan: PluginPlan,
        to_load: Sequence[PlannedPlugin],
        settings: ProbeSettings,
        stages: list[Stage],
    ) -> _Probed:
        """Stage ``probe``: discovery, every plugin load, the expectations."""
        python = sandbox.interpreter.version
        judgement = Judgement()
        with self._stage(stages, "probe", python) as stage:
            outcome = probe(
                sandbox,
                dist=str(wheel.name),
                groups=plan.groups,
                planned=[plugin.ref for plugin in plan.plugins],
                to_load=to_load,
                settings=settings,
            )
            plugins = tuple(load.record for load in outcome.loads)
            tools = tuple(tool for load in outcome.loads for tool in load.tools)
            for load in outcome.loads:
                self.on_event(PluginLoaded(python, load.record, tuple(t.name for t in load.tools)))
            stage.fail_with(*outcome.failures)
            if outcome.discovery is not None and not outcome.failures:
                judgement = evaluate(
                    python=python,
                    plan=plan,
                    discovery=outcome.discovery,
                    loads=outcome.loads,
                    expected=Expectations(
                        self.options.expect_tools,
                        self.options.exact,
                        self.options.expect_plugins,
                        plugins_asked_for=self.options.host != "auto" or bool(self.options.groups),
                        allow_fail=self.options.plugin_allow_fail,
                    ),
                    own_modules=wheel.top_level,
                    host=self.options.host,
                )
                stage.fail_with(*judgement.failures)
            stage.summary = judgement.summary or _summary(plugins, tools)
        installed = outcome.discovery.installed if outcome.discovery is not None else ()
        return _Probed(plugins, tools, stage.failures, installed, judgement.notes)

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
            skip=_import_skip(self.options.import_skip, wheel),
            exclude=excluded,
            settings=settings,
        )
        return ImportRun(again.result, again.failures, run.seconds + again.seconds)

    def _stage(self, stages: list[Stage], name: StageName, python: str) -> StageTimer:
        return StageTimer(stages, name, python, self.on_event)


def _summary(plugins: Sequence[PluginRecord], tools: Sequence[ToolRecord]) -> str:
    return f"{len(plugins)} plugin(s) {registrations(tools)}"


def one_failure_per_cause(
    failures: Sequence[Failure], plugins: tuple[PluginRecord, ...]
) -> tuple[list[Failure], tuple[PluginRecord, ...]]:
    """A server that died because one of the distribution's modules does not import is one
    problem, not two: the ``import_failed`` stays (it names the module and the fix) and is
    attributed to the plugin, the server's failure goes, and the plugin's record points at it."""
    imports = [f for f in failures if f.code == "import_failed" and f.module]
    records = {plugin.name: plugin for plugin in plugins}
    owners: dict[int, str] = {}  # id of an import failure -> the plugin it brought down
    dropped: set[int] = set()
    for failure in failures:
        if failure.plugin not in records:
            continue
        cause = _shared_cause(failure, imports)
        if cause is None:
            continue
        record = records[str(failure.plugin)]
        dropped.add(id(failure))
        owners.setdefault(id(cause), record.name)
        if record.error is not None:
            pointer = f" (caused by: {cause.message}; reported as import_failed)"
            records[record.name] = replace(
                record, error=replace(record.error, message=record.error.message + pointer)
            )
    kept = [
        replace(f, plugin=owners[id(f)]) if id(f) in owners and f.plugin is None else f
        for f in failures
        if id(f) not in dropped
    ]
    return kept, tuple(records[plugin.name] for plugin in plugins)


def _shared_cause(failure: Failure, imports: Sequence[Failure]) -> Failure | None:
    if failure.code not in ("probe_crashed", "plugin_load_failed"):
        return None
    said = f"{failure.message}\n{failure.details or ''}"
    for imported in imports:
        error = imported.message.split(" failed to import: ", 1)
        if len(error) == 2 and error[1] and error[1] in said:
            return imported
    return None


def _import_skip(skip: Sequence[str], wheel: Artifact) -> tuple[str, ...]:
    """``--import-skip``, and a stray top-level ``tests``/``test`` the wheel ships: that is
    already an ``artifact_invalid`` failure, and its test modules import test-only packages."""
    return (*skip, *sorted(wheel.top_level & {"tests", "test"}))
