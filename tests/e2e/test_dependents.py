"""The application that depends on its plugin, through the real pipeline: the application is a
fixture built here and served with ``--find-links``, so nothing needs a package index but the
fixtures' build requirements."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from sandboxverify import Report
from sandboxverify.sandbox._toolchain import find_uv
from tests.e2e.test_fixtures import codes, verify
from tests.helpers import fixture

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


def wheel_links(tmp_path_factory: pytest.TempPathFactory, name: str) -> str:
    """A directory holding the wheel of fixture ``name``, for ``--find-links``."""
    root = tmp_path_factory.mktemp(name)
    uv = find_uv()
    assert uv is not None
    source = shutil.copytree(fixture(name), root / "src" / name)
    build = [str(uv), "build", "--wheel", "-q", "--python", sys.executable]
    subprocess.run([*build, "--out-dir", str(root / "links"), str(source)], check=True, timeout=300)
    return str(root / "links")


@pytest.fixture(scope="module")
def links(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The application's wheel (it requires svfix-shell-display), where ``--find-links`` finds
    it."""
    return wheel_links(tmp_path_factory, "shell-app")


def installed(report: Report) -> set[str]:
    return {dist["name"] for run in report.runs for dist in run.installed}


def test_a_plugin_whose_application_requires_it_is_judged_with_that_application(
    links: str,
) -> None:
    report = verify(fixture("shell-display"), find_links=(links,))

    assert report.ok, report.failures
    [run] = report.runs
    [plugin] = run.plugins
    assert plugin.ok
    assert plugin.application is not None
    assert (plugin.application.name, plugin.application.version) == ("svfix-shell", "1.0.0")
    assert (plugin.application.found_by, plugin.application.installed) == ("dependent", True)
    assert "svfix-shell" in installed(report)
    [note] = [n for n in report.notes if "judged with svfix-shell 1.0.0 installed" in n]
    assert "svfix-shell requires svfix-shell-display" in note
    assert "so its users have it" in note
    # the stages are run again with the application: the run records them once each
    assert [stage.name for stage in run.stages].count("probe") == 1


def test_without_the_application_the_plugin_fails_as_before() -> None:
    report = verify(fixture("shell-display"))

    assert codes(report) == ["plugin_load_failed"]
    assert "No module named 'svfix_shell'" in report.failures[0].message
    assert "svfix-shell" not in installed(report)
    [note] = [n for n in report.notes if "'svfix_shell'" in n]
    assert "not installable as a wheel" in note
    assert note.endswith("judged without it")


def test_an_application_that_does_not_require_the_module_confirms_nothing(links: str) -> None:
    """svfix-shell is found, but it does not depend on svfix-display-orphan: its users do not
    get svfix-shell with it, and the undeclared import stays a failure."""
    report = verify(fixture("display-orphan"), find_links=(links,))

    assert codes(report) == ["import_failed"]
    assert report.failures[0].module == "svfix_display_orphan"
    assert "No module named 'svfix_shell'" in report.failures[0].message
    assert "svfix-shell" not in installed(report)
    [note] = [n for n in report.notes if "'svfix_shell'" in n]
    assert "svfix-shell 1.0.0 does not require svfix-display-orphan" in note
    assert note.endswith("judged without it")


@pytest.fixture(scope="module")
def deckard_links(tmp_path_factory: pytest.TempPathFactory) -> str:
    """svfix-deckard's wheel (module ``deckard``; it requires svfix-deckard-extensions)."""
    return wheel_links(tmp_path_factory, "deckard-app")


def test_an_application_whose_module_is_named_otherwise_is_found_by_the_name_ours_extends(
    deckard_links: str,
) -> None:
    """svfix-deckard-extensions imports ``deckard``, the module of svfix-deckard (as
    mkdocs-material-extensions imports ``material``, from mkdocs-material): the name ours
    extends finds it."""
    report = verify(fixture("deckard-extensions"), find_links=(deckard_links,))

    assert report.ok, report.failures
    assert "svfix-deckard" in installed(report)
    [note] = [n for n in report.notes if "judged with svfix-deckard 1.0.0 installed" in n]
    assert "imports 'deckard', which svfix-deckard brings, without declaring it" in note
    assert "svfix-deckard requires svfix-deckard-extensions" in note
    alone = verify(fixture("deckard-extensions"))
    assert codes(alone) == ["import_failed"]
