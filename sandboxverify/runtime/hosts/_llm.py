"""The ``llm`` host: one plugin of Simon Willison's ``llm`` and everything it registers.

An llm plugin is a module in entry-point group ``llm`` whose functions, marked with
``@llm.hookimpl``, implement llm's pluggy hooks. This host registers the module with llm's plugin
manager under the entry point's name (as llm itself does), fails loudly where llm stays silent (a
misspelled hook name, a hook function without ``@llm.hookimpl``), then calls each registration
hook this plugin implements (and no other plugin's): ``register_tools``, ``register_models``,
``register_embedding_models``, ``register_template_loaders``, ``register_fragment_loaders``,
``register_commands`` and any a newer llm adds, each with what llm passes it. Every registration
has a kind (``tool``, ``model``, ``embedding_model``, ``template_loader``, ``fragment_loader``,
``command``...): see ``_llm_hooks``. Tools also go into the registry, to be called the way llm
calls them (``_llm_tools``); the other kinds are reported.

``llm`` itself is imported at call time only: it is a dependency of the plugin under test, never
of the runtime. Before the import, ``LLM_LOAD_PLUGINS`` is set to ``""`` (unless already set), so
llm registers only its default plugins when asked to load plugins, and never imports every
installed plugin (where one plugin's exception breaks them all); llm 0.10 to 0.17 loads plugins
while ``llm`` is imported, later versions on first use. ``LLM_USER_PATH`` (llm's keys, logs and
settings) points into the temporary directory unless already set, so nothing touches the home.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
import sys
import tempfile
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import HostContext, LoadedPlugin, PluginLoadError, resolve
from sandboxverify.runtime.hosts._llm_hooks import HOOK_ORDER, collector_for

#: The first llm release with tools (the ``register_tools`` hook, ``llm.Tool``, ``llm.Toolbox``).
TOOLS_SINCE = "0.26"


def load_llm(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Register the plugin with llm and collect what each of its registration hooks registers.

    Raises :class:`PluginLoadError`: ``import`` (llm or the plugin module cannot be imported),
    ``validate`` (a hook llm does not have, a hook signature pluggy rejects, a hook function not
    marked with ``@llm.hookimpl``), ``setup`` (a hook raised, or registered something llm cannot
    use; ``where`` names the hook). A plugin whose hooks register nothing loads with no
    registrations; see :func:`describe_hooks` for the hooks it implements.
    """
    del context  # an llm plugin needs no limits or answers while it registers
    llm = import_llm()
    plugin = resolve(ref)
    pm = importlib.import_module("llm.plugins").pm
    # llm's command line calls every registered plugin's register_commands when it is first
    # imported: import it before this plugin is registered, to call its hook once, on a copy
    cli = _llm_cli() if _implements(pm, plugin, "register_commands") else None
    registered = _register(pm, ref, plugin)
    tools_before = set(registry.tools)
    try:
        _validate(pm, plugin)
        registrations = _call_hooks(pm, plugin, llm=llm, ref=ref, registry=registry, cli=cli)
    except PluginLoadError:
        for name in set(registry.tools) - tools_before:
            del registry.tools[name]
        if registered:
            pm.unregister(plugin)
        raise
    return LoadedPlugin(ref=ref, tools=registrations, handlers={})


def describe_hooks(plugin: Any) -> list[str]:
    """The llm hooks a loaded plugin implements, e.g. ``["register_commands"]``.

    ``plugin`` is the plugin object or the entry-point name it was loaded under; an unknown plugin
    (or llm not imported) implements none.
    """
    plugins_module = sys.modules.get("llm.plugins")
    if plugins_module is None:
        return []
    pm = plugins_module.pm
    if isinstance(plugin, str):
        plugin = pm.get_plugin(plugin)
    if plugin is None:
        return []
    return sorted({caller.name for caller in pm.get_hookcallers(plugin) or []})


def import_llm() -> Any:
    """Import ``llm`` with plugin auto-loading off and its user directory in the temp dir."""
    os.environ.setdefault("LLM_USER_PATH", os.path.join(tempfile.gettempdir(), "llm-user"))
    os.environ.setdefault("LLM_LOAD_PLUGINS", "")
    try:
        return importlib.import_module("llm")
    except ModuleNotFoundError as exc:
        if exc.name != "llm":
            raise PluginLoadError("import", exc) from exc
        missing = ModuleNotFoundError(
            "No module named 'llm': an llm plugin's distribution must depend on llm "
            f'(add "llm>={TOOLS_SINCE}" to [project] dependencies); it is not installed here',
            name="llm",
        )
        raise PluginLoadError("import", missing) from exc
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("import", exc) from exc


# -- registering and validating --------------------------------------------------------------


