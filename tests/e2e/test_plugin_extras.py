"""A plugin that lacks its application, which the package's users get with an extra, is loaded
with that extra installed, through the real pipeline: it passes there, fails there for its own
cause, or fails when the extra does not install; a plugin that lacks anything else is never
loaded again."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandboxverify import Report
from sandboxverify.report import PluginRecord
from tests.e2e.test_fixtures import codes, verify
from tests.helpers import assert_valid_report, copy_fixture, edited_fixture, fixture, uv_wheel

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


@pytest.fixture(scope="module")
def find_links(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A directory holding the wheel of ``svfix-signal-core``, the application the extra
    brings: installed from it, never from an index."""
    root = tmp_path_factory.mktemp("find-links")
    uv_wheel(copy_fixture("signal-core", root / "src"), root / "wheels")
    return str(root / "wheels")


def sole_plugin(report: Report) -> PluginRecord:
    [run] = report.runs
    [plugin] = run.plugins
    return plugin


def test_a_plugin_lacking_its_application_passes_with_the_extra_that_brings_it(
    find_links: str,
) -> None:
    """sentry-sdk's OpenTelemetry propagator: opentelemetry comes with sentry-sdk[opentelemetry],
    and no distribution is named after the group to be found as its application."""
    report = verify(fixture("good-plugin-extra"), find_links=(find_links,))

    assert report.ok, report.failures
    plugin = sole_plugin(report)
    assert (plugin.name, plugin.ok, plugin.extra) == ("morse", True, "carriers")
    assert plugin.host_reason is not None
    assert "loaded with the extra 'carriers' installed (svfix-good-plugin-extra[carriers])" in (
        plugin.host_reason
    )
    document = report.to_json()
    assert document["runs"][0]["plugins"][0]["extra"] == "carriers"
    assert_valid_report(document)


def test_a_plugin_that_fails_with_the_extra_too_fails_for_its_own_cause(
    tmp_path: Path, find_links: str
) -> None:
    project = copy_fixture("good-plugin-extra", tmp_path)
    morse = project / "svfix_good_plugin_extra" / "morse.py"
    morse.write_text(morse.read_text().replace("import Carrier", "import Carrier, Antenna"))

    report = verify(project, find_links=(find_links,))

    assert codes(report) == ["plugin_load_failed"]
    assert "cannot import name 'Antenna'" in report.failures[0].message
    plugin = sole_plugin(report)
    assert (plugin.ok, plugin.extra) == (False, "carriers")


def test_a_plugin_lacking_something_besides_its_application_is_not_loaded_again(
    tmp_path: Path, find_links: str
) -> None:
    """Its application loads it for every user who names it, whatever extras they installed."""
    project = copy_fixture("good-plugin-extra", tmp_path)
    morse = project / "svfix_good_plugin_extra" / "morse.py"
    morse.write_text("import svfix_absent_codec\n" + morse.read_text())

    report = verify(project, find_links=(find_links,))

    assert codes(report) == ["plugin_load_failed"]
    assert "No module named 'svfix_absent_codec'" in report.failures[0].message
    plugin = sole_plugin(report)
    assert plugin.extra is None
    assert "extra" not in (plugin.host_reason or "")


def test_a_plugin_whose_extra_does_not_install_keeps_its_failure_and_says_why() -> None:
    """Without the local wheel no index has svfix-signal-core: the extra cannot install."""
    report = verify(fixture("good-plugin-extra"))

    assert codes(report) == ["plugin_load_failed"]
    assert "No module named 'svfix_signal'" in report.failures[0].message
    plugin = sole_plugin(report)
    assert plugin.extra is None
    assert "svfix-good-plugin-extra[carriers] does not install" in (plugin.host_reason or "")


@pytest.fixture(scope="module")
def extra_dep_links(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A directory holding the wheel of ``svfix-extra-dep``, which the extra ``chart`` of
    ``good-named-plugin-extra`` declares."""
    root = tmp_path_factory.mktemp("extra-dep-links")
    uv_wheel(copy_fixture("extra-dep", root / "src"), root / "wheels")
    return str(root / "wheels")


def named_plugins(report: Report) -> dict[str, PluginRecord]:
    [run] = report.runs
    return {plugin.name: plugin for plugin in run.plugins}


def test_a_plugin_named_as_an_extra_passes_with_it(extra_dep_links: str) -> None:
    """APScheduler 3.11.3 loads the job store a user names (``mongodb``), and declares an extra
    named as each: its users install it."""
    report = verify(fixture("good-named-plugin-extra"), find_links=(extra_dep_links,))

    assert report.ok, report.failures
    [run] = report.runs
    assert run.imports is not None
    # what the stores import is judged with the extra they were loaded with, as their users have
    [drawing] = [e for e in run.imports.excused if e.module == "svfix_good_jobstores.drawing"]
    assert (drawing.reason, drawing.extra) == ("extra", "chart")
    assert "imports it" in drawing.detail
    plugins = named_plugins(report)
    assert (plugins["memory"].ok, plugins["memory"].extra) == (True, None)
    chart = plugins["chart"]
    assert (chart.ok, chart.extra) == (True, "chart")
    assert chart.host_reason is not None
    assert (
        "loaded with the extra 'chart' installed (svfix-good-jobstores[chart]): its application "
        "loads it when a user names it, and it is named for that extra"
    ) in chart.host_reason
    # named for no extra, in a module named for one (tooz's "kazoo" in tooz.drivers.zookeeper)
    bars = plugins["bars"]
    assert (bars.ok, bars.extra) == (True, "chart")
    assert bars.host_reason is not None
    assert "and its module is named for that extra" in bars.host_reason
    assert_valid_report(report.to_json())


def test_a_plugin_named_as_an_extra_that_fails_with_it_fails_for_its_own_cause(
    tmp_path: Path, extra_dep_links: str
) -> None:
    project = edited_fixture(
        "good-named-plugin-extra",
        tmp_path,
        "svfix_good_jobstores/chart.py",
        lambda text: text.replace("import bar", "import bar, pie"),
    )
    report = verify(project, find_links=(extra_dep_links,))

    assert codes(report) == ["plugin_load_failed", "plugin_load_failed"]
    assert "ChartStore requires svfix-extra-dep installed" in report.failures[0].message
    assert named_plugins(report)["chart"].extra == "chart"
    assert named_plugins(report)["bars"].extra == "chart"


def test_a_plugin_named_as_no_extra_in_a_module_named_as_none_is_not_loaded_again(
    tmp_path: Path, extra_dep_links: str
) -> None:
    project = edited_fixture(
        "good-named-plugin-extra",
        tmp_path,
        "pyproject.toml",
        lambda text: text.replace('\nchart = ["', '\ngraphs = ["'),
    )
    report = verify(project, find_links=(extra_dep_links,))

    # both stores fail for want of what their module imports: reported once, at that module
    assert codes(report) == ["import_failed"]
    assert "svfix_good_jobstores.drawing" in report.failures[0].message
    assert "so users meet this failure" in (report.failures[0].hint or "")
    plugins = named_plugins(report)
    assert [(plugins[n].ok, plugins[n].extra) for n in ("chart", "bars")] == [(False, None)] * 2
