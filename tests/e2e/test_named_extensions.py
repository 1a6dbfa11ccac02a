"""Extensions users name in an application's configuration, with no entry point: each is loaded
in that application as its users load it, not verified as a library only."""

from __future__ import annotations

import pytest

from sandboxverify import CheckOptions, Report, check
from tests.helpers import fixture

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


def verify(name: str, **options: object) -> Report:
    return check(CheckOptions(targets=(str(fixture(name)),), installer="uv", **options))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "host", "modules"),
    [
        # each connects to an event only one of Sphinx's own extensions has: the first imports
        # sphinx.ext.autodoc, the second never imports sphinx.ext.todo; the build lists each
        # before the extension, as its users do
        (
            "sphinx-extension-by-name",
            "sphinx",
            ["svfix_sphinx_by_name", "svfix_sphinx_by_name.todo_count"],
        ),
        ("markdown-extension-by-name", "markdown", ["svfix_markdown_by_name.shout"]),
    ],
)
def test_an_extension_named_in_a_configuration_is_loaded_in_its_application(
    name: str, host: str, modules: list[str]
) -> None:
    report = verify(name)

    assert report.ok, report.failures
    [run] = report.runs
    assert [(p.name, p.group, p.value, p.host) for p in run.plugins] == [
        (module, f"{host}:extensions", module, host) for module in modules
    ]
    for plugin in run.plugins:
        assert plugin.host_reason is not None
        assert f"declares no entry point {host} loads" in plugin.host_reason
    assert [(tool.kind, tool.name) for tool in run.tools] == [("extension", m) for m in modules]
    assert not any("verified as a library" in note for note in report.notes)


def test_an_extension_whose_setup_breaks_the_build_fails_though_it_imports() -> None:
    """Its setup(app) calls add_stylesheet(), which Sphinx 4 removed."""
    report = verify("sphinx-extension-broken-setup")

    assert [failure.code for failure in report.failures] == ["plugin_load_failed"]
    [failure] = report.failures
    assert failure.plugin == "svfix_sphinx_broken_setup"
    assert "extensions = ['svfix_sphinx_broken_setup']" in failure.message
    [plugin] = report.runs[0].plugins
    assert plugin.error is not None
    assert "add_stylesheet" in plugin.error.message + plugin.error.traceback


def test_an_extension_that_needs_its_users_configuration_is_said_not_failed() -> None:
    report = verify("sphinx-extension-needs-config")

    assert report.ok, report.failures
    assert any(
        "needs its users' configuration (svfix_source_files)" in note
        and "You must configure the svfix_source_files setting" in note
        for note in report.notes
    ), report.notes


def test_expecting_no_plugins_verifies_it_as_a_library() -> None:
    report = verify("sphinx-extension-broken-setup", expect_plugins=0)

    assert report.ok, report.failures
    assert report.runs[0].plugins == ()
    assert any("verified as a library" in note for note in report.notes)


@pytest.mark.parametrize(
    ("name", "host", "group", "registrations"),
    [
        (
            "pylint-plugin-by-name",
            "pylint",
            "pylint:plugins",
            [("plugin", "svfix_pylint_plugin_by_name"), ("checker", "svfix-no-print")],
        ),
        (
            "ipython-extension-by-name",
            "ipython",
            "ipython:extensions",
            [
                ("extension", "svfix_ipython_extension_by_name"),
                ("callback", "pre_run_cell: _start"),
                ("callback", "post_run_cell: _report"),
            ],
        ),
        (
            "mypy-plugin-by-name",
            "mypy",
            "mypy:plugins",
            [
                ("plugin", "svfix_mypy_plugin_by_name"),
                ("plugin_class", "svfix_mypy_plugin_by_name.MakeIdPlugin"),
            ],
        ),
    ],
)
def test_a_plugin_its_users_name_runs_in_pylint_ipython_or_mypy(
    name: str, host: str, group: str, registrations: list[tuple[str, str]]
) -> None:
    report = verify(name)

    assert report.ok, report.failures
    [plugin] = report.runs[0].plugins
    module = name.replace("-", "_")
    assert (plugin.name, plugin.group, plugin.host) == (f"svfix_{module}", group, host)
    assert [(tool.kind, tool.name) for tool in report.runs[0].tools] == registrations


@pytest.mark.parametrize(
    ("name", "stage", "words"),
    [
        # pylint reports the crash as astroid-error and goes on: its users see a fatal error
        ("pylint-plugin-crashing-checker", "exercise", "no attribute 'return_annotation'"),
        # IPython shows the callback's KeyError after every cell and goes on
        ("ipython-extension-broken-callback", "exercise", "KeyError: 'started'"),
    ],
)
def test_a_plugin_that_breaks_its_application_while_used_fails(
    name: str, stage: str, words: str
) -> None:
    report = verify(name)

    assert [failure.code for failure in report.failures] == ["plugin_load_failed"]
    [plugin] = report.runs[0].plugins
    assert plugin.error is not None
    assert plugin.error.stage == stage
    assert words in plugin.error.message + plugin.error.traceback


def test_host_pylint_names_the_modules_pylint_loads() -> None:
    report = verify("pylint-plugin-by-name", host="pylint")

    assert report.ok, report.failures
    assert [plugin.name for plugin in report.runs[0].plugins] == ["svfix_pylint_plugin_by_name"]


def test_a_module_that_imports_only_in_its_running_application_is_judged_by_that_load() -> None:
    """The extension's package reads get_ipython().user_ns as it imports: in IPython it loads,
    alone it raises; the import stage says so instead of failing it."""
    report = verify("ipython-extension-by-name")

    assert report.ok, report.failures
    imports = report.runs[0].imports
    assert imports is not None
    [skipped] = [s for s in imports.skipped if s.module == "svfix_ipython_extension_by_name"]
    assert "loaded plugin 'svfix_ipython_extension_by_name' from it" in skipped.reason
    assert "'NoneType' object has no attribute 'user_ns'" in skipped.reason


def test_an_extension_of_an_application_declared_nowhere_is_loaded_in_it() -> None:
    """Only IPython calls load_ipython_extension: IPython is installed next to the library,
    as its users have it, and the extension loaded there."""
    report = verify("ipython-extension-undeclared")

    assert report.ok, report.failures
    [plugin] = report.runs[0].plugins
    assert (plugin.group, plugin.host) == ("ipython:extensions", "ipython")
    assert plugin.host_reason is not None
    assert "defines a function only ipython calls" in plugin.host_reason
    assert ("magic", "%words") in [(tool.kind, tool.name) for tool in report.runs[0].tools]
    assert any(note.startswith("installed ipython ") for note in report.notes), report.notes
