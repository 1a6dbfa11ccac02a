"""A JSON report read back into a :class:`Report`, so that ``merge`` renders the reports of CI
matrix jobs with the same JUnit and summary code as ``check``.

Only what the renderings need must be there: fields a newer sandboxverify added are ignored, and
optional fields an older one did not write take their defaults. A document that is not a report
v1 raises :class:`ReportFormatError` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast, get_args

from sandboxverify.report._model import (
    REPORT_VERSION,
    ApplicationRecord,
    ArtifactRecord,
    ErrorCode,
    Failure,
    FailureCode,
    FoundBy,
    PluginError,
    PluginRecord,
    Report,
    ReportError,
    ReportWarning,
    Run,
    Stage,
    StageName,
    StageStatus,
    ToolRecord,
    exercise_of,
)
from sandboxverify.report._records import (
    ImportsRecord,
    ScriptRecord,
    SmokeRecord,
    number,
    optional_str,
)


class ReportFormatError(ValueError):
    """The document is not a sandboxverify JSON report (version 1)."""


def report_from_json(document: object) -> Report:
    """The report a ``--json`` document describes."""
    top = _mapping(document, "the document")
    if top.get("version") != REPORT_VERSION:
        raise ReportFormatError(
            f"not a sandboxverify report version {REPORT_VERSION} (version: {top.get('version')!r})"
        )
    failures = [_failure(item, f"failures[{i}]") for i, item in enumerate(_list(top, "failures"))]
    return Report(
        target=str(top.get("target", "")),
        artifacts=tuple(
            _artifact(item, f"artifacts[{i}]")
            for i, item in enumerate(_list(top, "artifacts", required=False))
        ),
        runs=tuple(_run(item, f"runs[{i}]") for i, item in enumerate(_list(top, "runs"))),
        failures=tuple(failures),
        host=str(top.get("host") or ""),
        groups=tuple(str(group) for group in _list(top, "groups", required=False)),
        installer=str(top.get("installer") or ""),
        seconds=number(top.get("seconds")),
        workdir=optional_str(top.get("workdir")),
        expect_tools=tuple(str(t) for t in _list(top, "expect_tools", required=False)),
        with_requirements=tuple(str(r) for r in _list(top, "with", required=False)),
        notes=tuple(str(note) for note in _list(top, "notes", required=False)),
        isolation="namespaces" if top.get("isolation") == "namespaces" else "process",
        isolation_fallback=optional_str(top.get("isolation_fallback")),
        # a report of an older sandboxverify does not say: the network was the host's
        network="none" if top.get("network") == "none" else "host",
        syscall_filter=optional_str(top.get("syscall_filter")),
        error=_error(top.get("error")),
        warnings=tuple(
            _warning(item, f"warnings[{i}]")
            for i, item in enumerate(_list(top, "warnings", required=False))
        ),
        dist_dir=optional_str(top.get("dist_dir")),
    )


def _error(item: object) -> ReportError | None:
    """What stopped the job's check before its verdict (exit 2, 3, 130 or 143), if anything."""
    if not isinstance(item, Mapping):
        return None
    return ReportError(
        cast(ErrorCode, str(item.get("code") or "usage_error")),
        str(item.get("message") or "the check stopped before its verdict"),
        optional_str(item.get("hint")),
    )


def _run(item: object, where: str) -> Run:
    run = _mapping(item, where)
    stages = [_mapping(stage, f"{where}.stages[]") for stage in _list(run, "stages", where)]
    smoke, imports, scripts = run.get("smoke"), run.get("imports"), run.get("scripts")
    return Run(
        python=_str(run, "python", where),
        interpreter=str(run.get("interpreter") or ""),
        ok=run.get("ok") is True,
        stages=tuple(
            Stage(
                cast(StageName, _str(stage, "name", f"{where}.stages[]")),
                cast(StageStatus, _str(stage, "status", f"{where}.stages[]")),
                number(stage.get("seconds")),
            )
            for stage in stages
        ),
        plugins=tuple(
            _plugin(plugin, f"{where}.plugins[{i}]")
            for i, plugin in enumerate(_list(run, "plugins", where, required=False))
        ),
        tools=tuple(
            _tool(tool, f"{where}.tools[{i}]")
            for i, tool in enumerate(_list(run, "tools", where, required=False))
        ),
        smoke=SmokeRecord.from_json(smoke) if isinstance(smoke, Mapping) else None,
        sandbox=optional_str(run.get("sandbox")),
        imports=ImportsRecord.from_json(imports) if isinstance(imports, Mapping) else None,
        scripts=tuple(ScriptRecord.from_json(s) for s in scripts if isinstance(s, Mapping))
        if isinstance(scripts, list)
        else None,
        installed=tuple(
            {str(k): str(v) for k, v in dist.items()}
            for dist in _list(run, "installed", where, required=False)
            if isinstance(dist, Mapping)
        ),
        os=optional_str(run.get("os")),
        platform=optional_str(run.get("platform")),
        wheel=optional_str(run.get("wheel")),
        wheel_built=_optional_bool(run.get("wheel_built")),
    )


