"""The verdict: report v1 (field names are a fixed contract; fields may be added, never renamed)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import field
from typing import Any, Literal, cast, get_args

from sandboxverify._frozen import frozen
from sandboxverify.report._records import ImportsRecord, ScriptRecord, SmokeRecord

REPORT_VERSION = 1
#: the JSON Schema of report v1, named by every report's ``$schema``; the same file ships in the
#: package as ``sandboxverify/schemas/report-v1.schema.json``
REPORT_SCHEMA = (
    "https://raw.githubusercontent.com/sandboxverify/sandboxverify/main/"
    "sandboxverify/schemas/report-v1.schema.json"
)

FailureCode = Literal[
    "build_failed",
    "artifact_invalid",
    "venv_failed",
    "install_failed",
    "dependency_conflict",
    "no_plugins",
    "plugin_load_failed",
    "plugin_empty",
    "plugin_count_mismatch",
    "tool_missing",
    "tool_unexpected",
    "tool_duplicate",
    "import_failed",
    "probe_crashed",
    "timeout",
    "smoke_failed",
    "script_failed",
    "host_modified",
    "artifact_mismatch",
    "limit_exceeded",
    "pyproject_invalid",
    "sdist_incomplete",
]
#: why a check stopped before its verdict: exit 2 (``usage_error``, ``config_error``), 3
#: (``internal_error``), 130 (``interrupted``), 143 (``terminated``)
ErrorCode = Literal["usage_error", "config_error", "internal_error", "interrupted", "terminated"]
StageName = Literal["build", "venv", "install", "probe", "imports", "scripts", "smoke"]
StageStatus = Literal["passed", "failed", "skipped"]
#: how a run of the application with the plugin used one registration
Exercise = Literal["passed", "not_exercised", "unavailable"]


@frozen
class Failure:
    code: FailureCode
    message: str
    python: str | None = None
    plugin: str | None = None
    tool: str | None = None
    hint: str | None = None
    details: str | None = None
    #: the module a failure is about (``import_failed``), dotted
    module: str | None = None
    #: the wheel the run that found it installed, and whether the check built that wheel (as
    #: ``Run``'s): with a wheel and an sdist given, an interpreter has a run of each wheel
    wheel: str | None = None
    wheel_built: bool | None = None
    #: the static rule that found it (``metadata-field-too-new``), when one did
    rule: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "python": self.python,
            "plugin": self.plugin,
            "tool": self.tool,
            "hint": self.hint,
            "details": self.details,
            "module": self.module,
            "wheel": self.wheel,
            "wheel_built": self.wheel_built,
            "rule": self.rule,
        }


@frozen
class ReportWarning:
    """Something worth fixing that fails nothing (unless ``--fail-on-warning`` names its code):
    hygiene a static rule found, or the OS sandbox missing."""

    code: str
    message: str
    #: the file it is about (an artifact, ``pyproject.toml``), or ``None``
    file: str | None = None
    hint: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "file": self.file, "hint": self.hint}


@frozen
class ReportError:
    """What stopped the check before its verdict (the report then has ``ok: false``)."""

    code: ErrorCode
    message: str
    hint: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "hint": self.hint}


@frozen
class ArtifactRecord:
    kind: Literal["sdist", "wheel"]
    filename: str
    sha256: str
    built: bool
    #: built by an earlier check of the very same project, taken from the artifact cache
    reused: bool = False
    #: ``--dist-dir``: where this very file was written, byte for byte, once verified
    kept: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "filename": self.filename,
            "sha256": self.sha256,
            "built": self.built,
            "reused": self.reused,
            "kept": self.kept,
        }


@frozen
class Stage:
    name: StageName
    status: StageStatus
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "seconds": round(self.seconds, 3)}


@frozen
class PluginError:
    type: str
    message: str
    traceback: str
    stage: str

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "message": self.message,
            "traceback": self.traceback,
            "stage": self.stage,
        }


#: how the application of a plugin's group was found: installed with the plugin (``declared``:
#: its dependencies or ``--with``), the distribution itself (``itself``), a requirement of one of
#: its extras (``extra``), its name from the group's (``name``), the registry of known hosts
#: (``registry``), or the distribution named as a module the plugin imports without declaring it,
#: which requires the plugin (``dependent``: its users have the plugin through it)
FoundBy = Literal["declared", "itself", "extra", "name", "registry", "dependent"]


@frozen
class ApplicationRecord:
    """The application that loads a plugin's group, as it was looked for (``name`` ``None``:
    none was found, and the plugin was loaded without it)."""

    name: str | None
    version: str | None = None
    found_by: FoundBy | None = None
    #: sandboxverify installed it in the sandbox: the plugin does not bring it
    installed: bool = False
    #: what was tried and turned down: ``(requirement, why)``
    tried: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "found_by": self.found_by,
            "installed": self.installed,
            "tried": [{"requirement": r, "outcome": outcome} for r, outcome in self.tried],
        }


@frozen
class PluginRecord:
    name: str
    group: str
    value: str
    ok: bool
    error: PluginError | None = None
    seconds: float = 0.0
    handlers: dict[str, int] = field(default_factory=dict)
    #: the host that judged the plugin, and why (``--host auto``: its group chose it)
    host: str | None = None
    host_reason: str | None = None
    #: the application that loads the plugin's group, where one was looked for
    application: ApplicationRecord | None = None
    #: the extra it was loaded with: it lacked its application, which that extra brings
    extra: str | None = None

    def to_json(self) -> dict[str, Any]:
        document = {
            "name": self.name,
            "group": self.group,
            "value": self.value,
            "ok": self.ok,
            "error": self.error.to_json() if self.error else None,
            "seconds": round(self.seconds, 3),
            "handlers": dict(self.handlers),
            "host": self.host,
            "host_reason": self.host_reason,
            "application": self.application.to_json() if self.application else None,
        }
        if self.extra is not None:
            document["extra"] = self.extra
        return document


@frozen
class ToolRecord:
    name: str
    plugin: str
    description: str | None
    parameters: dict[str, Any] | None = None
    #: what the plugin's application knows the registration as: ``tool``, ``fixture``,
    #: ``model``, ``command``, ``hook``, ``code``, ``theme``...
    kind: str = "tool"
    #: whether the application, run with the plugin, used it: ``passed``, ``not_exercised``
    #: (the run does not reach it), ``unavailable`` (it needs what the sandbox lacks: a
    #: service, an extra), or ``None`` (its host does not run it)
    exercise: Exercise | None = None
    #: why not exercised or unavailable, or what the run did with it
    exercise_note: str | None = None
    #: the entry-point group of the plugin (two plugins of one name in two groups are two);
    #: ``None`` in a report older than the field
    group: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "plugin": self.plugin,
            "group": self.group,
            "description": self.description,
            "parameters": self.parameters,
            "kind": self.kind,
            "exercise": self.exercise,
            "exercise_note": self.exercise_note,
        }

    def of(self, plugin: PluginRecord) -> bool:
        """Whether ``plugin`` registered it (by name and group; by name alone in an older
        report)."""
        return self.plugin == plugin.name and self.group in (None, plugin.group)


def exercise_of(value: object) -> Exercise | None:
    """A registration's ``exercise`` as the runtime or a report says it; anything else (a
    report older than the field) is ``None``."""
    return cast(Exercise, value) if value in get_args(Exercise) else None


def registrations(tools: Iterable[ToolRecord]) -> str:
    """What the plugins register, counted by kind: ``registering 1 fixture(s), 2 hook(s)``."""
    kinds: dict[str, set[str]] = {}
    for tool in tools:
        kinds.setdefault(tool.kind, set()).add(tool.name)
    if not kinds:
        return "registering nothing"
    return "registering " + ", ".join(f"{len(names)} {kind}(s)" for kind, names in kinds.items())


def plugins_registering(runs: Iterable[Run]) -> str:
    """The verdict's count: ``2 plugin(s) registering 3 tool(s)``, or ``no plugins`` (a
    library, or a check that stopped before any plugin loaded)."""
    runs = list(runs)
    plugins = {(plugin.group, plugin.name) for run in runs for plugin in run.plugins}
    if not plugins:
        return "no plugins"
    return f"{len(plugins)} plugin(s) {registrations(t for run in runs for t in run.tools)}"


@frozen
class Run:
    python: str
    interpreter: str
    ok: bool
    stages: tuple[Stage, ...]
    plugins: tuple[PluginRecord, ...] = ()
    tools: tuple[ToolRecord, ...] = ()
    smoke: SmokeRecord | None = None
    sandbox: str | None = None
    #: stage ``imports``: every module of the wheel imported in the sandbox
    imports: ImportsRecord | None = None
    #: stage ``scripts``: the distribution's console scripts, each with its ``--help`` outcome
    scripts: tuple[ScriptRecord, ...] | None = None
    #: every distribution installed in the sandbox, ``{"name", "version"}``, sorted by name
    installed: tuple[dict[str, str], ...] = ()
    #: the machine the run was on: its operating system (``Linux``, ``macOS``, ``Windows``) and
    #: platform as ``sysconfig.get_platform()`` spells it (``linux-x86_64``), which tell the runs
    #: of a report merged from CI matrix jobs apart
    os: str | None = None
    platform: str | None = None
    #: the wheel the run installed (``None``: none was), and whether the check built it (from
    #: the sdist) rather than being given it: given a wheel and an sdist, each interpreter has
    #: a run of the given wheel and one of the wheel built from the sdist
    wheel: str | None = None
    wheel_built: bool | None = None

    def to_json(self) -> dict[str, Any]:
        # a stage that did not run leaves its field empty, never null: consumers read the
        # documented type whatever happened (the stage's status says whether it ran)
        return {
            "python": self.python,
            "interpreter": self.interpreter,
            "ok": self.ok,
            "stages": [stage.to_json() for stage in self.stages],
            "plugins": [plugin.to_json() for plugin in self.plugins],
            "tools": [tool.to_json() for tool in self.tools],
            "smoke": self.smoke.to_json() if self.smoke is not None else None,
            "sandbox": self.sandbox,
            "imports": (self.imports if self.imports is not None else ImportsRecord()).to_json(),
            "scripts": [script.to_json() for script in self.scripts or ()],
            "installed": [dict(dist) for dist in self.installed],
            "os": self.os,
            "platform": self.platform,
            "wheel": self.wheel,
            "wheel_built": self.wheel_built,
        }


def wheel_origin(wheel_built: bool | None, runs: Iterable[Run]) -> str | None:
    """What tells a run (or its failure) from the other run of its interpreter: ``wheel as
    given`` or ``wheel built from the sdist``, when the runs installed both kinds; else
    ``None`` (every run's wheel came the same way, and the interpreter names the run)."""
    kinds = {run.wheel_built for run in runs if run.wheel is not None}
    if wheel_built is None or kinds != {True, False}:
        return None
    return "wheel built from the sdist" if wheel_built else "wheel as given"


def run_of(failure: Failure, runs: Sequence[Run]) -> Run | None:
    """The run that found ``failure``: its interpreter's, the one of its wheel when the failure
    says (a report of an older sandboxverify does not: the first run of the interpreter)."""
    return next(
        (
            run
            for run in runs
            if run.python == failure.python
            and (failure.wheel_built is None or run.wheel_built == failure.wheel_built)
        ),
        None,
    )


@frozen
class Report:
    target: str
    artifacts: tuple[ArtifactRecord, ...]
    runs: tuple[Run, ...]
    failures: tuple[Failure, ...]
    host: str
    groups: tuple[str, ...]
    installer: str
    seconds: float
    workdir: str | None = None
    version: int = REPORT_VERSION
    #: ``--expect-tools``, as asked
    expect_tools: tuple[str, ...] = ()
    #: ``--with``: requirements installed next to the wheel
    with_requirements: tuple[str, ...] = ()
    #: what the check decided on the user's behalf and they should know (``--python min``
    #: raising the floor; a distribution verified as a library)
    notes: tuple[str, ...] = ()
    #: how code from the package ran: ``namespaces`` (the OS sandbox) or ``process``
    isolation: str = "process"
    #: why the OS sandbox was not used although it was not declined (``--isolation auto``)
    isolation_fallback: str | None = None
    #: what package code reached of the network: ``none`` (the OS sandbox's own, loopback
    #: only) or ``host`` (``--network``, and always without the OS sandbox)
    network: str = "host"
    #: the architecture whose system call filter package code ran under, or ``None``: none
    syscall_filter: str | None = None
    #: what stopped the check before its verdict (a usage error, a bug, an interrupt)
    error: ReportError | None = None
    #: what is worth fixing but fails nothing (hygiene, the OS sandbox missing)
    warnings: tuple[ReportWarning, ...] = ()
    #: ``--dist-dir``: the directory the verified artifacts were written to (``None``: not
    #: asked, or not written because the check failed)
    dist_dir: str | None = None

    @property
    def ok(self) -> bool:
        return (
            self.error is None
            and not self.failures
            and bool(self.runs)
            and all(run.ok for run in self.runs)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "$schema": REPORT_SCHEMA,
            "version": self.version,
            "ok": self.ok,
            "target": self.target,
            "host": self.host,
            "groups": list(self.groups),
            "installer": self.installer,
            "seconds": round(self.seconds, 3),
            "workdir": self.workdir,
            "expect_tools": list(self.expect_tools),
            "with": list(self.with_requirements),
            "notes": list(self.notes),
            "isolation": self.isolation,
            "isolation_fallback": self.isolation_fallback,
            "network": self.network,
            "syscall_filter": self.syscall_filter,
            "artifacts": [artifact.to_json() for artifact in self.artifacts],
            "runs": [run.to_json() for run in self.runs],
            "failures": [failure.to_json() for failure in self.failures],
            "warnings": [warning.to_json() for warning in self.warnings],
            "dist_dir": self.dist_dir,
            "error": self.error.to_json() if self.error else None,
        }


def stopped_report(error: ReportError, *, target: str, seconds: float = 0.0) -> Report:
    """The report of a command that stopped before it had one (a usage error, a bug, a signal):
    nothing checked, ``ok: false``, and the error."""
    return Report(
        target=target,
        artifacts=(),
        runs=(),
        failures=(),
        host="auto",
        groups=(),
        installer="auto",
        seconds=seconds,
        error=error,
    )
