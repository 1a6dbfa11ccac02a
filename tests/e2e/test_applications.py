"""The application of any group, found and installed; hosts that applications ship. Through the
real pipeline: the applications are fixtures built here and served with ``--find-links``, so
nothing needs a package index but the plugins' build requirements."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sandboxverify import Report
from sandboxverify.report._model import PluginRecord
from sandboxverify.sandbox._toolchain import find_uv
from tests.e2e.test_fixtures import codes, verify
from tests.helpers import fixture

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

APPLICATIONS = ("lamps-app", "widgets-app", "hostile-host-app")


@pytest.fixture(scope="module")
def links(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The applications' wheels, where ``--find-links`` finds them."""
    root = tmp_path_factory.mktemp("applications")
    uv = find_uv()
    assert uv is not None
    out = ["--out-dir", str(root / "links")]
    for name in APPLICATIONS:
        source = shutil.copytree(fixture(name), root / "src" / name)
        build = [str(uv), "build", "--wheel", "-q", "--python", sys.executable, *out, str(source)]
        subprocess.run(build, check=True, timeout=300)
    return str(root / "links")


def only_plugin(report: Report) -> PluginRecord:
    [run] = report.runs
    [plugin] = run.plugins
    return plugin


def installed(report: Report) -> set[str]:
    return {dist["name"] for run in report.runs for dist in run.installed}


def test_an_application_the_plugin_does_not_declare_is_found_by_its_name(links: str) -> None:
    report = verify(fixture("bulb-undeclared"), find_links=(links,))

    assert report.ok, report.failures
    plugin = only_plugin(report)
    assert plugin.application is not None
    assert (plugin.application.name, plugin.application.version) == ("svfix-lamps", "1.0.0")
    assert (plugin.application.found_by, plugin.application.installed) == ("name", True)
    assert plugin.host == "entrypoints"
    assert "svfix-lamps" in installed(report)
    assert any(
        "installed svfix-lamps 1.0.0 next to svfix-bulb-undeclared" in n for n in report.notes
    )


def test_without_its_application_the_plugin_fails_as_it_did_before() -> None:
    """Nowhere to find svfix-lamps: what was tried is said, and the plugin is loaded without
    it (the false red this feature removes where the application can be found)."""
    report = verify(fixture("bulb-undeclared"))

    assert codes(report) == ["plugin_load_failed"]
    assert "No module named 'svfix_lamps'" in report.failures[0].message
    plugin = only_plugin(report)
    assert plugin.application is not None and plugin.application.name is None
    [(requirement, outcome)] = plugin.application.tried
    assert requirement == "svfix_lamps"
    assert outcome.startswith("not installable as a wheel")


def test_an_application_that_cannot_be_installed_with_the_plugin_is_said_so(
    tmp_path: Path,
) -> None:
    """svfix-lamps names the group, but depends on what no index has: the plugin goes without
    it, and the report says why."""
    source = shutil.copytree(fixture("lamps-app"), tmp_path / "lamps-app")
    pyproject = source / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            'requires-python = ">=3.9"',
            'requires-python = ">=3.9"\ndependencies = ["svfix-nowhere-to-be-found>=1"]',
        )
    )
    uv = find_uv()
    assert uv is not None
    links = tmp_path / "links"
    build = [str(uv), "build", "--wheel", "-q", "--python", sys.executable]
    subprocess.run([*build, "--out-dir", str(links), str(source)], check=True, timeout=300)

    report = verify(fixture("bulb-undeclared"), find_links=(str(links),))

    assert codes(report) == ["plugin_load_failed"]
    application = only_plugin(report).application
    assert application is not None and application.name is None
    [(requirement, outcome)] = application.tried
    assert requirement == "svfix_lamps"
    assert outcome.startswith("names the group, but could not be installed next to the plugin")
    assert "svfix-nowhere-to-be-found" in outcome
    assert any("could not be installed next to svfix-bulb-undeclared" in n for n in report.notes)
    assert "svfix-lamps" not in installed(report)


