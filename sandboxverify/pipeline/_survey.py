"""``survey``: does an application's next release break its plugins? Each plugin is checked as
``check`` checks it, once with the baseline release and once with the candidate, by bounded
parallel workers, each check in fresh sandboxes of its own (uv's cache shares the downloads;
the candidate is built once). Results stream to a JSON Lines file as they are found: a run
again with the same file checks only what it lacks, and an interrupt leaves it whole.
"""

from __future__ import annotations

import hashlib
import platform
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Callable, Union

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from sandboxverify._errors import Interrupted, UsageError
from sandboxverify._frozen import frozen
from sandboxverify._version import __version__
from sandboxverify.artifacts import PackageIndex, default_root
from sandboxverify.options import SurveyOptions
from sandboxverify.pipeline._survey_plugin import PluginSurveyor
from sandboxverify.pipeline._survey_results import ResultsLog, check_resumable
from sandboxverify.pipeline._survey_sides import application_name, resolve_releases
from sandboxverify.report import (
    PluginList,
    PluginResult,
    Survey,
    SurveyHeader,
    merge_results,
    read_results,
)
from sandboxverify.sandbox import parallel_map, shutting_down, supervised


@frozen
class SurveyStarted:
    """The releases are known and the results file open: ``todo`` plugins to check of
    ``total`` (the rest are in the file already)."""

    header: SurveyHeader
    total: int
    todo: int
    workers: int


@frozen
class PluginSurveyed:
    """A plugin's result, written to the results file; ``done`` of ``todo`` so far."""

    result: PluginResult
    done: int
    todo: int


SurveyEvent = Union[SurveyStarted, PluginSurveyed]
SurveySink = Callable[[SurveyEvent], None]


def _ignore(event: SurveyEvent) -> None:
    del event


def survey(options: SurveyOptions, on_event: SurveySink = _ignore) -> Survey:
    """Survey the plugins ``options`` lists; raises :class:`UsageError` on bad input only.
    The result is read back from the results file (so it holds an earlier run's results too)."""
    started = time.perf_counter()
    requirements = plugin_requirements(options.plugins)
    python = Version(platform.python_version())
    index = PackageIndex(options.index_url, options.find_links)
    share = [r for r in requirements if in_shard(r, options.share)]
    check_resumable(
        Path(options.results),
        options.share,
        application=application_name(options.application),
        python=str(python),
    )
    with tempfile.TemporaryDirectory(prefix="sandboxverify-survey-") as work:
        links = Path(work) / "applications"
        releases = resolve_releases(options, index, links, python)
        header = SurveyHeader(
            releases.baseline,
            releases.candidate,
            tuple(share),
            options.share,
            str(python),
            __version__,
            plugin_list(requirements),
        )
        surveyor = PluginSurveyor(
            options, releases, index, links, default_root() / "survey-downloads", python
        )
        with ResultsLog(Path(options.results), header, retry_errors=options.retry_errors) as log:
            done = log.done
            todo = [r for r in share if r not in done]
            on_event(SurveyStarted(header, len(share), len(todo), options.workers))
            _check_all(surveyor, log, todo, options.workers, on_event)
    return finished(Path(options.results), time.perf_counter() - started)


def _check_all(
    surveyor: PluginSurveyor,
    log: ResultsLog,
    todo: Sequence[str],
    workers: int,
    on_event: SurveySink,
) -> None:
    count = [0]

    def one(requirement: str) -> None:
        result = surveyor.survey(requirement)
        if shutting_down():  # its checks were stopped by the interrupt: not a result
            raise Interrupted("interrupted")
        log.append(result)
        count[0] += 1
        on_event(PluginSurveyed(result, count[0], len(todo)))

    with supervised():
        parallel_map(one, todo, max_workers=workers)


def finished(results: Path, seconds: float, *, stopped: str | None = None) -> Survey:
    """The survey its results file holds (what a stopped run got done, the rest not checked)."""
    merged = merge_results([read_results(results)], seconds=seconds)
    return merged if stopped is None else _stopped(merged, stopped)


def _stopped(survey: Survey, why: str) -> Survey:
    from dataclasses import replace  # noqa: PLC0415

    return replace(survey, stopped=why)


def plugin_requirements(given: Sequence[str]) -> list[str]:
    """The plugins: requirements given, and those of the files given (one a line, ``#``
    comments), each once, in order; raises :class:`UsageError` for what is no requirement."""
    found: list[str] = []
    seen: set[str] = set()
    for item in given:
        path = Path(item)
        if path.is_file():
            lines = path.read_text(encoding="utf-8").splitlines()
            entries = [
                (f"{item}:{n}", line.split("#", 1)[0].strip()) for n, line in enumerate(lines, 1)
            ]
        elif path.suffix in (".txt", ".in") or "/" in item:
            raise UsageError(f"plugin list not found: {item}", hint="give a file of requirements")
        else:
            entries = [(item, item.strip())]
        for where, text in entries:
            if not text:
                continue
            key = shard_key(_requirement(text, where))
            if key not in seen:
                seen.add(key)
                found.append(text)
    if not found:
        raise UsageError(
            "no plugins to survey", hint="give requirements, or a file with one a line"
        )
    return found


def _requirement(text: str, where: str) -> Requirement:
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        raise UsageError(
            f"{where}: {text!r} is not a requirement: {exc}",
            hint="one requirement a line, e.g. 'datasette-cluster-map' or 'pytest-mock==3.14.0'",
        ) from None
    if requirement.url:
        raise UsageError(
            f"{where}: {text!r} points at a URL",
            hint="name a release on the index ('NAME' or 'NAME==VERSION'), or put the file in a "
            "directory and pass it with --find-links",
        )
    return requirement


def plugin_list(requirements: Sequence[str]) -> PluginList:
    """The whole list, as every shard cut from it records it: the same whatever its order or
    spelling, so that shards of two lists are not merged into one survey."""
    keys = sorted(shard_key(Requirement(requirement)) for requirement in requirements)
    return PluginList(hashlib.sha256("\n".join(keys).encode()).hexdigest(), len(keys))


def shard_key(requirement: Requirement) -> str:
    """A requirement as the split reads it, however it was spelled."""
    extras = ",".join(sorted(canonicalize_name(e) for e in requirement.extras))
    specifiers = ",".join(sorted(str(s) for s in requirement.specifier))
    marker = str(requirement.marker) if requirement.marker else ""
    return f"{canonicalize_name(requirement.name)}[{extras}]{specifiers};{marker}"


def in_shard(requirement: str, share: tuple[int, int] | None) -> bool:
    """``requirement`` is the K-th of N shards' (by a stable hash: the same share whatever
    the list's order, on every machine)."""
    if share is None:
        return True
    index, count = share
    digest = hashlib.sha256(shard_key(Requirement(requirement)).encode()).digest()
    return int.from_bytes(digest[:8], "big") % count == index - 1
