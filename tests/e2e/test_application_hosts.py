"""The hosts of applications that read their plugins their own way, end to end: one good and one
broken fixture per host, checked with no options, each plugin loaded and used in its real
application (installed in the sandbox from the fixture's dependencies)."""

from __future__ import annotations

import pytest

from sandboxverify import CheckOptions, Report, check
from tests.helpers import fixture

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


def verify(name: str) -> Report:
    return check(CheckOptions(targets=(str(fixture(name)),), installer="uv"))


def registered(report: Report) -> set[str]:
    return {f"{tool.kind}:{tool.name}" for run in report.runs for tool in run.tools}


@pytest.mark.parametrize(
    ("name", "host", "registrations"),
    [
        ("good-pygments-plugin", "pygments", {"lexer:svfix-ini", "style:svfix-dusk"}),
        (
            "good-keyring-backend",
            "keyring",
            {"backend:svfix_good_keyring_backend.backend.MemoryBackend"},
        ),
        # no colon: fsspec splits the value at its last dot, EntryPoint.load() could not
        ("good-fsspec-filesystem", "fsspec", {"filesystem:svfixmem"}),
        # its DBAPI driver is not installed: not needed to load, create and compile
        ("good-sqlalchemy-dialect", "sqlalchemy", {"dialect:svfixdb"}),
        ("good-setuptools-command", "setuptools", {"command:svfix_hello"}),
        ("good-markdown-extension", "markdown", {"extension:svfix-shout"}),
        # the value names a file, read by npe2
        (
            "good-napari-manifest",
            "napari",
            {
                "manifest:svfix-good-napari-manifest",
                "command:svfix-good-napari-manifest.hello",
            },
        ),
        ("good-matplotlib-backend", "matplotlib", {"backend:svfix"}),
        (
            "good-pyinstaller-hooks",
            "pyinstaller",
            {
                "hook_dir:svfix_good_pyinstaller_hooks/__pyinstaller/hooks",
                "hook:svfix_good_pyinstaller_hooks",
            },
        ),
        ("good-opentelemetry-instrumentor", "opentelemetry", {"instrumentor:svfix_json"}),
    ],
)
def test_a_good_plugin_passes_as_its_application_reads_it(
    name: str, host: str, registrations: set[str]
) -> None:
    report = verify(name)

    assert report.ok, report.failures
    [run] = report.runs
    assert {plugin.host for plugin in run.plugins} == {host}
    assert all(plugin.host_reason and "group" in plugin.host_reason for plugin in run.plugins)
    assert registered(report) == registrations


@pytest.mark.parametrize(
    ("name", "host", "stage", "fragments"),
    [
        (
            "broken-pygments-lexer",
            "pygments",
            "application",
            ["uncompilable regex", "unterminated subpattern"],
        ),
        (
            "broken-keyring-backend",
            "keyring",
            "import",
            ["Error initializing plugin", "cannot import name 'properties'"],
        ),
        ("broken-fsspec-filesystem", "fsspec", "validate", ["make_filesystem is not a class"]),
        (
            "broken-sqlalchemy-dialect",
            "sqlalchemy",
            "validate",
            ["Can't load plugin: sqlalchemy.dialects:svfixdb.fast"],
        ),
        (
            "broken-setuptools-hook",
            "setuptools",
            "application",
            ["KeyError: 'SVFIX_BUILD_NUMBER'", "finalize_options()"],
        ),
        (
            "broken-markdown-extension",
            "markdown",
            "validate",
            ["'module' object is not callable"],
        ),
        ("broken-napari-manifest", "napari", "application", ["hello_wrold", "validate_imports"]),
        ("broken-matplotlib-backend", "matplotlib", "validate", ["as a module name"]),
        ("broken-pyinstaller-hooks", "pyinstaller", "setup", ["no such directory", "/hook:"]),
        ("broken-opentelemetry-instrumentor", "opentelemetry", "setup", ["'dumpz'"]),
    ],
)
def test_a_broken_plugin_fails_with_what_its_application_says(
    name: str, host: str, stage: str, fragments: list[str]
) -> None:
    report = verify(name)

    assert [f.code for f in report.failures] == ["plugin_load_failed"]
    [failure] = report.failures
    for fragment in fragments:
        assert fragment in failure.message
    [plugin] = report.runs[0].plugins
    assert plugin.host == host and not plugin.ok
    assert plugin.error is not None and plugin.error.stage == stage
    # the hint speaks of the application's own reading, never of EntryPoint.load()'s
    assert failure.hint and "point the entry point at a callable" not in failure.hint


def test_an_instrumentor_whose_library_is_not_installed_is_skipped_with_a_note() -> None:
    report = verify("opentelemetry-uninstalled-library")

    assert report.ok, report.failures
    [run] = report.runs
    [plugin] = run.plugins
    assert plugin.host == "opentelemetry" and plugin.ok
    assert run.tools == ()
    [note] = [note for note in report.notes if "registers nothing here" in note]
    assert "OpenTelemetry skips it by design" in note
    assert "requests>=2.0" in note
    assert "--with 'svfix-opentelemetry-uninstalled-library[instruments]'" in note
    # its module imports the library: a module only an instrumentor OpenTelemetry leaves out
    # reaches is imported with the extra that declares the library, as its users would
    assert run.imports is not None
    [excused] = run.imports.excused
    assert (excused.module, excused.reason, excused.extra) == (
        "svfix_opentelemetry_uninstalled_library.instrumentor",
        "extra",
        "instruments",
    )
    [extra] = run.imports.extras
    assert extra.installed and extra.imported == (excused.module,)
