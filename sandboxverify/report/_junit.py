"""JUnit XML: one test case per check, for the CI test-report viewers (GitLab, Jenkins, Azure,
GitHub test reporters).

One ``<testsuite>`` for the build (the build itself and each artifact) and one per run: ``venv``,
``install``, ``probe``, each plugin, each expected tool, ``imports``, ``scripts``, ``smoke``. Each
failure of the report lands in the test case it concerns; one that fits none becomes a failed case
of its own, and a case whose check failed without a failure record still fails: never a false
green, and a stage the text reports as failed fails its case too. The document validates against
Jenkins' ``junit-10.xsd`` (the schema pytest's own ``--junitxml`` output is tested against).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Callable

from sandboxverify.report._inert import inert
from sandboxverify.report._model import (
    Failure,
    PluginRecord,
    Report,
    Run,
    Stage,
    run_of,
    wheel_origin,
)

#: what XML 1.0 allows (anything else makes the document unreadable)
_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_STAGE_CODES = {
    "venv": ("venv_failed",),
    "install": ("install_failed", "dependency_conflict"),
    "probe": ("no_plugins", "plugin_count_mismatch"),
    "imports": ("import_failed",),
    "scripts": ("script_failed",),
    "smoke": ("smoke_failed",),
}
_BUILD_CODES = ("build_failed", "artifact_invalid", "timeout", "artifact_mismatch")
#: codes any stage may report (without a plugin or module to tell which)
_STAGELESS_CODES = ("timeout", "probe_crashed", "artifact_invalid")


@dataclass
class _Case:
    name: str
    seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    #: a failure the case has without a report failure (a check that failed and said nothing)
    implicit: tuple[str, str] | None = None
    skipped: str | None = None

    @property
    def failed(self) -> bool:
        return bool(self.failures) or self.implicit is not None


@dataclass
class _Suite:
    name: str
    classname: str
    cases: list[_Case]
    seconds: float
    properties: dict[str, str]


def junit_xml(report: Report, *, now: datetime | None = None) -> str:
    """The report as a JUnit XML document (``now``: when the check ended; default: now)."""
    suites = _suites(report)
    ended = now or datetime.now(timezone.utc)
    started = (ended - timedelta(seconds=report.seconds)).replace(microsecond=0)
    root = ET.Element(
        "testsuites",
        name="sandboxverify",
        tests=str(sum(len(s.cases) for s in suites)),
        failures=str(sum(c.failed for s in suites for c in s.cases)),
        errors="0",
        # no ``skipped`` here: junit-10.xsd allows it on <testsuite> only
        time=_seconds(report.seconds),
    )
    for suite in suites:
        root.append(_suite_element(suite, started.isoformat()))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _suites(report: Report) -> list[_Suite]:
    error = _error_case(report)
    if error is not None and not report.runs and not report.artifacts:
        # stopped before anything was checked: one failing case, never a green build case
        properties = {"target": report.target}
        return [_Suite("sandboxverify", "sandboxverify", [error], report.seconds, properties)]
    pending = list(report.failures)
    build = _build_suite(report, pending)
    runs = [_run_suite(report, run, pending, index) for index, run in enumerate(report.runs)]
    suites = [build, *runs]
    if pending:  # failures of an interpreter no run stands for
        build.cases.extend(_leftovers(pending))
    if error is not None:  # it stopped after the check (a report it could not write)
        build.cases.append(error)
    if not report.ok and not any(c.failed for s in suites for c in s.cases):
        verdict = _Case("verdict")
        verdict.implicit = ("failed", "the check failed without saying why (a bug: report it)")
        build.cases.append(verdict)
    return suites


def _error_case(report: Report) -> _Case | None:
    """What stopped the check (a usage error, a bug, an interrupt) as a failed case."""
    if report.error is None:
        return None
    case = _Case(report.error.code)
    message = report.error.message + (f"\nhint: {report.error.hint}" if report.error.hint else "")
    case.implicit = (report.error.code, message)
    return case


def _build_suite(report: Report, pending: list[Failure]) -> _Suite:
    stage = next((s for run in report.runs for s in run.stages if s.name == "build"), None)
    build = _Case("build", seconds=stage.seconds if stage else 0.0)
    # given a wheel and an sdist, the wheel built from the sdist may share the given's filename
    given_wheel = any(a.kind == "wheel" and not a.built for a in report.artifacts)
    artifacts = {
        (a.filename, a.built): _Case(
            f"{a.kind} {a.filename}"
            + (" (built from the sdist)" if given_wheel and a.built and a.kind == "wheel" else "")
        )
        for a in report.artifacts
    }
    # beside a given wheel, what was built is the wheel of the given sdist
    built = [case for (_, was_built), case in artifacts.items() if was_built and given_wheel]
    from_sdist = built[0] if built else None
    for failure in _take(pending, lambda f: f.python is None and f.code in _BUILD_CODES):
        named = [case for (name, _), case in artifacts.items() if name in failure.message]
        if failure.code == "artifact_invalid" and len(named) == 1:
            named[0].failures.append(failure)
        elif failure.code == "artifact_mismatch" and from_sdist is not None:
            from_sdist.failures.append(failure)
        else:
            build.failures.append(failure)
    covered = build.failed or any(case.failed for case in artifacts.values())
    if stage is not None and stage.status == "failed" and not covered:
        build.implicit = ("build_failed", "the build failed")
    return _Suite(
        "build",
        "sandboxverify.build",
        [build, *artifacts.values()],
        build.seconds,
        {
            "target": report.target,
            "host": report.host,
            "groups": ",".join(report.groups),
            "installer": report.installer,
            **_warnings_property(report),
        },
    )


def _warnings_property(report: Report) -> dict[str, str]:
    """What the static rules found that fails nothing: said, never dropped."""
    if not report.warnings:
        return {}
    return {"warnings": "; ".join(f"{w.code}: {w.message}" for w in report.warnings)}


def _run_suite(report: Report, run: Run, pending: list[Failure], index: int) -> _Suite:
    duplicate = sum(_same_run(r, run) for r in report.runs[:index])
    label = run.python + (f"-{duplicate + 1}" if duplicate else "")
    origin = wheel_origin(run.wheel_built, report.runs)
    cases = _RunCases(run, report.expect_tools)
    # failures name an interpreter by version (and which of its runs, given a wheel and an
    # sdist): the first run of a version takes them
    if not duplicate:
        for failure in _take(pending, lambda f: run_of(f, [run]) is run):
            cases.place(failure)
    cases.settle()
    return _Suite(
        f"python {label}" + (f" ({origin})" if origin else ""),
        "sandboxverify.py"
        + re.sub(r"[^0-9A-Za-z]+", "_", label)
        + ("_from_sdist" if origin and run.wheel_built else ""),
        cases.ordered(),
        sum(stage.seconds for stage in run.stages if stage.name != "build"),
        {"python": run.python, "interpreter": run.interpreter, **_excused_property(run)},
    )


def _same_run(one: Run, other: Run) -> bool:
    """Runs a failure could not tell apart: one Python, and one kind of wheel."""
    return one.python == other.python and one.wheel_built == other.wheel_built


def _excused_property(run: Run) -> dict[str, str]:
    """The modules the imports stage excused, each with why: never silently."""
    excused = run.imports.excused if run.imports is not None else ()
    if not excused:
        return {}
    said = [
        f"{e.module} ({e.reason}{f' {e.extra}' if e.extra else ''}: {e.detail})" for e in excused
    ]
    return {"imports.excused": "; ".join(said)}


class _RunCases:
    """One run's test cases, and which failure belongs to which."""

    def __init__(self, run: Run, expect_tools: Sequence[str]) -> None:
        self.run = run
        self.stages: dict[str, Stage] = {s.name: s for s in run.stages if s.name != "build"}
        self.cases = {name: _stage_case(stage) for name, stage in self.stages.items()}
        self.plugins: dict[str, _Case] = {}
        for plugin in run.plugins:
            self.plugins.setdefault(plugin.name, _plugin_case(plugin))
        # the probe checks the expected tools: without a probe stage there is nothing to say
        self.tools = {t: _Case(f"tool {t}") for t in expect_tools} if "probe" in self.stages else {}
        self.unplaced: list[Failure] = []

    def place(self, failure: Failure) -> None:
        """Into the case it concerns: its tool, plugin, module, then its code's stage."""
        case: _Case | None = None
        if failure.code == "script_failed":
            case = self.cases.get("scripts")  # names a script, which may share a plugin's name
        elif failure.tool is not None and failure.tool in self.tools:
            case = self.tools[failure.tool]
        elif failure.plugin is not None and failure.plugin in self.plugins:
            case = self.plugins[failure.plugin]
        elif failure.module is not None:
            case = self.cases.get("imports")
        else:
            stage = next((s for s, codes in _STAGE_CODES.items() if failure.code in codes), None)
            case = self.cases.get(stage) if stage else None
        if case is None:
            self.unplaced.append(failure)
        else:
            case.failures.append(failure)

    def settle(self) -> None:
        """A stage that failed with no failure of its own takes the one unplaced failure that
        fits (a ``timeout`` names no stage), or fails on its own: a failed check never passes."""
        silent = [n for n, c in self.cases.items() if self._failed(n) and not c.failed]
        fitting = [f for f in self.unplaced if f.code in _STAGELESS_CODES]
        if len(silent) == 1 and len(fitting) == 1:
            self.cases[silent[0]].failures.append(fitting[0])
            self.unplaced.remove(fitting[0])
        for name in silent:
            case = self.cases[name]
            if not case.failed:
                case.implicit = ("failed", self._why_failed(name))
        for plugin in self.run.plugins:
            case = self.plugins[plugin.name]
            if not plugin.ok and not case.failed:
                error = plugin.error
                cause = f"{error.type}: {error.message}" if error else "it failed to load"
                case.implicit = ("plugin_load_failed", f"plugin {plugin.name!r}: {cause}")
        registered = {tool.name for tool in self.run.tools}
        for name, case in self.tools.items():
            if name in registered or case.failed:
                continue
            if self.stages["probe"].status == "skipped":
                case.skipped = "not checked: an earlier stage failed"
            else:
                case.implicit = ("tool_missing", f"expected tool {name!r} is not registered")

    def ordered(self) -> list[_Case]:
        ordered: list[_Case] = []
        for name, case in self.cases.items():
            ordered.append(case)
            if name == "probe":
                ordered += [*self.plugins.values(), *self.tools.values()]
        return ordered + _leftovers(self.unplaced)

    def _failed(self, stage: str) -> bool:
        return self.stages[stage].status == "failed"

    def _why_failed(self, stage: str) -> str:
        """A failed stage whose failures are all its plugins' and tools' own (the text says
        ``FAIL probe``, so the case fails too) names them; any other says where to look."""
        if stage == "probe":
            named = [
                *(f"plugin {p.name}" for p in self.run.plugins if not p.ok),
                *(c.name for c in self.tools.values() if c.failures),
            ]
            if named:
                return f"the probe stage failed: {', '.join(dict.fromkeys(named))}"
        return f"the {stage} stage failed (see the run's other cases)"


