"""Plugins of pluggy applications and of pytest, checked with no options: the application runs
with the plugin (datasette serves pages, tox lists and runs an environment, sqlite-utils runs its
command line, hatchling builds, pytest runs a generated test module), so a plugin whose hooks are
well-formed but raise when called fails, naming the hook, and one whose fixture needs a service
this machine lacks passes with a note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandboxverify import CheckOptions, Report, check
from tests.helpers import fixture, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


def verify(name: str) -> Report:
    return check(CheckOptions(targets=(str(fixture(name)),), installer="uv"))


def exercise(report: Report) -> dict[str, tuple[str | None, str | None]]:
    return {
        f"{tool.kind}:{tool.name}": (tool.exercise, tool.exercise_note)
        for run in report.runs
        for tool in run.tools
    }


@pytest.mark.parametrize(
    ("name", "host", "fragments"),
    [
        (
            "broken-datasette-prepare-connection",
            "pluggy",
            ["TypeError", "in the prepare_connection hook, during GET /", "answered 500"],
        ),
        (
            "broken-datasette-startup",
            "pluggy",
            ["KeyError", "'counters'", "in the startup hook, during starting datasette"],
        ),
        (
            "broken-datasette-render-cell",
            "pluggy",
            ["AttributeError", "upper", "in the render_cell hook, during GET /data/t,"],
        ),
        (
            "broken-tox-plugin",
            "pluggy",
            ["TypeError", "'type'", "in the tox_add_option hook, during tox l"],
        ),
        (
            "broken-sqlite-utils-command",
            "pluggy",
            ["TypeError", "exactly one parameter declaration", "in the register_commands hook"],
        ),
        (
            "broken-hatch-build-hook",
            "pluggy",
            ["AttributeError", "public", "hatchling build -t wheel with the build hook"],
        ),
        (
            "broken-pytest-parametrize",
            "pytest",
            ["pytest could not collect the generated tests", "KeyError: 'ids'"],
        ),
        (
            "broken-pytest-switch",
            "pytest",
            ["pytest --line-lint ended in an internal error", "in its --line-lint option"],
        ),
        (
            "broken-pytest-fixture",
            "pytest",
            ["ValueError", "no option named '--workdir-base'", "in fixture 'workdir', at setup"],
        ),
    ],
)
def test_a_plugin_that_breaks_when_its_application_uses_it_fails(
    name: str, host: str, fragments: list[str]
) -> None:
    report = verify(name)

    assert [f.code for f in report.failures] == ["plugin_load_failed"]
    [failure] = report.failures
    assert "broke when its application used it" in failure.message
    for fragment in fragments:
        assert fragment in failure.message
    assert failure.hint and "traceback" in failure.hint
    assert failure.details  # the plugin's traceback
    [plugin] = report.runs[0].plugins
    assert plugin.host == host and not plugin.ok
    assert plugin.error is not None and plugin.error.stage == "exercise"


def test_the_hooks_datasette_called_are_exercised() -> None:
    report = verify("good-datasette-plugin")

    assert report.ok, report.failures
    assert exercise(report) == {
        "hook:extra_css_urls": ("passed", None),
        "hook:prepare_connection": ("passed", None),
    }


def test_a_fixture_that_needs_an_unreachable_service_passes_with_a_note(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    target = str(fixture("good-pytest-service-fixture"))
    result = run_cli(["check", target, "--json", str(report)])

    assert result.code == 0, result.stdout + result.stderr
    document = json.loads(report.read_text())
    tools = {tool["name"]: tool for tool in document["runs"][0]["tools"]}
    assert tools["database_url"]["exercise"] == "passed"
    connection = tools["database_connection"]
    assert connection["exercise"] == "unavailable"
    assert connection["exercise_note"].startswith("needs a service it cannot reach")
    [note] = document["notes"]
    assert note.startswith(
        "fixture 'database_connection' of plugin 'database' was not exercised: needs a service "
        "it cannot reach"
    )
    assert "not exercised: fixture:database_connection" in result.stdout
    assert f"note: {note.splitlines()[0]}" in result.stdout


def test_a_fixture_that_needs_a_program_or_data_installed_apart_passes_with_a_note() -> None:
    """A program on PATH (Graphviz, Tesseract) or data the package's own command downloads
    (Playwright's browsers, NLTK's corpora) is installed by its users apart from Python
    packages: a fixture that needs one is unavailable here, not broken."""
    report = verify("good-pytest-outside-program")

    assert report.ok, report.failures
    found = exercise(report)
    assert found["fixture:diagram_source"] == ("passed", None)
    renderer, note = found["fixture:diagram_renderer"]
    assert renderer == "unavailable"
    assert note is not None and note.startswith("needs the program 'svfix-diagram-render'")
    model, note = found["fixture:layout_model"]
    assert model == "unavailable"
    assert note is not None and note.startswith("needs a program or data")
    assert "svfix-diagrams download" in note
    assert len(report.notes) == 2


def test_a_hatch_environment_plugin_is_checked_against_hatchs_own_hookspecs() -> None:
    report = verify("good-hatch-environment")

    assert report.ok, report.failures
    [(verdict, note)] = exercise(report).values()
    assert verdict == "not_exercised"
    assert note is not None and note.startswith(
        "registers the environment 'svfix-labelled' (svfix_good_hatch_environment.hooks."
        "LabelledEnvironment), which only the hatch command line runs"
    )
