"""The ``pluggy`` host: one plugin of an application built on pluggy, judged by its hookspecs,
then run in the application.

Datasette, sqlite-utils, tox, hatch and devpi load their plugins (entry-point groups in
the host registry's ``pluggy`` host) into a ``pluggy.PluginManager`` that holds the
application's hook specifications. This host first does the same with a fresh manager: it
imports the application's hookspecs module (the group's, with those other distributions of the
application add when installed, or ``HostContext.hookspecs`` for an application the table does
not know), takes the pluggy project name from the specs themselves, registers the plugin under
its entry point's name and asks what the application would only find out when it calls a hook,
or never:

- a hook implementation taking an argument the hookspec lacks (pluggy refuses the plugin);
- a hook implementation of a hook the application does not have, a misspelled name
  (``check_pending``; ``optionalhook=True`` is allowed, as pluggy allows it);
- a function named like a hook but not marked with the application's ``HookimplMarker``, which
  pluggy silently skips (unmarked, or marked for another project).

Then, for the applications it knows how to run (``EXERCISES``), the application runs with the
plugin, offline and briefly, and calls its hooks: datasette serves pages, tox lists and runs an
environment, sqlite-utils runs its command line, hatchling builds a project configured to use
the plugin (one module each). A hook that raises fails the plugin at stage ``exercise``, naming
the hook and the step; what a hook needs and does not find here (a service, an extra, an
interpreter capability) fails it as :class:`MissingPrerequisite`, which says so. devpi-server
takes half a minute to start and is not run.

The registrations are the hooks the plugin implements, kind ``hook``, each saying whether the run
exercised it (``exercise``: ``passed`` or ``not_exercised``, with ``exercise_note`` saying why
not: a hook that needs a POST, a publish or an upload stays unexercised, and is never counted as
passed).

``pluggy`` and the application are imported at call time only: they are dependencies of the
plugin under test, never of the runtime.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import inspect
import os
import shutil
import tempfile
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    HostContext,
    LoadedPlugin,
    PluginLoadError,
    import_application,
    resolve,
)
from sandboxverify.runtime.hosts._exercise import Deadline
from sandboxverify.runtime.hosts._registry import KNOWN_GROUPS

#: the applications this host runs with the plugin, by group: the module that runs each
EXERCISES = {
    "datasette": "_pluggy_datasette",
    "sqlite_utils": "_pluggy_sqlite_utils",
    "tox": "_pluggy_tox",
    "hatch": "_pluggy_hatch",
}
#: why the others are not run
NOT_RUN = {
    "devpi_server": "devpi-server takes 20-30 s to start, so it is not run: its hookspecs "
    "checked the hook, nothing called it",
    "devpi_client": "devpi runs against a devpi-server, so it is not run: its hookspecs "
    "checked the hook, nothing called it",
}


def load_pluggy(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Register the plugin with a plugin manager holding the application's hookspecs, then run
    the application with it.

    Raises :class:`PluginLoadError`: ``application`` (no hookspecs known for the group, the
    application or pluggy not installed: :class:`ApplicationMissing`, hookspecs that do not
    load), ``import`` (the plugin does not import), ``validate`` (pluggy refuses a hook
    implementation, a hook the application does not have, a hook function not marked as one),
    ``exercise`` (the application ran with the plugin and one of its hooks raised, or the run
    failed with it; a step that outlasts the time left is a ``timeout``).
    A plugin implementing no hook loads with no registrations.
    """
    del registry  # hooks are reported, not called: nothing callable to register
    deadline = Deadline(context.timeout)
    target, application = _hookspecs_of(ref, context)
    specs = _import_specs(target, application, ref.group)
    pluggy = import_application("pluggy", "pluggy", ref.group)
    project = project_name(specs, pluggy)
    if project is None:
        raise PluginLoadError(
            "application",
            ValueError(f"{target!r} holds no pluggy hookspecs (no function marked as a hookspec)"),
        )
    pm = pluggy.PluginManager(project)
    try:
        pm.add_hookspecs(specs)
        for more in _more_hookspecs(ref, target):
            pm.add_hookspecs(more)
    except Exception as exc:
        raise PluginLoadError("application", exc) from exc
    _load_as_the_application_does(ref, target)
    plugin = resolve(ref)
    try:
        pm.register(plugin, name=ref.name)
    except Exception as exc:  # PluginValidationError: a hookimpl the hookspec does not allow
        raise PluginLoadError("validate", exc) from exc
    specnames = spec_names(pm)
    _check_unknown_hooks(pm, plugin, project, specnames)
    _check_unmarked(pm, plugin, project, specnames)
    try:
        pm.check_pending()
    except Exception as exc:
        raise PluginLoadError("validate", exc) from exc
    tools = hook_registrations(pm, plugin)
    if tools:
        tools = _exercised(ref, plugin, tools, (application, target), deadline)
    return LoadedPlugin(ref=ref, tools=tools, handlers={})


