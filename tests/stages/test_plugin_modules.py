"""Which modules stage ``imports`` leaves to the plugins' loads."""

from __future__ import annotations

from typing import Any

from sandboxverify.report import PluginError, PluginRecord
from sandboxverify.stages._plugin_modules import loaded_with_extra, without_plugin_modules

NO_SHELL = {"type": "AttributeError", "message": "'NoneType' object has no attribute 'user_ns'"}


def _result(*modules: str) -> dict[str, Any]:
    return {
        "results": [{"module": module, "ok": False, "error": NO_SHELL} for module in modules],
        "skipped": [],
    }


def test_a_loaded_plugins_module_that_fails_alone_is_left_to_its_load() -> None:
    loaded = PluginRecord("ext", "ipython:extensions", "ext", ok=True)
    failed = PluginRecord(
        "bad",
        "ipython:extensions",
        "bad",
        ok=False,
        error=PluginError("ImportError", "no", "", "import"),
    )

    judged = without_plugin_modules(_result("ext", "bad", "other"), [loaded, failed])

    assert [item["module"] for item in judged["results"]] == ["other"]
    assert judged["skipped"] == [
        {
            "module": "ext",
            "reason": "imported by its application, which loaded plugin 'ext' from it; on its "
            "own it fails (AttributeError: 'NoneType' object has no attribute 'user_ns')",
        },
        {"module": "bad", "reason": "plugin 'bad' failed to load from it"},
    ]


def test_a_plugin_its_application_leaves_out_imported_nothing_there() -> None:
    """An OpenTelemetry instrumentor whose library is missing is skipped before its import:
    its module is judged alone (with the extra that declares the library)."""
    skipped = PluginRecord("inst", "opentelemetry_instrumentor", "pkg.inst:Inst", ok=True)

    judged = without_plugin_modules(
        _result("pkg.inst"), [skipped], left_out={"opentelemetry_instrumentor:inst"}
    )

    assert [item["module"] for item in judged["results"]] == ["pkg.inst"]
    assert judged["skipped"] == []


def test_what_a_plugin_loaded_with_an_extra_reaches_says_which_extra() -> None:
    def plugin(name: str, extra: str | None, ok: bool) -> PluginRecord:
        return PluginRecord(name, "pkg.stores", f"pkg.{name}:S", ok=ok, extra=extra)

    plugins = [
        plugin("chart", "chart", True),
        plugin("broken", "chart", False),
        plugin("x", None, False),
    ]
    failed = [
        {"module": "pkg.draw", "reached_by": "pkg.stores:chart"},
        {"module": "pkg.more", "reached_by": "pkg.stores:broken"},  # failed there: still its users'
        {"module": "pkg.x", "reached_by": "pkg.stores:x"},
        {"module": "pkg.alone"},
    ]

    marked = loaded_with_extra(failed, plugins)

    assert [item.get("loaded_with") for item in marked] == ["chart", "chart", None, None]
    assert failed[0] == {"module": "pkg.draw", "reached_by": "pkg.stores:chart"}  # a copy