def _register(pm: Any, ref: EntryPointRef, plugin: Any) -> bool:
    """Register like llm does (under the entry point's name); False if it already was."""
    current = pm.get_plugin(ref.name)
    if current is plugin:
        return False
    if current is not None:
        raise PluginLoadError(
            "validate",
            ValueError(
                f"another llm plugin is already registered as {ref.name!r} ({current!r}); "
                "llm loads only the first plugin of a name"
            ),
        )
    if pm.is_registered(plugin):
        raise PluginLoadError(
            "validate",
            ValueError(
                f"{ref.value!r} is already registered as llm plugin {pm.get_name(plugin)!r}; "
                "llm refuses a second entry point for the same object"
            ),
        )
    try:
        pm.register(plugin, name=ref.name)
    except Exception as exc:  # pluggy's PluginValidationError: a hook signature it rejects
        if pm.get_plugin(ref.name) is plugin:  # pluggy < 1.6 registers before it validates
            pm.unregister(plugin)
        raise PluginLoadError("validate", exc) from exc
    return True


def _validate(pm: Any, plugin: Any) -> None:
    """What llm silently ignores: hookimpls of hooks it does not have, unmarked hook functions."""
    specs = _hook_names(pm)
    implemented: set[str] = set()
    for caller in pm.get_hookcallers(plugin) or []:
        if caller.has_spec():
            implemented.add(caller.name)
            continue
        for impl in caller.get_hookimpls():
            if impl.plugin is plugin and not getattr(impl, "optionalhook", False):
                raise PluginLoadError("validate", _unknown_hook(plugin, caller.name, impl, specs))
    for name in specs:
        if name in implemented:
            continue
        attr = inspect.getattr_static(plugin, name, None)
        if isinstance(attr, (staticmethod, classmethod)):
            attr = attr.__func__
        if inspect.isroutine(attr) and pm.parse_hookimpl_opts(plugin, name) is None:
            raise PluginLoadError(
                "validate",
                _validation_error(
                    plugin,
                    f"{name}() is not marked with @llm.hookimpl, so llm never calls it: "
                    f"decorate it with @llm.hookimpl",
                ),
            )


def _hook_names(pm: Any) -> list[str]:
    return sorted(
        name
        for name, caller in vars(pm.hook).items()
        if not name.startswith("_") and caller.has_spec()
    )


def _unknown_hook(plugin: Any, hook: str, impl: Any, specs: list[str]) -> Exception:
    function = getattr(impl.function, "__name__", hook)
    if hook == "register_tools":
        return _validation_error(
            plugin,
            f"llm {_llm_version()} has no register_tools hook: tools need llm>={TOOLS_SINCE}; "
            f'require "llm>={TOOLS_SINCE}" in the distribution\'s dependencies',
        )
    close = difflib.get_close_matches(hook, specs, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    what = f"{function}()" if function == hook else f"{function}() (specname={hook!r})"
    return _validation_error(
        plugin,
        f"{what} is marked with @llm.hookimpl, but llm has no hook {hook!r}{hint}, "
        f"so llm never calls it; llm's hooks are: {', '.join(specs)}",
    )


def _validation_error(plugin: Any, message: str) -> Exception:
    error: Exception = importlib.import_module("pluggy").PluginValidationError(plugin, message)
    return error


def _llm_version() -> str:
    from importlib import metadata  # noqa: PLC0415 - only this error message needs it

    try:
        return metadata.version("llm")
    except metadata.PackageNotFoundError:
        return "(unknown version)"


# -- calling the registration hooks ----------------------------------------------------------


def _call_hooks(pm: Any, plugin: Any, **given: Any) -> list[dict[str, Any]]:
    """Call this plugin's hookimpls only, hook by hook, the way llm calls each hook."""
    registrations: list[dict[str, Any]] = []
    for hook in _hook_order(pm, plugin):
        caller = getattr(pm.hook, hook)
        impls = [
            impl
            for impl in caller.get_hookimpls()
            if impl.plugin is plugin
            and not getattr(impl, "hookwrapper", False)
            and not getattr(impl, "wrapper", False)
        ]
        if not impls:
            continue
        argnames = tuple(caller.spec.argnames) if caller.spec is not None else ()
        collector = collector_for(hook, argnames, **given)
        for impl in impls if collector.callable else ():
            arguments = collector.arguments()
            unknown = [name for name in impl.argnames if name not in arguments]
            if unknown:  # a newer llm passes more than this host knows to build
                collector.add(hook, "hook", f"takes {', '.join(unknown)}; not called")
                continue
            try:
                impl.function(**{name: arguments[name] for name in impl.argnames})
            except (Exception, SystemExit) as exc:
                raise PluginLoadError("setup", exc, where=f"its {hook} hook") from exc
        registrations += collector.finish()
    return registrations


def _hook_order(pm: Any, plugin: Any) -> list[str]:
    implemented = {caller.name for caller in pm.get_hookcallers(plugin) or [] if caller.has_spec()}
    known = [hook for hook in HOOK_ORDER if hook in implemented]
    return known + sorted(implemented - set(known))


def _implements(pm: Any, plugin: Any, hook: str) -> bool:
    """Does ``plugin`` (not yet registered) implement ``hook``, under its name or another?"""
    for name in dir(plugin):
        try:
            opts = pm.parse_hookimpl_opts(plugin, name)
        except Exception:
            continue
        if opts is not None and (opts.get("specname") or name) == hook:
            return True
    return False


def _llm_cli() -> Any:
    """llm's own ``cli`` group, or None if its command line does not import."""
    try:
        return importlib.import_module("llm.cli").cli
    except (Exception, SystemExit):
        return None
