"""Stages ``probe``, ``imports`` and ``scripts`` of one sandbox, all at once: they share nothing
but the installed environment."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, replace

from sandboxverify._frozen import frozen
from sandboxverify.artifacts import Artifact
from sandboxverify.pipeline._progress import PluginLoaded
from sandboxverify.pipeline._stages import StageTimer
from sandboxverify.pipeline._state import CheckState, Installed
from sandboxverify.report import (
    Failure,
    ImportsRecord,
    PluginRecord,
    ScriptRecord,
    Stage,
    ToolRecord,
    registrations,
)
from sandboxverify.runtime import EntryPointRef
from sandboxverify.runtime.hosts import SCRIPT_GROUPS
from sandboxverify.sandbox import parallel_map
from sandboxverify.stages import (
    TEST_SUPPORT,
    EarlyResult,
    Expectations,
    ImportRun,
    Judgement,
    PlannedPlugin,
    PluginPlan,
    ProbeOutcome,
    ScriptsOutcome,
    check_scripts,
    early_discovery,
    evaluate,
    failed_plugin_modules,
    judge_imports,
    left_out_by_application,
    loaded_with_extra,
    probe,
    run_imports,
    unexplained_failures,
)


@frozen
class Inspection:
    plugins: tuple[PluginRecord, ...]
    tools: tuple[ToolRecord, ...]
    imports: ImportsRecord | None
    scripts: tuple[ScriptRecord, ...]
    failures: list[Failure]
    probe_failed: bool
    installed: tuple[dict[str, str], ...]
    notes: tuple[str, ...] = ()


@frozen
class _Probed:
    plugins: tuple[PluginRecord, ...]
    tools: tuple[ToolRecord, ...]
    failures: list[Failure]
    installed: tuple[dict[str, str], ...]
    notes: tuple[str, ...]
    #: entry points (``group:name``) their application leaves out here by design, and why
    left_out: Mapping[str, str] = field(default_factory=dict)


class Inspector:
    """What one sandbox is checked for once the wheel is installed, except the smoke run."""

    def __init__(self, state: CheckState, *, also: Sequence[str] | None = None) -> None:
        self.state = state
        self.options = state.options
        #: what an extra's sandbox installs beside ``dist[extra]``: ``--with``, and the
        #: applications that depend on the distribution, once found (``_dependents``)
        self.also = tuple(state.options.with_requirements if also is None else also)

    def inspect(
        self,
        installed: Installed,
        *,
        plan: PluginPlan,
        to_load: Sequence[PlannedPlugin],
        stages: list[Stage],
    ) -> Inspection:
        """Stages ``probe``, ``scripts`` and ``imports``, all at once. The import run cannot
        wait to learn which plugins failed; their modules are judged as skipped afterwards,
        and if one of them stopped the run (it hung or killed the interpreter) the run is
        repeated without them."""
        probe_stages: list[Stage] = []
        imports_stages: list[Stage] = []
        scripts_stages: list[Stage] = []
        imports_timer = self.state.stage(imports_stages, "imports", installed.python)
        # the import run sends discovery before it imports anything: one process fewer
        early = (
            early_discovery(str(installed.wheel.name), plan.groups)
            if self.options.import_all
            else None
        )
        tasks: list[Callable[[], object]] = [
            lambda: self._probe(installed, plan, to_load, probe_stages, early),
            lambda: self._scripts(installed, to_load, scripts_stages),
        ]
        if self.options.import_all:
            tasks.append(lambda: self._start_imports(installed, imports_timer, early))
        try:
            found, scripts, *import_runs = parallel_map(lambda task: task(), tasks, len(tasks))
        finally:
            if early is not None:
                early.close()
        assert isinstance(found, _Probed)
        assert isinstance(scripts, ScriptsOutcome)
        plugins, failures = found.plugins, [*found.failures]
        imports: ImportsRecord | None = None
        notes = list(found.notes)
        if import_runs:
            run = import_runs[0]
            assert isinstance(run, ImportRun)
            imports, imported = self._judge_imports(
                installed,
                run,
                plugins,
                imports_timer,
                installed=found.installed,
                left_out=found.left_out,
            )
            failures, plugins = one_failure_per_cause([*failures, *imported], plugins)
            notes.extend(test_modules_note(imports))
        failures.extend(scripts.failures)
        stages.extend(probe_stages + imports_stages + scripts_stages)
        return Inspection(
            plugins,
            found.tools,
            imports,
            scripts.records,
            failures,
            bool(found.failures),
            found.installed,
            tuple(notes),
        )

    def _probe(
        self,
        installed: Installed,
        plan: PluginPlan,
        to_load: Sequence[PlannedPlugin],
        stages: list[Stage],
        early: EarlyResult | None = None,
    ) -> _Probed:
        """Stage ``probe``: discovery (``early``: as the import run sends it), every plugin
        load, the expectations."""
        python, wheel = installed.python, installed.wheel
        judgement = Judgement()
        with self.state.stage(stages, "probe", python) as stage:
            outcome = probe(
                installed.sandbox,
                dist=str(wheel.name),
                groups=plan.groups,
                planned=[plugin.ref for plugin in plan.plugins if not plugin.named],
                to_load=to_load,
                ctx=installed.ctx,
                wheel=wheel.path,
                early=early,
            )
            if any(load.record.error is not None for load in outcome.loads):
                # imported ahead where package code could write it (``_headstart``)
                from sandboxverify.stages import loaded_with_extras  # noqa: PLC0415

                loads = loaded_with_extras(
                    outcome.loads,
                    to_load,
                    sandbox=installed.sandbox,
                    wheel=wheel,
                    also=self.also,
                    ctx=installed.ctx,
                )
                outcome = replace(outcome, loads=loads)
            plugins = tuple(load.record for load in outcome.loads)
            tools = tuple(tool for load in outcome.loads for tool in load.tools)
            for load in outcome.loads:
                tool_names = tuple(t.name for t in load.tools)
                self.state.on_event(PluginLoaded(python, load.record, tool_names))
            stage.fail_with(*outcome.failures)
            if outcome.discovery is not None and not outcome.failures:
                judgement = self._judge_plugins(python, wheel, plan, outcome)
                stage.fail_with(*judgement.failures)
            stage.summary = judgement.summary or _summary(plugins, tools)
        installed_dists = outcome.discovery.installed if outcome.discovery is not None else ()
        left_out = {
            f"{load.record.group}:{load.record.name}": load.skipped
            for load in outcome.loads
            if load.skipped and load.record.ok and load.failure is None
        }
        return _Probed(plugins, tools, stage.failures, installed_dists, judgement.notes, left_out)

    def _judge_plugins(
        self, python: str, wheel: Artifact, plan: PluginPlan, outcome: ProbeOutcome
    ) -> Judgement:
        """What the probe saw, against what was expected."""
        assert outcome.discovery is not None
        options = self.options
        return evaluate(
            python=python,
            plan=plan,
            discovery=outcome.discovery,
            loads=outcome.loads,
            expected=Expectations(
                options.expect_tools,
                options.exact,
                options.expect_plugins,
                plugins_asked_for=options.host != "auto" or bool(options.groups),
                allow_fail=options.plugin_allow_fail,
            ),
            own_modules=wheel.top_level,
            host=options.host,
        )

    def _scripts(
        self, installed: Installed, to_load: Sequence[PlannedPlugin], stages: list[Stage]
    ) -> ScriptsOutcome:
        """Stage ``scripts``: every console script is there, and its ``--help`` exits 0."""
        with self.state.stage(stages, "scripts", installed.python) as stage:
            ran = check_scripts(
                installed.sandbox,
                [ref for ref in installed.wheel.entry_points if ref.group in SCRIPT_GROUPS],
                skip_help=self.options.skip_script_help,
                # an MCP server's start-up is checked by the host; --help would start it
                servers=[plugin.ref.name for plugin in to_load if plugin.host == "mcp"],
                ctx=installed.ctx,
                wheel=installed.wheel,
                also=self.also,
            )
            stage.fail_with(*ran.failures)
            stage.summary = ran.summary
        return ran

    def _start_imports(
        self, installed: Installed, timer: StageTimer, early: EarlyResult | None
    ) -> ImportRun:
        """Stage ``imports``' run, started (sending ``early`` first); it is judged once the
        probe says which plugins failed (:meth:`_judge_imports`)."""
        timer.start()
        return self._run_imports(installed, exclude={}, early=early)

    def _judge_imports(
        self,
        sandboxed: Installed,
        run: ImportRun,
        plugins: tuple[PluginRecord, ...],
        timer: StageTimer,
        *,
        installed: Sequence[dict[str, str]],
        left_out: Mapping[str, str],
    ) -> tuple[ImportsRecord, tuple[Failure, ...]]:
        """Stage ``imports``, judged: its record and failures; the stage ends here. If a failed
        plugin's module stopped the run, it is repeated without the failed plugins' modules
        (the runtime imports a package before its submodules, so a failed plugin stopped the
        run only if the run stopped in that plugin's own module). The modules that failed for
        a reason of their own are then judged as users meet them (``excuse``): with the extra
        they need, as another platform's, as test code; ``installed``: what the plain install
        holds, by name; ``left_out``: the plugins their application leaves out here by design
        (``group:name`` -> why), whose modules are judged like any module."""
        excluded = failed_plugin_modules(plugins)
        if run.result.get("stopped_at") in excluded:
            again = self._run_imports(sandboxed, exclude=excluded)
            run = ImportRun(again.result, again.failures, run.seconds + again.seconds)
        allow_fail = self.options.import_allow_fail
        failed = left_out_by_application(
            unexplained_failures(run, plugins=plugins, allow_fail=allow_fail, left_out=left_out),
            left_out,
            {
                EntryPointRef(p.name, p.group, p.value).module
                for p in plugins
                if f"{p.group}:{p.name}" not in left_out
            },
        )
        failed = loaded_with_extra(failed, plugins)
        started = time.perf_counter()
        if failed:  # what judges failed modules (imported ahead where package code could write it)
            from sandboxverify.stages import excuse  # noqa: PLC0415
        settled = (
            excuse(
                failed,
                modules=[str(name) for name in run.result.get("modules") or ()],
                sandbox=sandboxed.sandbox,
                wheel=sandboxed.wheel,
                installed={dist["name"]: dist["version"] for dist in installed},
                also=self.also,
                ctx=sandboxed.ctx,
                applications={
                    p.application.name for p in plugins if p.application and p.application.name
                },
            )
            if failed
            else None
        )
        imported = judge_imports(
            run,
            sandbox=sandboxed.sandbox,
            wheel=sandboxed.wheel,
            plugins=plugins,
            allow_fail=allow_fail,
            settled=settled,
            left_out=left_out,
        )
        timer.fail_with(*imported.failures)
        timer.summary = imported.summary
        timer.finish(seconds=run.seconds + time.perf_counter() - started)
        return imported.record, imported.failures

    def _run_imports(
        self, installed: Installed, *, exclude: dict[str, str], early: EarlyResult | None = None
    ) -> ImportRun:
        return run_imports(
            installed.sandbox,
            wheel=installed.wheel,
            skip=_import_skip(self.options.import_skip, installed.wheel),
            exclude=exclude,
            ctx=installed.ctx,
            early=early,
        )


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
    pointed: dict[str, PluginRecord] = {}  # the records that now point at an import failure
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
            pointed[record.name] = replace(
                record, error=replace(record.error, message=record.error.message + pointer)
            )
    kept = [
        replace(f, plugin=owners[id(f)]) if id(f) in owners and f.plugin is None else f
        for f in failures
        if id(f) not in dropped
    ]
    # plugins of one name in several groups are several plugins: each keeps its own record
    return kept, tuple(
        pointed[plugin.name]
        if plugin is records[plugin.name] and plugin.name in pointed
        else plugin
        for plugin in plugins
    )


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


def test_modules_note(record: ImportsRecord) -> list[str]:
    """Warnings about the wheel's contents: the test code it ships, which users never run; and
    the test support it ships for its application's test suites, which only test runs import."""
    excused = [e for e in record.excused if e.reason == "test"]
    support = [e.module for e in excused if e.detail.startswith(TEST_SUPPORT)]
    tests = [e.module for e in excused if not e.detail.startswith(TEST_SUPPORT)]
    notes: list[str] = []
    if tests:
        notes.append(
            f"the wheel ships {len(tests)} test module(s) that fail to import outside their "
            f"test run: {_shown(tests)}; "
            "they were not counted as import failures, but they do not belong in the wheel "
            "(leave the tests out of the package, or exclude them from the wheel)"
        )
    if support:
        notes.append(
            f"the wheel ships {len(support)} test-support module(s) that import test machinery "
            f"only test runs have: {_shown(support)}; "
            "they were not counted as import failures: no entry point or script reaches them "
            "(if users should import them, declare what they import)"
        )
    return notes


def _shown(modules: Sequence[str]) -> str:
    more = len(modules) - 5
    return ", ".join(modules[:5]) + (f" (and {more} more)" if more > 0 else "")
