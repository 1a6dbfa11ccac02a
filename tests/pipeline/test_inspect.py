"""What the probe and the imports found, judged together."""

from __future__ import annotations

from dataclasses import replace

from sandboxverify.pipeline._inspect import one_failure_per_cause
from sandboxverify.report import Failure, PluginError, PluginRecord


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
