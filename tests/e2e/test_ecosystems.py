"""One good and one broken sample package per plugin ecosystem, checked with no options: the
host is chosen from the group, the plugin is loaded in its real application, and the verdict
names what that application says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandboxverify import CheckOptions, Report, check
from tests.helpers import copy_fixture, fixture, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


def verify(name: str, **options: object) -> Report:
    return check(CheckOptions(targets=(str(fixture(name)),), installer="uv", **options))  # type: ignore[arg-type]


def registered(report: Report) -> set[str]:
    return {f"{tool.kind}:{tool.name}" for run in report.runs for tool in run.tools}


@pytest.mark.parametrize(
    ("name", "host", "registrations"),
    [
        (
            "good-pytest-plugin",
            "pytest",
            {"fixture:greeting", "option:--greeting", "ini:greeting_name", "marker:greets"},
        ),
        ("good-llm-model", "llm", {"model:parrot", "command:parrot-say"}),
        ("good-datasette-plugin", "pluggy", {"hook:extra_css_urls", "hook:prepare_connection"}),
        ("good-flake8-plugin", "flake8", {"code:SVF"}),
        ("good-sphinx-theme", "sphinx", {"theme:good_sphinx_theme"}),
        ("good-mkdocs-plugin", "mkdocs", {"plugin:svfix-stamp"}),
    ],
)
def test_a_good_plugin_passes_in_its_own_application(
    name: str, host: str, registrations: set[str]
) -> None:
    report = verify(name)

    assert report.ok, report.failures
    assert report.host == "auto"
    [run] = report.runs
    [plugin] = run.plugins
    assert plugin.host == host
    assert plugin.host_reason and "group" in plugin.host_reason
    assert registrations <= registered(report)
    assert any(d["name"] == name.replace("good-", "svfix-good-") for d in run.installed)


def test_an_llm_plugin_that_changes_what_llm_has_registers_those_changes() -> None:
    """It registers nothing of its own: it changes llm's commands and its models in place."""
    report = verify("llm-changes-llm")

    assert report.ok, report.failures
    [run] = report.runs
    changed = {f"{tool.kind}:{tool.name}": tool.description or "" for tool in run.tools}
    assert "options added: --shout" in changed.pop("command:prompt")
    assert changed, "no model of llm's own was changed"
    assert all(
        key.startswith("model:") and "an async model added" in description
        for key, description in changed.items()
    ), changed


def test_each_of_two_entry_points_of_one_package_reports_only_its_own_registrations() -> None:
    # pytest autoloads both in every run; neither is a duplicate of the other
    report = verify("good-pytest-two-entry-points")

    assert report.ok, report.failures
    [run] = report.runs
    assert {plugin.name: plugin.ok for plugin in run.plugins} == {"pair": True, "pair.watch": True}
    owners = {f"{tool.kind}:{tool.name}": tool.plugin for tool in run.tools if tool.kind != "hook"}
    assert owners == {
        "fixture:pair_run_id": "pair",
        "fixture:pair_worker_id": "pair",
        "option:--pair-workers": "pair",
        "ini:pair_roots": "pair",
        "marker:pair_group": "pair",
        "option:--pair-watch": "pair.watch",
    }


def test_expected_names_match_any_kind_and_kind_name_is_exact() -> None:
    assert verify("good-pytest-plugin", expect_tools=("greeting", "fixture:greeting")).ok
    wrong_kind = verify("good-pytest-plugin", expect_tools=("marker:greeting",))
    assert [f.code for f in wrong_kind.failures] == ["tool_missing"]


@pytest.mark.parametrize(
    ("name", "host", "fragments"),
    [
        (
            "broken-pytest-hookimpl",
            "pytest",
            ["PluginValidationError", "pytest_collection_modifyitems", "'reverse'"],
        ),
        ("broken-datasette-plugin", "pluggy", ["extra_css_url", "did you mean 'extra_css_urls'"]),
        ("broken-flake8-prefix", "flake8", ["svf-print", "does not match"]),
        ("broken-sphinx-theme", "sphinx", ["sphinx-build", "no theme configuration file"]),
        ("broken-mkdocs-plugin", "mkdocs", ["KeyError", "SVFIX_STAMP_API", "mkdocs build"]),
    ],
)
def test_a_broken_plugin_fails_with_what_its_application_says(
    name: str, host: str, fragments: list[str]
) -> None:
    report = verify(name)

    assert [f.code for f in report.failures] == ["plugin_load_failed"]
    [failure] = report.failures
    assert failure.hint
    for fragment in fragments:
        assert fragment in failure.message
    [plugin] = report.runs[0].plugins
    assert plugin.host == host and not plugin.ok


