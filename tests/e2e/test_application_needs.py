"""The application's own undeclared import, through the real pipeline: svfix-lantern imports
svfix_glow without declaring it (as pylama 8.4.1 imports pkg_resources); the applications are
fixtures built here and served with ``--find-links``."""

from __future__ import annotations

import pytest

from sandboxverify import Report
from tests.e2e.test_dependents import wheel_links
from tests.e2e.test_fixtures import codes, verify
from tests.helpers import fixture

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


def installed(report: Report) -> set[str]:
    return {dist["name"] for run in report.runs for dist in run.installed}


def test_a_plugin_is_judged_with_what_its_application_imports_without_declaring_it(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    lantern = wheel_links(tmp_path_factory, "lantern-app")
    glow = wheel_links(tmp_path_factory, "glow-lib")

    report = verify(fixture("lantern-wick"), find_links=(lantern, glow))

    assert report.ok, report.failures
    assert {"svfix-lantern", "svfix-glow"} <= installed(report)
    [note] = [n for n in report.notes if "judged with svfix_glow installed" in n]
    assert "svfix-lantern, the application that loads them, imports 'svfix_glow'" in note
    assert "(in svfix_lantern/base.py)" in note
    # the application's import is not looked for as a dependent of the plugin's
    assert not any("was looked for as an application" in n for n in report.notes)

    # where what the application lacks cannot be installed, the failure stands, said so
    without = verify(fixture("lantern-wick"), find_links=(lantern,))
    assert codes(without) == ["plugin_load_failed"]
    assert any("could not be installed next to it" in n for n in without.notes)