def test_an_application_the_plugin_declares_is_reported_not_installed(links: str) -> None:
    report = verify(fixture("bulb-declared"), find_links=(links,))

    assert report.ok, report.failures
    application = only_plugin(report).application
    assert application is not None
    assert (application.name, application.version) == ("svfix-lamps", "1.0.0")
    assert (application.found_by, application.installed, application.tried) == (
        "declared",
        False,
        (),
    )
    assert not report.notes


def test_a_candidate_whose_code_does_not_name_the_group_is_never_installed(links: str) -> None:
    report = verify(fixture("socket-unconfirmed"), find_links=(links,))

    assert report.ok, report.failures
    plugin = only_plugin(report)
    assert plugin.application is not None and plugin.application.name is None
    assert plugin.application.tried == (
        (
            "svfix_lamps",
            "svfix-lamps 1.0.0 does not name 'svfix_lamps.sockets' in its code: not its "
            "application",
        ),
    )
    assert "svfix-lamps" not in installed(report)
    assert plugin.host_reason is not None
    assert plugin.host_reason.endswith("its application was not found")


def test_pip_finds_and_installs_the_application_as_uv_does(links: str) -> None:
    report = verify(fixture("bulb-undeclared"), find_links=(links,), installer="pip")

    assert report.ok, report.failures
    application = only_plugin(report).application
    assert application is not None
    assert (application.name, application.found_by, application.installed) == (
        "svfix-lamps",
        "name",
        True,
    )


def test_the_host_an_application_ships_passes_a_plugin_that_works(links: str) -> None:
    report = verify(fixture("widget-good"), find_links=(links,))

    assert report.ok, report.failures
    plugin = only_plugin(report)
    assert plugin.host == "svfix-widgets-app"
    assert plugin.host_reason is not None
    assert "ships its own host for 'svfix.widgets'" in plugin.host_reason
    [tool] = report.runs[0].tools
    assert (tool.name, tool.kind, tool.description) == ("clock", "widget", "Shows the time.")


def test_the_host_an_application_ships_fails_a_plugin_with_its_message(links: str) -> None:
    report = verify(fixture("widget-broken"), find_links=(links,))

    assert codes(report) == ["plugin_load_failed"]
    failure = report.failures[0]
    assert failure.plugin == "banner"
    assert failure.message == (
        "plugin 'banner' (svfix_widget_broken:Banner) was refused by its application: "
        "ValueError: no template for 'banner'"
    )
    assert failure.hint is not None and "application's own host" in failure.hint
    # EntryPoint.load() alone passes it: the application's host is what catches it
    loaded_only = verify(
        fixture("widget-broken"),
        find_links=(links,),
        host="entrypoints",
        groups=("svfix.widgets",),
    )
    assert loaded_only.ok, loaded_only.failures


def test_a_host_that_misbehaves_never_passes_a_plugin(links: str) -> None:
    report = verify(fixture("hostile-host-plugins"), find_links=(links,))

    assert not report.ok
    [run] = report.runs
    assert run.tools == ()
    verdicts = {failure.plugin: failure.code for failure in report.failures}
    assert {plugin.name for plugin in run.plugins} == set(verdicts)  # each one failed
    assert verdicts == {
        "raises": "plugin_load_failed",
        "garbage": "plugin_load_failed",
        "nameless": "plugin_load_failed",
        "exits": "plugin_load_failed",
        "dies": "probe_crashed",
        "empty": "plugin_empty",
    }
    garbage = next(f for f in report.failures if f.plugin == "garbage")
    assert "returned int, not a list of registrations" in garbage.message
    assert garbage.hint is not None and "tell the application's maintainers" in garbage.hint


def test_an_application_s_own_check_verifies_the_host_it_ships() -> None:
    report = verify(fixture("widgets-app"))

    assert report.ok, report.failures
    plugin = only_plugin(report)
    assert (plugin.group, plugin.host, plugin.application) == (
        "sandboxverify.hosts",
        "host-protocol",
        None,
    )
    [tool] = report.runs[0].tools
    assert (tool.kind, tool.name) == ("host", "svfix.widgets")
