"""JUnit XML: one test case per check, every failure in the case it concerns, readable by the
CI test-report viewers: valid against Jenkins' junit-10.xsd, the attribute set pytest writes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest

from sandboxverify.report._junit import junit_xml
from sandboxverify.report._model import (
    ArtifactRecord,
    Failure,
    PluginError,
    PluginRecord,
    Report,
    ReportWarning,
    Run,
    Stage,
    StageName,
    StageStatus,
    ToolRecord,
)
from tests.helpers import assert_valid_junit

PY = "3.12.1"
STAGES: tuple[StageName, ...] = ("build", "venv", "install", "probe", "imports", "scripts")

#: attributes each element carries: the subset of junit-10.xsd that pytest writes too
SCHEMA: dict[str, tuple[set[str], set[str]]] = {
    # element: (required, allowed)
    "testsuites": (set(), {"name", "time", "tests", "failures", "errors"}),
    "testsuite": (
        {"name", "tests", "failures", "errors"},
        {"name", "tests", "failures", "errors", "time", "skipped", "timestamp", "hostname"},
    ),
    "properties": (set(), set()),
    "property": ({"name", "value"}, {"name", "value"}),
    "testcase": ({"name"}, {"name", "time", "classname"}),
    "failure": (set(), {"type", "message"}),
    "skipped": (set(), {"type", "message"}),
}
CHILDREN = {
    "testsuites": {"testsuite"},
    "testsuite": {"properties", "testcase"},
    "properties": {"property"},
    "testcase": {"failure", "skipped"},
    "failure": set(),
    "skipped": set(),
    "property": set(),
}


def stages(**status: StageStatus) -> tuple[Stage, ...]:
    return tuple(Stage(name, status.get(name, "passed"), 0.25) for name in STAGES)


def run(
    *,
    python: str = PY,
    stage_list: tuple[Stage, ...] | None = None,
    plugins: tuple[PluginRecord, ...] = (),
    tools: tuple[ToolRecord, ...] = (),
    ok: bool = True,
) -> Run:
    return Run(
        python=python,
        interpreter=f"/usr/bin/python{python[:4]}",
        ok=ok,
        stages=stage_list or stages(),
        plugins=plugins,
        tools=tools,
    )


def make_report(
    runs: tuple[Run, ...], failures: tuple[Failure, ...] = (), expect_tools: tuple[str, ...] = ()
) -> Report:
    return Report(
        target="fixtures/demo",
        artifacts=(
            ArtifactRecord("sdist", "demo-1.0.tar.gz", "a" * 64, True),
            ArtifactRecord("wheel", "demo-1.0-py3-none-any.whl", "b" * 64, True),
        ),
        runs=runs,
        failures=failures,
        host="native",
        groups=("sandboxverify.plugins",),
        installer="uv",
        seconds=3.5,
        expect_tools=expect_tools,
    )


GREETER = PluginRecord("greeter", "sandboxverify.plugins", "demo.plugin:setup", True, seconds=0.05)
BROKEN = PluginRecord(
    "broken",
    "sandboxverify.plugins",
    "demo.broken:setup",
    False,
    error=PluginError("AttributeError", "no attribute 'setpu'", "Traceback ...", "import"),
)
GREET = ToolRecord("greet", "greeter", "Greet someone.")


def parse(report: Report) -> ET.Element:
    text = junit_xml(report)
    assert_valid_junit(text)
    return ET.fromstring(text)


def cases(root: ET.Element) -> dict[str, ET.Element]:
    return {f"{case.get('classname')}::{case.get('name')}": case for case in root.iter("testcase")}


def status(case: ET.Element) -> str:
    if case.find("failure") is not None:
        return "failed"
    if case.find("skipped") is not None:
        return "skipped"
    return "passed"


def failure_of(case: ET.Element) -> ET.Element:
    failure = case.find("failure")
    assert failure is not None, case.attrib
    return failure


def statuses(root: ET.Element) -> dict[str, str]:
    return {name: status(case) for name, case in cases(root).items()}


def assert_schema(element: ET.Element) -> None:
    required, allowed = SCHEMA[element.tag]
    assert required <= set(element.attrib) <= allowed, (element.tag, element.attrib)
    for child in element:
        assert child.tag in CHILDREN[element.tag], (element.tag, child.tag)
        assert_schema(child)
    if element.tag in ("testsuites", "testsuite"):
        tested = list(element.iter("testcase"))
        failed = [c for c in tested if c.find("failure") is not None]
        skipped = [c for c in tested if c.find("skipped") is not None]
        assert element.get("tests") == str(len(tested))
        assert element.get("failures") == str(len(failed))
        if element.tag == "testsuite":
            assert element.get("skipped") == str(len(skipped))
        assert element.get("errors") == "0"
        assert float(element.get("time", "")) >= 0
    if element.tag == "testcase":
        assert len(list(element)) <= 1  # one verdict per case: viewers show only the first


def test_a_passing_check_is_one_passing_case_per_check() -> None:
    report = make_report((run(plugins=(GREETER,), tools=(GREET,)),), expect_tools=("greet",))
    root = parse(report)

    assert_schema(root)
    assert (root.tag, root.get("name")) == ("testsuites", "sandboxverify")
    assert [suite.get("name") for suite in root] == ["build", f"python {PY}"]
    assert statuses(root) == {
        "sandboxverify.build::build": "passed",
        "sandboxverify.build::sdist demo-1.0.tar.gz": "passed",
        "sandboxverify.build::wheel demo-1.0-py3-none-any.whl": "passed",
        "sandboxverify.py3_12_1::venv": "passed",
        "sandboxverify.py3_12_1::install": "passed",
        "sandboxverify.py3_12_1::probe": "passed",
        "sandboxverify.py3_12_1::plugin greeter (demo.plugin:setup)": "passed",
        "sandboxverify.py3_12_1::tool greet": "passed",
        "sandboxverify.py3_12_1::imports": "passed",
        "sandboxverify.py3_12_1::scripts": "passed",
    }
    assert (root.get("tests"), root.get("failures")) == ("10", "0")
    assert sum(int(suite.get("skipped", "")) for suite in root) == 0
    assert root.get("time") == "3.500"
    by_name = cases(root)
    assert by_name["sandboxverify.build::build"].get("time") == "0.250"
    assert by_name["sandboxverify.py3_12_1::plugin greeter (demo.plugin:setup)"].get("time") == (
        "0.050"
    )
    properties = {p.get("name"): p.get("value") for p in root[1].iter("property")}
    assert properties == {"python": PY, "interpreter": "/usr/bin/python3.12"}


def test_each_failure_lands_in_the_case_it_concerns() -> None:
    failures = (
        Failure("plugin_load_failed", "plugin 'broken' failed", PY, plugin="broken", hint="fix"),
        Failure("tool_missing", "expected tool 'add' is not registered", PY, tool="add"),
        Failure("import_failed", "module demo.extra failed", PY, module="demo.extra"),
        # a console script may share its name with a plugin: it is still the scripts' failure
        Failure("script_failed", "greeter --help exited 2", PY, plugin="greeter"),
        Failure("plugin_count_mismatch", "expected 3 plugin(s)", PY),
        Failure("artifact_invalid", "demo-1.0-py3-none-any.whl: RECORD lists x.py", None),
    )
    report = make_report(
        (
            run(
                stage_list=stages(probe="failed", imports="failed", scripts="failed"),
                plugins=(GREETER, BROKEN),
                tools=(GREET,),
                ok=False,
            ),
        ),
        failures,
        expect_tools=("greet", "add"),
    )
    root = parse(report)

    assert_schema(root)
    failed = {name: case for name, case in cases(root).items() if status(case) == "failed"}
    types = {name.split("::")[1]: failure_of(case).get("type") for name, case in failed.items()}
    assert types == {
        "wheel demo-1.0-py3-none-any.whl": "artifact_invalid",
        "probe": "plugin_count_mismatch",
        "plugin broken (demo.broken:setup)": "plugin_load_failed",
        "tool add": "tool_missing",
        "imports": "import_failed",
        "scripts": "script_failed",
    }
    assert root.get("failures") == "6"
    broken = failed["sandboxverify.py3_12_1::plugin broken (demo.broken:setup)"]
    failure = failure_of(broken)
    assert failure.get("message") == "plugin 'broken' failed"
    assert failure.text == f"plugin_load_failed [{PY}]: plugin 'broken' failed\nhint: fix"


def test_failures_that_fit_no_case_become_failed_cases_of_their_own() -> None:
    failures = (
        # no run of this interpreter is in the report
        Failure("install_failed", "none of the wheels fits Python 3.8.18", "3.8.18"),
        # a code no stage of the run owns (here: no install stage to put it in)
        Failure("dependency_conflict", "pip check: six is missing", PY),
        Failure("dependency_conflict", "pip check: click is missing", PY),
    )
    only_build = (Stage("build", "passed", 1.0),)
    root = parse(make_report((run(stage_list=only_build, ok=False),), failures))

    assert_schema(root)
    assert statuses(root) == {
        "sandboxverify.build::build": "passed",
        "sandboxverify.build::sdist demo-1.0.tar.gz": "passed",
        "sandboxverify.build::wheel demo-1.0-py3-none-any.whl": "passed",
        "sandboxverify.build::install_failed": "failed",
        "sandboxverify.py3_12_1::dependency_conflict": "failed",
    }
    conflict = failure_of(cases(root)["sandboxverify.py3_12_1::dependency_conflict"])
    assert conflict.get("message") == "pip check: six is missing (and 1 more)"
    assert conflict.text is not None
    assert "six is missing" in conflict.text and "click is missing" in conflict.text


def test_a_crash_during_the_smoke_run_is_the_smoke_case() -> None:
    crash = Failure("probe_crashed", "smoke playbook smoke.toml: the interpreter died", PY)
    smoke = (*stages(), Stage("smoke", "failed", 0.5))
    root = parse(make_report((run(stage_list=smoke, ok=False),), (crash,)))

    failed = {n: c for n, c in cases(root).items() if status(c) == "failed"}
    assert list(failed) == ["sandboxverify.py3_12_1::smoke"]
    assert failure_of(failed["sandboxverify.py3_12_1::smoke"]).get("type") == "probe_crashed"


def test_a_timeout_goes_to_the_one_stage_that_failed() -> None:
    timeout = Failure("timeout", "installing took longer than 300s", PY, hint="raise it")
    root = parse(
        make_report(
            (
                run(
                    stage_list=stages(
                        install="failed", probe="skipped", imports="skipped", scripts="skipped"
                    ),
                    ok=False,
                ),
            ),
            (timeout,),
        )
    )

    assert_schema(root)
    run_cases = {
        n.split("::")[1]: status(c)
        for n, c in cases(root).items()
        if n.startswith("sandboxverify.py")
    }
    assert run_cases == {
        "venv": "passed",
        "install": "failed",
        "probe": "skipped",
        "imports": "skipped",
        "scripts": "skipped",
    }
    failure = failure_of(cases(root)["sandboxverify.py3_12_1::install"])
    assert (failure.get("type"), failure.get("message")) == ("timeout", timeout.message)
    assert (root.get("tests"), root.get("failures")) == ("8", "1")
    assert sum(int(suite.get("skipped", "")) for suite in root) == 3


def test_a_failed_build_fails_the_build_case_and_skips_the_rest() -> None:
    failure = Failure("build_failed", "building the sdist failed: RuntimeError", None)
    build_failed = (
        Stage("build", "failed", 0.5),
        *(Stage(name, "skipped", 0.0) for name in ("venv", "install", "probe")),
    )
    report = Report(
        target=".",
        artifacts=(),
        runs=(run(stage_list=build_failed, ok=False),),
        failures=(failure,),
        host="native",
        groups=("sandboxverify.plugins",),
        installer="pip",
        seconds=0.6,
        expect_tools=("greet",),
    )
    root = parse(report)

    assert_schema(root)
    assert statuses(root) == {
        "sandboxverify.build::build": "failed",
        "sandboxverify.py3_12_1::venv": "skipped",
        "sandboxverify.py3_12_1::install": "skipped",
        "sandboxverify.py3_12_1::probe": "skipped",
        "sandboxverify.py3_12_1::tool greet": "skipped",
    }


def test_an_invalid_artifact_fails_its_own_case_not_the_build_twice() -> None:
    problem = Failure(
        "artifact_invalid", "demo-1.0.tar.gz: PKG-INFO has no Name", None, hint="fix the build"
    )
    unnamed = Failure("artifact_invalid", "no wheel was built", None)
    invalid = (Stage("build", "failed", 0.5), Stage("venv", "skipped", 0.0))

    root = parse(make_report((run(stage_list=invalid, ok=False),), (problem,)))
    assert_schema(root)
    assert statuses(root) == {
        "sandboxverify.build::build": "passed",
        "sandboxverify.build::sdist demo-1.0.tar.gz": "failed",
        "sandboxverify.build::wheel demo-1.0-py3-none-any.whl": "passed",
        "sandboxverify.py3_12_1::venv": "skipped",
    }

    root = parse(make_report((run(stage_list=invalid, ok=False),), (unnamed,)))
    assert failure_of(cases(root)["sandboxverify.build::build"]).get("type") == "artifact_invalid"
    assert root.get("failures") == "1"


def test_a_check_that_failed_without_a_failure_record_still_fails() -> None:
    """No false green: a failed stage, a plugin that did not load or a missing expected tool
    fail their case even when no failure says so."""
    report = make_report(
        (run(stage_list=stages(imports="failed"), plugins=(BROKEN,), ok=False),),
        expect_tools=("greet",),
    )
    root = parse(report)

    assert_schema(root)
    failed = {n.split("::")[1] for n, c in cases(root).items() if status(c) == "failed"}
    assert failed == {"imports", "plugin broken (demo.broken:setup)", "tool greet"}
    broken = cases(root)["sandboxverify.py3_12_1::plugin broken (demo.broken:setup)"]
    assert "no attribute 'setpu'" in (failure_of(broken).get("message") or "")

    nothing = make_report((), ())
    assert not nothing.ok
    assert statuses(parse(nothing))["sandboxverify.build::verdict"] == "failed"


def test_control_characters_from_plugin_output_are_shown_escaped_in_well_formed_xml() -> None:
    noisy = "boom\x00\x01\x08\x0b\x0c\x1b[31mred\x1b[0m\ud800 tab\tend\r\nnext"
    failure = Failure("plugin_load_failed", noisy, PY, plugin="broken", details=noisy, hint=noisy)
    text = junit_xml(make_report((run(plugins=(BROKEN,), ok=False),), (failure,)))

    root = ET.fromstring(text)  # raises on anything XML 1.0 forbids
    element = root.find(".//failure")
    assert element is not None
    shown = "boom\\x00\\x01\\x08\\x0b\\x0c\\x1b[31mred\\x1b[0m tab\tend\nnext"
    assert element.get("message") == shown
    assert element.text is not None and shown in element.text
    text.encode("utf-8")  # no lone surrogate left either


def test_runs_of_the_same_version_get_distinct_suites() -> None:
    report = make_report((run(), run(python="3.10.13"), run()))
    root = parse(report)

    assert [s.get("name") for s in root] == [
        "build",
        f"python {PY}",
        "python 3.10.13",
        f"python {PY}-2",
    ]
    classnames = {case.get("classname") for case in root.iter("testcase")}
    assert classnames == {
        "sandboxverify.build",
        "sandboxverify.py3_12_1",
        "sandboxverify.py3_10_13",
        "sandboxverify.py3_12_1_2",
    }


def test_the_timestamp_is_when_the_check_started() -> None:
    ended = datetime(2025, 1, 2, 3, 4, 10, 600000, tzinfo=timezone.utc)
    root = ET.fromstring(junit_xml(make_report((run(),)), now=ended))

    assert {s.get("timestamp") for s in root} == {"2025-01-02T03:04:07+00:00"}


def test_the_attribute_set_is_the_one_pytest_writes(pytester: pytest.Pytester) -> None:
    """Viewers that read pytest's reports read ours: same elements, no attribute they lack
    (beyond the run totals on <testsuites>)."""
    pytester.makepyfile(
        """
        import pytest
        def test_ok(): pass
        def test_fails(): assert 0
        @pytest.mark.skip(reason="no")
        def test_skipped(): pass
        """
    )
    out = Path(pytester.path, "pytest.xml")
    pytester.runpytest("-p", "no:cacheprovider", f"--junitxml={out}")
    theirs = ET.parse(out).getroot()
    failing = make_report(
        (
            run(
                stage_list=stages(probe="failed", imports="skipped"),
                plugins=(BROKEN,),
                ok=False,
            ),
        ),
        (Failure("plugin_load_failed", "broken", PY, plugin="broken"),),
    )
    ours = parse(failing)

    def attributes(root: ET.Element) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for element in root.iter():
            found.setdefault(element.tag, set()).update(element.attrib)
        return found

    mine, pytests = attributes(ours), attributes(theirs)
    assert {"testsuites", "testsuite", "testcase", "failure", "skipped"} <= set(pytests)
    for tag in ("testsuite", "testcase", "failure", "skipped"):
        assert mine[tag] <= pytests[tag] | {"type"}, tag
    assert mine["testsuites"] - pytests["testsuites"] <= {"tests", "failures", "errors", "time"}
    assert_valid_junit(out)  # what pytest writes validates too: the schema is the viewers' own


def test_a_failed_probe_fails_its_case_even_when_its_plugins_say_why() -> None:
    """The text says ``FAIL probe``: the JUnit probe case is never green then."""
    failure = Failure("plugin_load_failed", "plugin 'broken' failed", PY, plugin="broken")
    report = make_report(
        (run(stage_list=stages(probe="failed"), plugins=(GREETER, BROKEN), ok=False),),
        (failure,),
    )
    root = parse(report)

    assert_schema(root)
    probe = cases(root)["sandboxverify.py3_12_1::probe"]
    assert status(probe) == "failed"
    assert failure_of(probe).get("message") == "the probe stage failed: plugin broken"
    assert status(cases(root)["sandboxverify.py3_12_1::plugin broken (demo.broken:setup)"]) == (
        "failed"
    )
    for stage in report.runs[0].stages[1:]:
        expected = "failed" if stage.status == "failed" else "passed"
        assert status(cases(root)[f"sandboxverify.py3_12_1::{stage.name}"]) == expected


def test_warnings_are_a_property_of_the_build_suite_and_fail_no_case() -> None:
    warning = ReportWarning("junk-files", "demo-1.0.tar.gz: ships .github/", "demo-1.0.tar.gz")
    report = replace(make_report((run(plugins=(GREETER,), tools=(GREET,)),)), warnings=(warning,))
    root = parse(report)

    assert root.get("failures") == "0"
    properties = {p.get("name"): p.get("value") for p in root[0].iter("property")}
    assert properties["warnings"] == "junk-files: demo-1.0.tar.gz: ships .github/"
