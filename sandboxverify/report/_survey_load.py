"""Survey results read back: a results file (JSON Lines) to resume a run or to merge shards,
each record checked as it is read; and the shards of one survey put together."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast, get_args

from sandboxverify._frozen import frozen
from sandboxverify.report._survey import (
    SURVEY_VERSION,
    Application,
    ApplicationSource,
    PluginArtifact,
    PluginList,
    PluginResult,
    ShardRecord,
    SideFailure,
    SideResult,
    SideStatus,
    Survey,
    SurveyClass,
    SurveyHeader,
)


class SurveyFormatError(ValueError):
    """Not a survey's results, or not this version's; the message says what is wrong."""


@frozen
class ResultsFile:
    """A results file as read: its header, its results in order, and whether its last line
    was cut short (a run killed in the middle of a write)."""

    path: Path
    header: SurveyHeader
    results: tuple[PluginResult, ...]
    #: how many bytes of the file are whole lines (what a resumed run keeps)
    whole: int
    truncated: bool


def is_survey_results(path: Path) -> bool:
    """A file whose first line is a survey's header (``merge`` tells shards from check reports
    by this)."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(1 << 20)
        document = json.loads(first)
    except (OSError, ValueError):
        return False
    return isinstance(document, dict) and document.get("record") == "survey"


def read_results(path: Path) -> ResultsFile:
    """The results file at ``path``; raises :class:`SurveyFormatError` (or ``OSError``)."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    # a last line without its newline was being written when the run was killed: not a result
    truncated = bool(lines[-1].strip())
    whole_lines = lines[:-1]
    if not whole_lines:
        raise SurveyFormatError("it holds no survey header")
    header = header_from_json(_line(whole_lines[0], 1))
    results = tuple(
        result_from_json(_line(line, number))
        for number, line in enumerate(whole_lines[1:], start=2)
        if line.strip()
    )
    whole = len(data) - len(lines[-1])
    return ResultsFile(path, header, results, whole, truncated)


def _line(raw: bytes, number: int) -> Mapping[str, Any]:
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise SurveyFormatError(f"line {number} is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise SurveyFormatError(f"line {number} is not a JSON object")
    return document


def header_from_json(document: Mapping[str, Any]) -> SurveyHeader:
    if document.get("record") != "survey":
        raise SurveyFormatError("its first line is not a survey header")
    if document.get("version") != SURVEY_VERSION:
        raise SurveyFormatError(
            f"survey version {document.get('version')!r} is not {SURVEY_VERSION}"
        )
    return SurveyHeader(
        baseline=application_from_json(document.get("baseline")),
        candidate=application_from_json(document.get("candidate")),
        plugins=tuple(_strings(document.get("plugins"), "plugins")),
        shard=_shard(document.get("shard")),
        python=_text(document.get("python"), "python"),
        sandboxverify=_text(document.get("sandboxverify"), "sandboxverify"),
        listed=_plugin_list(document.get("list")),
    )


def _plugin_list(value: Any) -> PluginList | None:
    if value is None:  # written before the list was recorded
        return None
    if not isinstance(value, dict):
        raise SurveyFormatError("its plugin list is not an object")
    count = value.get("plugins")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise SurveyFormatError("its plugin list has no count of plugins")
    return PluginList(_text(value.get("sha256"), "sha256"), count)


def application_from_json(value: Any) -> Application:
    if not isinstance(value, dict):
        raise SurveyFormatError("an application is not an object")
    source = value.get("source")
    if source not in get_args(ApplicationSource):
        raise SurveyFormatError(f"unknown application source {source!r}")
    return Application(
        _text(value.get("name"), "name"),
        _text(value.get("version"), "version"),
        _text(value.get("given"), "given"),
        cast(ApplicationSource, source),
        tuple(_strings(value.get("excused", []), "excused")),
    )


def result_from_json(document: Mapping[str, Any]) -> PluginResult:
    if document.get("record") != "plugin":
        raise SurveyFormatError(f"a line is a {document.get('record')!r} record, not a plugin's")
    survey_class = document.get("class")
    if survey_class not in get_args(SurveyClass):
        raise SurveyFormatError(f"unknown class {survey_class!r}")
    artifact = document.get("artifact")
    return PluginResult(
        requirement=_text(document.get("requirement"), "requirement"),
        name=_text(document.get("name"), "name"),
        version=_optional(document.get("version")),
        artifact=PluginArtifact(
            artifact["kind"], artifact["filename"], artifact.get("sha256"), artifact["url"]
        )
        if isinstance(artifact, dict)
        else None,
        survey_class=cast(SurveyClass, survey_class),
        reason=_text(document.get("reason"), "reason"),
        baseline=_side(document.get("baseline")),
        candidate=_side(document.get("candidate")),
        same_cause=document.get("same_cause")
        if isinstance(document.get("same_cause"), bool)
        else None,
        seconds=float(document.get("seconds") or 0.0),
    )


def _side(value: Any) -> SideResult | None:
    if value is None:
        return None
    if not isinstance(value, dict) or value.get("status") not in get_args(SideStatus):
        raise SurveyFormatError("a side of a result is not a check's outcome")
    failures = tuple(
        SideFailure(
            _text(f.get("code"), "code"),
            str(f.get("message") or ""),
            _optional(f.get("plugin")),
            _optional(f.get("module")),
            _optional(f.get("hint")),
            _optional(f.get("details")),
        )
        for f in value.get("failures") or ()
        if isinstance(f, dict)
    )
    return SideResult(
        status=cast(SideStatus, value["status"]),
        application_version=_optional(value.get("application_version")),
        failures=failures,
        error=_optional(value.get("error")),
        seconds=float(value.get("seconds") or 0.0),
        isolation=_optional(value.get("isolation")),
    )


def merge_results(files: Sequence[ResultsFile], *, seconds: float = 0.0) -> Survey:
    """The shards of one survey as one: the same application, releases and Python; each shard
    once, of one split; what any shard left unchecked, and any shard of the split not given,
    said as such. Raises :class:`SurveyFormatError` for files that are not one survey."""
    first = files[0].header
    for part in files[1:]:
        if part.header.identity != first.identity:
            raise SurveyFormatError(
                f"{part.path} is a survey of {_said(part.header)}, "
                f"{files[0].path} of {_said(first)}"
            )
    _one_list(files)
    missing = _missing_shards(files)
    results: dict[str, PluginResult] = {}
    not_checked: list[str] = []
    for part in files:
        done = {result.requirement: result for result in part.results}
        results.update(done)
        not_checked += [plugin for plugin in part.header.plugins if plugin not in done]
    return Survey(
        baseline=first.baseline,
        candidate=first.candidate,
        python=first.python,
        results=tuple(results.values()),
        not_checked=tuple(not_checked),
        missing_shards=tuple(missing),
        shards=tuple(
            ShardRecord(
                str(part.path), part.header.shard, len(part.header.plugins), len(part.results)
            )
            for part in files
        ),
        seconds=seconds,
    )


def _one_list(files: Sequence[ResultsFile]) -> None:
    """Raises :class:`SurveyFormatError` unless every shard was cut from the same plugin list
    (files that do not say theirs are taken as they come): shards of two lists would merge
    into a survey that silently lacks the plugins of each list's other shards."""
    said = [(part.path, part.header.listed) for part in files if part.header.listed is not None]
    for path, listed in said[1:]:
        first_path, first = said[0]
        if listed != first:
            sizes = (
                f"{listed.plugins} plugins against {first.plugins}"
                if listed.plugins != first.plugins
                else f"both of {listed.plugins} plugins, not the same ones"
            )
            raise SurveyFormatError(
                f"{path} is a shard of another plugin list than {first_path} ({sizes})"
            )


