"""One plugin of a survey: its published file fetched, checked exactly as ``check`` checks it
(no options) once with each release of the application forced into the sandbox, and
classified. A check that could not judge the plugin for a reason that is not the application's
(a download, its build, an install of something else) is an ``error``, said as such."""

from __future__ import annotations

import re
import time
import urllib.parse
from dataclasses import replace
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from sandboxverify._errors import SandboxVerifyError
from sandboxverify._frozen import frozen
from sandboxverify.artifacts import FetchError, IndexFile, PackageIndex
from sandboxverify.options import CheckOptions, SurveyOptions
from sandboxverify.pipeline._check import check
from sandboxverify.pipeline._survey_sides import Releases
from sandboxverify.report import (
    Application,
    PluginArtifact,
    PluginResult,
    Report,
    SideFailure,
    SideResult,
    classify,
)

#: the failures of a check that never judged the plugin: nothing of it was loaded
_UNCHECKED = ("build_failed", "venv_failed")
#: the stages that install (a timeout there is the installer's, not the plugin's)
_INSTALL_STAGES = ("venv", "install")


@frozen
class PluginSurveyor:
    """Checks plugins against both releases (one at a time per call; calls run in parallel)."""

    options: SurveyOptions
    releases: Releases
    index: PackageIndex
    #: where local builds of the application are served from (``--find-links``)
    links: Path
    #: where fetched plugin files are kept, by sha256
    downloads: Path
    python: Version

    def survey(self, requirement: str) -> PluginResult:
        started = time.perf_counter()
        parsed = Requirement(requirement)
        try:
            found = self.index.choose(parsed, self.python)
            path = self.index.download(found, self.downloads)
        except FetchError as exc:
            return PluginResult(
                requirement,
                parsed.name,
                None,
                None,
                "error",
                f"could not be fetched (not the application's doing): {exc}",
                seconds=time.perf_counter() - started,
            )
        baseline = self.check(path, self.releases.baseline)
        candidate = self.check(path, self.releases.candidate)
        survey_class, reason, same = classify(
            baseline, candidate, (self.releases.baseline, self.releases.candidate)
        )
        return PluginResult(
            requirement,
            parsed.name,
            str(found.version),
            _artifact(found),
            survey_class,
            reason,
            baseline,
            candidate,
            same,
            time.perf_counter() - started,
        )

    def check(self, path: Path, release: Application) -> SideResult:
        """``check PATH`` with ``release`` installed next to the plugin (``--with``)."""
        options = CheckOptions(
            targets=(str(path),),
            with_requirements=(release.requirement,),
            index_url=self.options.index_url,
            find_links=(
                *self.options.find_links,
                *([str(self.links)] if self.links.is_dir() else []),
            ),
            installer=self.options.installer,
            isolation=self.options.isolation,
        )
        started = time.perf_counter()
        try:
            # the plugin as published, with no options: not the configuration of wherever
            # the survey runs (a check of a file would read the current directory's)
            report = check(options, config=False)
        except SandboxVerifyError as exc:
            return SideResult(
                "error",
                error=f"the check stopped: {exc.message}",
                seconds=time.perf_counter() - started,
            )
        return side_of(report, release)


def side_of(report: Report, release: Application) -> SideResult:
    """What a check with ``release`` said: passed, failed, or could not judge the plugin."""
    installed = _installed_version(report, release.name)
    failures = tuple(
        SideFailure(f.code, f.message, f.plugin, f.module, f.hint, f.details)
        for f in report.failures
    )
    said = SideResult("failed", installed, failures, None, report.seconds, report.isolation)
    unrelated = _not_the_applications(report, release)
    if report.error is not None:
        unrelated = f"the check stopped: {report.error.message}"
    elif unrelated is None and installed is not None and _differs(installed, release.version):
        unrelated = f"the sandbox got {release.name} {installed}, not {release.version}"
    elif unrelated is None and report.ok and installed is None:
        # nothing says the plugin met the release it was to meet
        unrelated = f"{release.name} is not among what the sandbox installed"
    if unrelated is not None:
        return replace(said, status="error", error=unrelated)
    return replace(said, status="passed") if report.ok else said


def _not_the_applications(report: Report, release: Application) -> str | None:
    """Why the check could not judge the plugin, when that is not the application's doing:
    its build, the sandbox, or an install failure that does not name the application."""
    install_failed = any(
        stage.name in _INSTALL_STAGES and stage.status == "failed"
        for run in report.runs
        for stage in run.stages
    )
    for failure in report.failures:
        if failure.code == "build_failed":
            return (
                f"its build failed (the application takes no part in it): {_line(failure.message)}"
            )
        if failure.code == "venv_failed":
            return f"the sandbox could not be made: {_line(failure.message)}"
        if failure.code == "install_failed" or (install_failed and failure.code == "timeout"):
            text = f"{failure.message}\n{failure.details or ''}"
            if not _names(text, release.name):
                return f"its install failed, not over {release.name}: {_line(failure.message)}"
    if not report.runs and not report.failures:
        return "the check ran nothing"
    return None


def _names(text: str, name: str) -> bool:
    """``text`` names the distribution ``name`` (spelled any way a name may be)."""
    words = re.sub(r"[-_.]+", "-", text.lower())
    wanted = re.escape(canonicalize_name(name))
    return re.search(rf"(?<![a-z0-9-]){wanted}(?![a-z0-9-])", words) is not None


def _installed_version(report: Report, name: str) -> str | None:
    wanted = canonicalize_name(name)
    for run in report.runs:
        for dist in run.installed:
            if canonicalize_name(dist.get("name", "")) == wanted:
                return dist.get("version")
    return None


def _differs(installed: str, version: str) -> bool:
    try:
        return Version(installed) != Version(version)
    except InvalidVersion:
        return installed != version


def _artifact(found: IndexFile) -> PluginArtifact:
    parsed = urllib.parse.urlsplit(found.url)
    if parsed.username is not None:  # an index's credentials never reach a result
        host = parsed.hostname or ""
        netloc = f"{host}:{parsed.port}" if parsed.port else host
        parsed = parsed._replace(netloc=netloc)
    return PluginArtifact(found.kind, found.filename, found.sha256, urllib.parse.urlunsplit(parsed))


def _line(text: str) -> str:
    return text.splitlines()[0] if text else ""
