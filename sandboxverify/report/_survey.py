"""A survey: each plugin of an application checked with the baseline release and with the
candidate, and classified. Survey v1's field names are a contract, as report v1's are: fields
may be added, never renamed (``schemas/survey-v1.schema.json``).

A survey streams as JSON Lines: a header (``"record": "survey"``: the application, both
releases, the plugins of this run or shard), then one line per plugin as its checks end
(``"record": "plugin"``). The survey document (``--json``, ``merge``) holds the same results
with their counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from sandboxverify._frozen import frozen

SURVEY_VERSION = 1
SURVEY_SCHEMA = (
    "https://raw.githubusercontent.com/sandboxverify/sandboxverify/main/"
    "sandboxverify/schemas/survey-v1.schema.json"
)

SurveyClass = Literal["regressed", "fixed", "broken", "ok", "error"]
#: the order people read them in: what the candidate breaks first
CLASSES: tuple[SurveyClass, ...] = ("regressed", "error", "fixed", "broken", "ok")
SideStatus = Literal["passed", "failed", "error"]
ApplicationSource = Literal["index", "project", "wheel"]
#: the longest traceback a result keeps of a failure (the check's own report has it whole)
_DETAILS_LIMIT = 4_000


@frozen
class Application:
    """One release of the application: as given, and what it is."""

    name: str
    version: str
    #: as the command line gave it: a requirement, a project directory, a wheel
    given: str
    source: ApplicationSource
    #: what its build found that would stop only its upload (a local version): excused, since
    #: a candidate built for a survey is never uploaded, and said wherever the survey is
    excused: tuple[str, ...] = ()

    @property
    def requirement(self) -> str:
        """What every sandbox of this side installs: the release, pinned."""
        return f"{self.name}=={self.version}"

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"

    @property
    def excuses(self) -> tuple[str, ...]:
        """Each excuse as every surface says it."""
        return tuple(
            f"{self.label} built with what only its upload would fail, excused: {excuse}"
            for excuse in self.excused
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "given": self.given,
            "source": self.source,
            "requirement": self.requirement,
            "excused": list(self.excused),
        }


@frozen
class SideFailure:
    """A failure one check found, as its report said it."""

    code: str
    message: str
    plugin: str | None = None
    module: str | None = None
    hint: str | None = None
    details: str | None = None

    @property
    def cause(self) -> tuple[str, str, str]:
        return (self.code, self.plugin or "", self.module or "")

    def to_json(self) -> dict[str, Any]:
        details = self.details
        if details is not None and len(details) > _DETAILS_LIMIT:
            details = "…" + details[-_DETAILS_LIMIT:]
        return {
            "code": self.code,
            "message": self.message,
            "plugin": self.plugin,
            "module": self.module,
            "hint": self.hint,
            "details": details,
        }


@frozen
class SideResult:
    """One plugin checked with one release: ``passed``, ``failed`` (the check's verdict), or
    ``error`` (it could not be checked, for a reason that is not the application's)."""

    status: SideStatus
    #: the application's version installed in the sandbox (``None``: nothing was installed)
    application_version: str | None = None
    failures: tuple[SideFailure, ...] = ()
    #: why it could not be checked (``error``)
    error: str | None = None
    seconds: float = 0.0
    #: how the plugin's code ran: ``namespaces`` (the OS sandbox) or ``process``
    isolation: str | None = None

    @property
    def cause(self) -> frozenset[tuple[str, str, str]]:
        """What failed, by code, plugin and module: the same cause on both sides is the same
        break, whatever its message says of paths and versions."""
        return frozenset(failure.cause for failure in self.failures)

    @property
    def first(self) -> str:
        """The failure in one line: ``plugin_load_failed: plugin 'x' failed ...``."""
        if self.error is not None:
            return self.error
        if not self.failures:
            return "no failure"
        failure = self.failures[0]
        more = f" (and {len(self.failures) - 1} more)" if len(self.failures) > 1 else ""
        return f"{failure.code}: {failure.message.splitlines()[0] if failure.message else ''}{more}"

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "application_version": self.application_version,
            "failures": [failure.to_json() for failure in self.failures],
            "error": self.error,
            "seconds": round(self.seconds, 3),
            "isolation": self.isolation,
        }


@frozen
class PluginArtifact:
    """The file of the plugin's release that was checked: its sdist, else its wheel."""

    kind: Literal["sdist", "wheel"]
    filename: str
    sha256: str | None
    url: str

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "filename": self.filename,
            "sha256": self.sha256,
            "url": self.url,
        }


@frozen
class PluginResult:
    """One plugin, checked with both releases and classified."""

    requirement: str
    name: str
    #: the release checked (``None``: none could be found)
    version: str | None
    artifact: PluginArtifact | None
    survey_class: SurveyClass
    #: why, in a line: for a regression, the failure and the candidate's version
    reason: str
    baseline: SideResult | None = None
    candidate: SideResult | None = None
    #: with both releases failing: whether they fail the same way (``None`` otherwise)
    same_cause: bool | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "record": "plugin",
            "requirement": self.requirement,
            "name": self.name,
            "version": self.version,
            "artifact": self.artifact.to_json() if self.artifact else None,
            "class": self.survey_class,
            "reason": self.reason,
            "same_cause": self.same_cause,
            "baseline": self.baseline.to_json() if self.baseline else None,
            "candidate": self.candidate.to_json() if self.candidate else None,
            "seconds": round(self.seconds, 3),
        }


