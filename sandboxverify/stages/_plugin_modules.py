"""The modules a plugin's load judges, which stage ``imports`` does not judge again: a failed
plugin's own module (its failure is the report), and the module of a plugin its application
loaded (it imported there, as its users import it).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sandboxverify.report import PluginRecord
from sandboxverify.runtime import EntryPointRef


def without_plugin_modules(
    result: dict[str, Any], plugins: Sequence[PluginRecord], left_out: Collection[str] = ()
) -> dict[str, Any]:
    """A plugin's own module, where it failed in this run, moved to ``skipped`` as if it had
    been excluded: a failed plugin's, whose failure is the report (its submodules need
    nothing: the runtime skips the submodules of a package that failed); and the module of a
    plugin its application loaded, which imported there: one that cannot import alone (an
    IPython extension calling ``get_ipython()`` as it imports) works where its users import
    it, and the reason says how it failed alone. A plugin its application leaves out here
    (``left_out``: ``group:name``) was not imported there: its module is judged alone."""
    excluded = failed_plugin_modules(plugins)
    loaded = {
        EntryPointRef(plugin.name, plugin.group, plugin.value).module: plugin.name
        for plugin in plugins
        if plugin.ok and f"{plugin.group}:{plugin.name}" not in left_out
    }
    kept, skipped = [], list(result.get("skipped") or ())
    for item in result.get("results") or ():
        module = str(item["module"])
        if item.get("ok") is True or (module not in excluded and module not in loaded):
            kept.append(item)
            continue
        reason = excluded.get(module)
        if reason is None:
            error = item.get("error") or {}
            reason = (
                f"imported by its application, which loaded plugin {loaded[module]!r} from it; "
                f"on its own it fails ({error.get('type')}: {error.get('message')})"
            )
        skipped.append({"module": module, "reason": reason})
    return {**result, "results": kept, "skipped": skipped}


def failed_plugin_modules(plugins: Sequence[PluginRecord]) -> dict[str, str]:
    """Modules of plugins that failed (or hung, or crashed) at import: importing them again
    would only repeat that failure, or take the whole import run down with it."""
    modules: dict[str, str] = {}
    for plugin in plugins:
        if plugin.ok or plugin.error is None or plugin.error.stage not in ("import", "probe"):
            continue
        module = EntryPointRef(plugin.name, plugin.group, plugin.value).module
        modules.setdefault(module, f"plugin {plugin.name!r} failed to load from it")
    return modules


def left_out_by_application(
    failed: Sequence[Mapping[str, Any]],
    left_out: Mapping[str, str],
    plugin_modules: Collection[str],
) -> list[dict[str, Any]]:
    """``failed`` with each module that only plugins their application leaves out here reach
    (``left_out``: entry point ``group:name`` -> the probe's why) no longer ``reached_by`` one,
    and ``left_out`` saying why. ``plugin_modules``: the modules the other plugins name."""
    judged: list[dict[str, Any]] = []
    for item in failed:
        entry, module = item.get("reached_by"), str(item["module"])
        if isinstance(entry, str) and entry in left_out and module not in plugin_modules:
            why = f"entry point {entry}, which reaches it, is left out here by its application"
            rest = {key: value for key, value in item.items() if key != "reached_by"}
            judged.append({**rest, "left_out": f"{why}: {left_out[entry]}"})
        else:
            judged.append(dict(item))
    return judged


def loaded_with_extra(
    failed: Sequence[Mapping[str, Any]], plugins: Sequence[PluginRecord]
) -> list[dict[str, Any]]:
    """``failed``, each module reached by a plugin that was loaded with a users' extra (named
    for it, or bringing its application) saying which (``loaded_with``): that plugin's users
    have the extra, so what it imports is judged with it too, whatever the plugin did there
    (keystoneauth1's ``extras._saml2``, which its SAML plugins import, with the extra
    ``saml2``)."""
    extras = {f"{p.group}:{p.name}": p.extra for p in plugins if p.extra}
    return [
        {**item, "loaded_with": extras[entry]}
        if isinstance(entry := item.get("reached_by"), str) and entry in extras
        else dict(item)
        for item in failed
    ]


def judged_with(
    item: Mapping[str, Any], extra: str | None, offered: Collection[str]
) -> tuple[str, str] | None:
    """The extra a failed module an entry point reached (the runtime's ``item``) is judged
    with, and what reaches it, in words; ``None``: it is judged as the plain install has it.
    A console script of the extra's users (httpx's, black's ``blackd``) is verified with the
    extra that brings what the module lacks (``extra``), as the scripts stage runs it; a
    plugin its users load with a users' extra (``offered``), loaded so here
    (:func:`loaded_with_extra`), with that one."""
    reached, loaded_with = item.get("reached_by"), item.get("loaded_with")
    if isinstance(reached, str) and reached.startswith("console_scripts:") and extra:
        return extra, f"the console script {reached.partition(':')[2]!r} imports it"
    if isinstance(loaded_with, str) and loaded_with in offered:
        return loaded_with, f"the plugin {reached} imports it"
    return None