def _load_as_the_application_does(ref: EntryPointRef, hookspecs: str) -> None:
    """Import the application's plugin manager before the plugin, as a run of the application
    does: it loads the plugins from their entry points as it is imported, and a plugin that
    imports it in turn (``from datasette.plugins import pm``) must not be half imported when it
    is registered there."""
    module = _exercise_module(ref, hookspecs)
    first = getattr(module, "LOADS_PLUGINS", None) if module is not None else None
    if first:
        # what fails here fails again below, and is reported there
        with contextlib.suppress(Exception):
            importlib.import_module(first)


def _exercise_module(ref: EntryPointRef, hookspecs: str) -> Any:
    """The module that runs the group's application, if this host knows how to (and the
    plugin is checked against the application's own hookspecs)."""
    known = KNOWN_GROUPS.get(ref.group)
    module = EXERCISES.get(ref.group)
    if module is None or known is None or known[1].hookspecs != hookspecs:
        return None
    return importlib.import_module(f"{__package__}.{module}")


def _exercised(
    ref: EntryPointRef,
    plugin: Any,
    tools: list[dict[str, Any]],
    specs: tuple[str, str],
    deadline: Deadline,
) -> list[dict[str, Any]]:
    """Run the application with the plugin; the registrations, each saying whether it ran.
    ``specs``: the application and the hookspecs the plugin was checked against."""
    from sandboxverify.runtime.hosts._pluggy_watch import AppRun, Stopped  # noqa: PLC0415

    application, hookspecs = specs
    module = _exercise_module(ref, hookspecs)
    if module is None:
        note = NOT_RUN.get(ref.group) or (
            f"sandboxverify does not know how to run {application}: its hookspecs checked the "
            "hook, nothing called it"
        )
        return [{**tool, "exercise": "not_exercised", "exercise_note": note} for tool in tools]
    run = AppRun(ref, plugin, application, deadline, [tool["name"] for tool in tools])
    exercise = module.exercise
    scratch = tempfile.mkdtemp(prefix="sandboxverify-")
    previous = os.getcwd()
    try:
        os.chdir(scratch)  # what the application writes, it writes there
        exercise(run, scratch)
    except Stopped:
        pass
    finally:
        run.close()
        os.chdir(previous)
        shutil.rmtree(scratch, ignore_errors=True)
    return run.registrations(tools)


def project_name(specs: Any, pluggy: Any) -> str | None:
    """The pluggy project ``specs`` (a module or class of hookspecs) belongs to.

    ``HookspecMarker(project)`` marks each spec function with a ``<project>_spec`` attribute,
    which is what ``add_hookspecs`` looks for; failing that, a ``HookspecMarker`` held by the
    module names it.
    """
    counts: dict[str, int] = {}
    for name in dir(specs):
        if name.startswith("__"):
            continue
        attribute = inspect.getattr_static(specs, name, None)
        if isinstance(attribute, (staticmethod, classmethod)):
            attribute = attribute.__func__
        if not inspect.isroutine(attribute):
            continue
        for key, value in vars(attribute).items() if hasattr(attribute, "__dict__") else ():
            if key.endswith("_spec") and len(key) > len("_spec") and isinstance(value, dict):
                project = key[: -len("_spec")]
                counts[project] = counts.get(project, 0) + 1
    if counts:
        return max(sorted(counts), key=lambda project: counts[project])
    markers = {
        value.project_name
        for value in vars(specs).values()
        if isinstance(value, pluggy.HookspecMarker)
    }
    return markers.pop() if len(markers) == 1 else None


def spec_names(pm: Any) -> list[str]:
    """The hooks ``pm`` has specifications for."""
    return sorted(
        name
        for name, caller in vars(pm.hook).items()
        if not name.startswith("_") and caller.has_spec()
    )


def hook_registrations(pm: Any, plugin: Any) -> list[dict[str, Any]]:
    """One ``hook`` registration per hook ``plugin`` implements, by name (an optional hook
    without a spec too: it is some other plugin's, or a newer application's)."""
    found: dict[str, dict[str, Any]] = {}
    for caller in pm.get_hookcallers(plugin) or []:
        for impl in caller.get_hookimpls():
            if impl.plugin is plugin and caller.name not in found:
                found[caller.name] = hook_registration(caller.name, impl.function)
    return [found[name] for name in sorted(found)]


def hook_registration(name: str, function: Any) -> dict[str, Any]:
    return {
        "name": name,
        "kind": "hook",
        "description": summary(function),
        "parameters": None,
    }


def summary(obj: Any) -> str | None:
    """The first paragraph of ``obj``'s docstring, on one line."""
    try:
        doc = inspect.getdoc(obj)
    except Exception:  # an object whose __doc__ is a property that raises
        return None
    if not doc:
        return None
    return " ".join(doc.strip().split("\n\n", 1)[0].split())


# -- the application's hookspecs --------------------------------------------------------------


