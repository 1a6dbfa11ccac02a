"""What the probe and the imports found, judged together."""

from __future__ import annotations

from dataclasses import replace

from sandboxverify.pipeline._inspect import one_failure_per_cause
from sandboxverify.pipeline._inspect import test_modules_note as notes_of  # not a test
from sandboxverify.report import ExcusedModule, Failure, ImportsRecord, PluginError, PluginRecord


def test_plugins_of_one_name_in_several_groups_keep_their_own_records() -> None:
    """Mako names entry points ``mako`` in four groups: four plugins, four records."""
    lexer = PluginRecord("mako", "pygments.lexers", "mako.ext.pygmentplugin:MakoLexer", ok=True)
    error = PluginError("ModuleNotFoundError", "No module named 'babel'", "", "import")
    extractor = PluginRecord(
        "mako", "babel.extractors", "mako.ext.babelplugin:extract", False, error
    )
    imported = Failure(
        "import_failed",
        "module 'mako.ext.babelplugin' failed to import: No module named 'babel'",
        module="mako.ext.babelplugin",
    )
    loaded = Failure(
        "plugin_load_failed", "plugin 'mako' failed: No module named 'babel'", plugin="mako"
    )

    failures, records = one_failure_per_cause([loaded, imported], (lexer, extractor))

    assert failures == [replace(imported, plugin="mako")]
    assert [record.group for record in records] == ["pygments.lexers", "babel.extractors"]
    assert records[0] == lexer
    assert records[1].error is not None
    assert records[1].error.message.endswith("reported as import_failed)")


def test_test_modules_and_test_support_are_each_a_warning_of_their_own() -> None:
    """Test modules do not belong in the wheel; test support for the application's test suites
    may (a dialect's test requirements): each warning says what it is."""
    support = "test support for its application's test suite: imports pytest, which only ..."
    record = ImportsRecord(
        excused=(
            ExcusedModule("pkg.tests.test_a", "test", "a test module shipped in the wheel; ..."),
            ExcusedModule("pkg.requirements", "test", support),
            ExcusedModule("pkg.fixtures", "test", support),
            ExcusedModule("pkg.win", "platform", "needs winreg (stdlib)"),
        )
    )

    tests, supports = notes_of(record)

    assert "1 test module(s)" in tests and "pkg.tests.test_a;" in tests
    assert "do not belong in the wheel" in tests
    assert supports.startswith(
        "the wheel ships 2 test-support module(s) that import test machinery only test runs "
        "have: pkg.requirements, pkg.fixtures;"
    )
    assert notes_of(ImportsRecord()) == []