def _plugin(item: object, where: str) -> PluginRecord:
    plugin = _mapping(item, where)
    error = plugin.get("error")
    handlers = plugin.get("handlers")
    return PluginRecord(
        name=_str(plugin, "name", where),
        group=str(plugin.get("group") or ""),
        value=str(plugin.get("value") or ""),
        ok=plugin.get("ok") is True,
        error=PluginError(
            type=str(error.get("type") or ""),
            message=str(error.get("message") or ""),
            traceback=str(error.get("traceback") or ""),
            stage=str(error.get("stage") or ""),
        )
        if isinstance(error, Mapping)
        else None,
        seconds=number(plugin.get("seconds")),
        handlers={str(k): int(v) for k, v in handlers.items() if isinstance(v, int)}
        if isinstance(handlers, Mapping)
        else {},
        host=optional_str(plugin.get("host")),
        host_reason=optional_str(plugin.get("host_reason")),
        application=_application(plugin.get("application")),
        extra=optional_str(plugin.get("extra")),
    )


def _application(item: object) -> ApplicationRecord | None:
    if not isinstance(item, Mapping):
        return None
    found_by = item.get("found_by")
    tried = item.get("tried")
    return ApplicationRecord(
        name=optional_str(item.get("name")),
        version=optional_str(item.get("version")),
        found_by=cast(FoundBy, found_by) if found_by in get_args(FoundBy) else None,
        installed=item.get("installed") is True,
        tried=tuple(
            (str(t.get("requirement") or ""), str(t.get("outcome") or ""))
            for t in (tried if isinstance(tried, list) else [])
            if isinstance(t, Mapping)
        ),
    )


def _tool(item: object, where: str) -> ToolRecord:
    tool = _mapping(item, where)
    parameters = tool.get("parameters")
    return ToolRecord(
        name=_str(tool, "name", where),
        plugin=str(tool.get("plugin") or ""),
        description=optional_str(tool.get("description")),
        parameters=dict(parameters) if isinstance(parameters, Mapping) else None,
        kind=str(tool.get("kind") or "tool"),
        exercise=exercise_of(tool.get("exercise")),
        exercise_note=optional_str(tool.get("exercise_note")),
        group=optional_str(tool.get("group")),
    )


def _failure(item: object, where: str) -> Failure:
    failure = _mapping(item, where)
    return Failure(
        cast(FailureCode, _str(failure, "code", where)),
        _str(failure, "message", where),
        python=optional_str(failure.get("python")),
        plugin=optional_str(failure.get("plugin")),
        tool=optional_str(failure.get("tool")),
        hint=optional_str(failure.get("hint")),
        details=optional_str(failure.get("details")),
        module=optional_str(failure.get("module")),
        wheel=optional_str(failure.get("wheel")),
        wheel_built=_optional_bool(failure.get("wheel_built")),
        rule=optional_str(failure.get("rule")),
    )


def _warning(item: object, where: str) -> ReportWarning:
    warning = _mapping(item, where)
    return ReportWarning(
        _str(warning, "code", where),
        _str(warning, "message", where),
        file=optional_str(warning.get("file")),
        hint=optional_str(warning.get("hint")),
    )


def _optional_bool(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _artifact(item: object, where: str) -> ArtifactRecord:
    artifact = _mapping(item, where)
    kind = _str(artifact, "kind", where)
    if kind not in ("sdist", "wheel"):
        raise ReportFormatError(f"{where}.kind: {kind!r} is neither 'sdist' nor 'wheel'")
    return ArtifactRecord(
        kind="sdist" if kind == "sdist" else "wheel",
        filename=_str(artifact, "filename", where),
        sha256=str(artifact.get("sha256") or ""),
        built=artifact.get("built") is True,
        reused=artifact.get("reused") is True,
        kept=optional_str(artifact.get("kept")),
    )


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ReportFormatError(f"{where}: expected an object, found {type(value).__name__}")
    return value


def _list(
    parent: Mapping[str, Any], key: str, where: str = "", *, required: bool = True
) -> list[Any]:
    value = parent.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list):
        found = "nothing" if value is None else type(value).__name__
        raise ReportFormatError(
            f"{where + '.' if where else ''}{key}: expected a list, found {found}"
        )
    return value


def _str(parent: Mapping[str, Any], key: str, where: str) -> str:
    value = parent.get(key)
    if not isinstance(value, str):
        raise ReportFormatError(f"{where}.{key}: expected a string, found {value!r}")
    return value