def _stage_case(stage: Stage) -> _Case:
    case = _Case(stage.name, seconds=stage.seconds)
    if stage.status == "skipped":
        case.skipped = "not run: an earlier stage failed"
    return case


def _plugin_case(plugin: PluginRecord) -> _Case:
    return _Case(f"plugin {plugin.name} ({plugin.value})", seconds=plugin.seconds)


def _leftovers(failures: Sequence[Failure]) -> list[_Case]:
    """Failures no case concerns: one failed case per code, so nothing is lost."""
    cases: dict[str, _Case] = {}
    for failure in failures:
        cases.setdefault(failure.code, _Case(failure.code)).failures.append(failure)
    return list(cases.values())


def _take(pending: list[Failure], wanted: Callable[[Failure], bool]) -> list[Failure]:
    taken = [f for f in pending if wanted(f)]
    pending[:] = [f for f in pending if not wanted(f)]
    return taken


def _suite_element(suite: _Suite, timestamp: str) -> ET.Element:
    element = ET.Element(
        "testsuite",
        name=_clean(suite.name),
        tests=str(len(suite.cases)),
        failures=str(sum(case.failed for case in suite.cases)),
        errors="0",
        skipped=str(sum(case.skipped is not None and not case.failed for case in suite.cases)),
        time=_seconds(suite.seconds),
        timestamp=timestamp,
    )
    properties = ET.SubElement(element, "properties")
    for name, value in suite.properties.items():
        ET.SubElement(properties, "property", name=name, value=_clean(value))
    for case in suite.cases:
        element.append(_case_element(case, suite.classname))
    return element


