"""The verdict's count of plugins."""

from __future__ import annotations

from sandboxverify.report._model import PluginRecord, Run, ToolRecord, plugins_registering


def _plugin(name: str, group: str) -> PluginRecord:
    return PluginRecord(name=name, group=group, value=f"pkg:{name}", ok=True)


def test_entry_points_of_one_name_in_two_groups_are_two_plugins() -> None:
    """A theme and a Pygments style of the same name: two applications load two plugins."""
    run = Run(
        python="3.11",
        interpreter="/usr/bin/python3",
        ok=True,
        stages=(),
        plugins=(_plugin("dusk", "pygments.styles"), _plugin("dusk", "sphinx.html_themes")),
        tools=(ToolRecord("dusk", "dusk", None, kind="style"),),
    )
    assert plugins_registering([run]).startswith("2 plugin(s) ")


def test_one_plugin_in_two_runs_is_counted_once() -> None:
    runs = [
        Run(python=python, interpreter="python", ok=True, stages=(), plugins=(_plugin("a", "g"),))
        for python in ("3.10", "3.11")
    ]
    assert plugins_registering(runs).startswith("1 plugin(s) ")