def test_the_pytest_hookimpl_that_import_checks_pass_fails_under_pytest() -> None:
    # the group's old default: importing the module is all the entrypoints host checks
    imported = verify("broken-pytest-hookimpl", host="entrypoints", groups=("pytest11",))
    assert imported.ok
    assert not verify("broken-pytest-hookimpl").ok


def test_a_library_without_plugins_passes_on_its_build_install_imports_and_scripts() -> None:
    report = verify("good-library")

    assert report.ok, report.failures
    [run] = report.runs
    assert run.plugins == () and run.tools == ()
    assert run.imports is not None and run.imports.failed == ()
    assert any("verified as a library" in note for note in report.notes)
    expecting = verify("good-library", expect_plugins=1)
    assert [f.code for f in expecting.failures] == ["no_plugins"]


def test_a_near_miss_group_is_no_plugins_with_did_you_mean() -> None:
    report = verify("broken-near-miss-group")

    assert [f.code for f in report.failures] == ["no_plugins"]
    [failure] = report.failures
    assert "did you mean 'sandboxverify.plugins'" in failure.message
    assert failure.hint and "[project.entry-points.'sandboxverify.plugins']" in failure.hint


def test_the_text_says_which_host_judged_each_plugin_and_why() -> None:
    result = run_cli(["check", str(fixture("good-pytest-plugin")), "--installer", "uv"])

    assert result.code == 0, result.stderr
    assert "judged by host pytest (group 'pytest11' is loaded by pytest)" in result.stdout
    assert "fixture:greeting" in result.stdout


def test_a_plugin_allowed_to_fail_is_a_note_and_the_check_passes(tmp_path: Path) -> None:
    # one plugin needs a service key this machine lacks (its author allows it to fail here);
    # a second one of the same distribution works
    project = copy_fixture("broken-mkdocs-plugin", tmp_path)
    package = project / "svfix_broken_mkdocs_plugin"
    (package / "plain.py").write_text(
        "from mkdocs.plugins import BasePlugin\n\n\nclass PlainPlugin(BasePlugin):\n    pass\n"
    )
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            'svfix-keyed = "svfix_broken_mkdocs_plugin.plugin:KeyedPlugin"',
            'svfix-keyed = "svfix_broken_mkdocs_plugin.plugin:KeyedPlugin"\n'
            'plain = "svfix_broken_mkdocs_plugin.plain:PlainPlugin"',
        )
    )
    report_path = tmp_path / "report.json"
    args = ["check", str(project), "--installer", "uv", "--json", str(report_path)]

    result = run_cli([*args, "--plugin-allow-fail", "svfix-*"])

    assert result.code == 0, result.stdout + result.stderr
    document = json.loads(report_path.read_text())
    assert document["failures"] == []
    keyed = [p for p in document["runs"][0]["plugins"] if p["name"] == "svfix-keyed"]
    assert [p["ok"] for p in keyed] == [False]  # still reported as it is
    [note] = [n for n in document["notes"] if "--plugin-allow-fail" in n]
    assert note.startswith("allowed to fail by --plugin-allow-fail svfix-*: plugin 'svfix-keyed'")
    assert "allowed to fail by --plugin-allow-fail svfix-*" in result.stdout
    # an allowance for every plugin verifies nothing: no pass
    everything = run_cli([*args, "--plugin-allow-fail", "*", "--plugin-allow-fail", "plain"])
    assert everything.code == 0  # 'plain' loads, so the broken one alone is excused
    alone = run_cli(
        [
            "check",
            str(fixture("broken-mkdocs-plugin")),
            "--installer",
            "uv",
            "--plugin-allow-fail",
            "svfix-*",
        ]
    )
    assert alone.code == 1, alone.stdout
    assert "cannot excuse" in alone.stdout