def _case_element(case: _Case, classname: str) -> ET.Element:
    element = ET.Element(
        "testcase", classname=classname, name=_clean(case.name), time=_seconds(case.seconds)
    )
    if case.failures:
        first = case.failures[0]
        more = f" (and {len(case.failures) - 1} more)" if len(case.failures) > 1 else ""
        failure = ET.SubElement(
            element, "failure", message=_clean(first.message + more), type=first.code
        )
        failure.text = _clean("\n\n".join(_failure_text(f) for f in case.failures))
    elif case.implicit is not None:
        code, message = case.implicit
        headline = message.splitlines()[0] if message else message
        ET.SubElement(element, "failure", message=_clean(headline), type=code).text = _clean(
            message
        )
    elif case.skipped is not None:
        ET.SubElement(element, "skipped", message=case.skipped)
    return element


def _failure_text(failure: Failure) -> str:
    where = f" [{failure.python}]" if failure.python else ""
    lines = [f"{failure.code}{where}: {failure.message}"]
    if failure.hint:
        lines.append(f"hint: {failure.hint}")
    if failure.details:
        lines += ["", failure.details.rstrip()]
    return "\n".join(lines)


def _clean(text: str) -> str:
    """Text an XML 1.0 parser accepts, and a viewer shows as it is: controls (colour codes,
    carriage returns...) and bidi controls escaped (``inert``), what XML forbids besides them
    (lone surrogates, U+FFFE, U+FFFF) removed."""
    return _FORBIDDEN.sub("", inert(text, lines=True))


def _seconds(seconds: float) -> str:
    return f"{max(seconds, 0.0):.3f}"