def _missing_shards(files: Sequence[ResultsFile]) -> list[str]:
    """The shards of the split the files are part of that none of them is; raises
    :class:`SurveyFormatError` unless they are distinct shards of one split."""
    seen: dict[tuple[int, int] | None, Path] = {}
    for part in files:
        shard = part.header.shard
        if shard in seen:
            what = "the whole survey" if shard is None else f"shard {shard[0]}/{shard[1]}"
            raise SurveyFormatError(f"{what} is given twice: {seen[shard]} and {part.path}")
        seen[shard] = part.path
    if None in seen and len(seen) > 1:
        sharded = next(path for shard, path in seen.items() if shard is not None)
        raise SurveyFormatError(
            f"{seen[None]} holds a whole survey (no --shard), {sharded} a shard of one"
        )
    counts = {shard[1] for shard in seen if shard is not None}
    if len(counts) > 1:
        raise SurveyFormatError(
            "the results come from different splits (--shard K/N with different N: "
            f"{', '.join(map(str, sorted(counts)))})"
        )
    if not counts:
        return []
    (count,) = counts
    given = {shard[0] for shard in seen if shard is not None}
    return [f"{k}/{count}" for k in range(1, count + 1) if k not in given]


def _said(header: SurveyHeader) -> str:
    return f"{header.baseline.label} -> {header.candidate.label} on Python {header.python}"


def _shard(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    if (
        isinstance(value, dict)
        and isinstance(value.get("index"), int)
        and isinstance(value.get("count"), int)
    ):
        return (value["index"], value["count"])
    raise SurveyFormatError("its shard is not {index, count}")


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise SurveyFormatError(f"{what} is not a string")
    return value


def _optional(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _strings(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise SurveyFormatError(f"{what} is not a list of strings")
    return value