def _hookspecs_of(ref: EntryPointRef, context: HostContext) -> tuple[str, str]:
    """The hookspecs to load (``module`` or ``module:attribute``) and the application's name."""
    host, known = KNOWN_GROUPS.get(ref.group, (None, None))
    if context.hookspecs:
        target = context.hookspecs.strip()
        if known is not None and known.application and known.hookspecs == target:
            return target, known.application
        return target, target.split(":", 1)[0].split(".", 1)[0]
    if host is not None and known is not None and host.name == "pluggy" and known.hookspecs:
        return known.hookspecs, known.application or known.hookspecs.split(".", 1)[0]
    raise PluginLoadError(
        "application",
        ValueError(
            f"no pluggy application is known to load {ref.group!r} plugins: name the module "
            f"holding its hookspecs (--hookspecs {ref.group}=MODULE)"
        ),
    )


def _import_specs(target: str, application: str, group: str) -> Any:
    module, _, attribute = target.partition(":")
    specs = import_application(module.strip(), application, group)
    walked = module.strip()
    for part in attribute.strip().split(".") if attribute.strip() else []:
        try:
            specs = getattr(specs, part)
        except AttributeError as exc:
            error = AttributeError(f"hookspecs {walked!r} have no attribute {part!r}")
            raise PluginLoadError("application", error) from exc
        walked = f"{walked}.{part}"
    return specs


def _more_hookspecs(ref: EntryPointRef, hookspecs: str) -> list[Any]:
    """The hookspecs other distributions of the group's application add, those installed
    (hatch's command line adds its own to hatchling's)."""
    known = KNOWN_GROUPS.get(ref.group)
    if known is None or known[1].hookspecs != hookspecs:
        return []
    found: list[Any] = []
    for module in known[1].more_hookspecs:
        try:
            found.append(importlib.import_module(module))
        except ModuleNotFoundError as exc:
            if exc.name is None or module.split(".")[0] != exc.name.split(".")[0]:
                raise PluginLoadError("application", exc) from exc
        except Exception as exc:
            raise PluginLoadError("application", exc) from exc
    return found


# -- what pluggy lets through ------------------------------------------------------------------


def _check_unknown_hooks(pm: Any, plugin: Any, project: str, specnames: list[str]) -> None:
    """A hook implementation of a hook without a spec: what ``check_pending`` refuses."""
    for caller in pm.get_hookcallers(plugin) or []:
        if caller.has_spec():
            continue
        for impl in caller.get_hookimpls():
            if impl.plugin is plugin and not getattr(impl, "optionalhook", False):
                raise PluginLoadError(
                    "validate",
                    unknown_hook_error(plugin, caller.name, impl.function, project, specnames),
                )


def unknown_hook_error(
    plugin: Any,
    hook: str,
    function: Any,
    project: str,
    specnames: list[str],
    *,
    consequence: str = "",
    listed: bool = True,
) -> Exception:
    """A ``PluginValidationError`` for a hook implementation of a hook ``project`` lacks;
    ``consequence``: what the application does with it (default: never calls it);
    ``listed``: the message ends with every hook ``project`` has."""
    close = difflib.get_close_matches(hook, specnames, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    name = getattr(function, "__name__", hook)
    what = f"{name}()" if name == hook else f"{name}() (specname={hook!r})"
    hooks = f"; its hooks are: {', '.join(specnames)}" if listed else ""
    consequence = consequence or f"{project} never calls it"
    return validation_error(
        plugin,
        f"{what} is a hook implementation, but {project} has no hook {hook!r}{hint}, so "
        f"{consequence}{hooks}",
    )


def _check_unmarked(pm: Any, plugin: Any, project: str, specnames: list[str]) -> None:
    """A function named like a hook that pluggy skipped: not marked, or marked for another
    project (``@hookimpl`` imported from the wrong application)."""
    implemented = {caller.name for caller in pm.get_hookcallers(plugin) or []}
    for name in specnames:
        if name in implemented:
            continue
        attribute = inspect.getattr_static(plugin, name, None)
        if isinstance(attribute, (staticmethod, classmethod)):
            attribute = attribute.__func__
        if not inspect.isroutine(attribute) or pm.parse_hookimpl_opts(plugin, name) is not None:
            continue
        others = sorted(
            key[: -len("_impl")]
            for key in (vars(attribute) if hasattr(attribute, "__dict__") else {})
            if key.endswith("_impl") and key != f"{project}_impl"
        )
        marker = f"{project}'s hookimpl (pluggy.HookimplMarker({project!r}))"
        if others:
            why = f"is marked as a hook implementation of {others[0]!r}, not of {project!r}"
        else:
            why = "is not marked as a hook implementation"
        raise PluginLoadError(
            "validate",
            validation_error(
                plugin, f"{name}() {why}, so {project} never calls it: mark it with {marker}"
            ),
        )


def validation_error(plugin: Any, message: str) -> Exception:
    error: Exception = importlib.import_module("pluggy").PluginValidationError(plugin, message)
    return error