def classify(
    baseline: SideResult, candidate: SideResult, releases: tuple[Application, Application]
) -> tuple[SurveyClass, str, bool | None]:
    """The class of a plugin from its two checks, why, and (both failing) whether the cause
    is the same."""
    old, new = releases
    for side, release in ((baseline, old), (candidate, new)):
        if side.status == "error":
            return "error", f"could not be checked with {release.label}: {side.error}", None
    if baseline.status == "passed" and candidate.status == "passed":
        return "ok", f"passes with {old.label} and with {new.label}", None
    if baseline.status == "passed":
        return (
            "regressed",
            f"fails with {new.label} (passes with {old.version}): " + (candidate.first),
            None,
        )
    if candidate.status == "passed":
        return (
            "fixed",
            f"passes with {new.label}; failed with {old.version}: {baseline.first}",
            None,
        )
    if baseline.cause == candidate.cause:
        return "broken", f"fails with both releases: {candidate.first}", True
    return (
        "broken",
        (
            f"fails with both releases, differently: with {old.version} {baseline.first}; "
            f"with {new.version} {candidate.first}"
        ),
        False,
    )


@frozen
class SurveyHeader:
    """What one run (or shard) of a survey checks: the first line of its results file."""

    baseline: Application
    candidate: Application
    #: this run's plugins (a shard's share), in the order they were listed
    plugins: tuple[str, ...]
    #: ``(K, N)``: the K-th of N shards; ``None``: every plugin
    shard: tuple[int, int] | None
    #: the interpreter the plugins were checked on
    python: str
    sandboxverify: str
    #: the whole plugin list every shard is cut from, however it was ordered or spelled
    #: (``None``: a results file written before it was recorded)
    listed: PluginList | None = None

    @property
    def application(self) -> str:
        return self.candidate.name

    @property
    def identity(self) -> dict[str, Any]:
        """What two runs must share to be parts of one survey."""
        return {
            "application": self.application,
            "baseline": self.baseline.requirement,
            "candidate": self.candidate.requirement,
            "python": self.python,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "$schema": SURVEY_SCHEMA,
            "record": "survey",
            "version": SURVEY_VERSION,
            "application": self.application,
            "baseline": self.baseline.to_json(),
            "candidate": self.candidate.to_json(),
            "shard": _shard_json(self.shard),
            "plugins": list(self.plugins),
            "python": self.python,
            "sandboxverify": self.sandboxverify,
            **({"list": self.listed.to_json()} if self.listed is not None else {}),
        }


@frozen
class PluginList:
    """The whole list a survey's shards are cut from, told apart from another by its digest."""

    #: sha256 of the list's requirements as the split reads them, sorted
    sha256: str
    plugins: int

    def to_json(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "plugins": self.plugins}


@frozen
class ShardRecord:
    """One results file a survey was put together from."""

    file: str
    shard: tuple[int, int] | None
    plugins: int
    results: int

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "shard": _shard_json(self.shard),
            "plugins": self.plugins,
            "results": self.results,
        }


@frozen
class Survey:
    """A whole survey: every plugin's result, what was not checked, and where it came from."""

    baseline: Application
    candidate: Application
    python: str
    results: tuple[PluginResult, ...]
    #: plugins listed but without a result (an interrupted run, a missing shard)
    not_checked: tuple[str, ...] = ()
    #: shards that were expected but not given (merge: ``K/N`` of the N named by the others)
    missing_shards: tuple[str, ...] = ()
    shards: tuple[ShardRecord, ...] = ()
    seconds: float = 0.0
    #: the run stopped before every plugin was checked (``interrupted``, ``terminated``)
    stopped: str | None = None

    @property
    def application(self) -> str:
        return self.candidate.name

    @property
    def releases(self) -> tuple[Application, Application]:
        """The baseline and the candidate."""
        return (self.baseline, self.candidate)

    @property
    def counts(self) -> dict[str, int]:
        found = Counter(result.survey_class for result in self.results)
        return {
            **{name: found.get(name, 0) for name in CLASSES},
            "not_checked": len(self.not_checked),
        }

    @property
    def complete(self) -> bool:
        return not self.not_checked and not self.missing_shards and self.stopped is None

    @property
    def ok(self) -> bool:
        """Nothing regressed, every plugin could be checked, and every one was."""
        counts = self.counts
        return self.complete and counts["regressed"] == 0 and counts["error"] == 0

    def ordered(self) -> list[PluginResult]:
        """Regressions first, then errors, fixes, breaks and the rest; by name within each."""
        return sorted_results(self.results)

    def to_json(self) -> dict[str, Any]:
        return {
            "$schema": SURVEY_SCHEMA,
            "record": "survey-document",
            "version": SURVEY_VERSION,
            "ok": self.ok,
            "complete": self.complete,
            "application": self.application,
            "baseline": self.baseline.to_json(),
            "candidate": self.candidate.to_json(),
            "python": self.python,
            "counts": self.counts,
            "not_checked": list(self.not_checked),
            "missing_shards": list(self.missing_shards),
            "shards": [shard.to_json() for shard in self.shards],
            "seconds": round(self.seconds, 3),
            "stopped": self.stopped,
            "plugins": [result.to_json() for result in self.ordered()],
        }


def sorted_results(results: Iterable[PluginResult]) -> list[PluginResult]:
    rank = {name: index for index, name in enumerate(CLASSES)}
    return sorted(results, key=lambda r: (rank[r.survey_class], r.name.lower(), r.requirement))


def _shard_json(shard: Sequence[int] | None) -> dict[str, int] | None:
    return {"index": shard[0], "count": shard[1]} if shard else None
