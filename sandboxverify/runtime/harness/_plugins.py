"""Loading plugins into a harness session: setup callables, ``module:attr`` strings, entry-point
names, or by default every plugin of the distribution under test."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Union

from sandboxverify.runtime._protocol import EntryPointRef, server_ref
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime._tracebacks import format_traceback
from sandboxverify.runtime.harness._errors import HarnessError
from sandboxverify.runtime.harness._plugin_files import PluginFile, file_spec
from sandboxverify.runtime.hosts import HOSTS as _HOST_REGISTRY
from sandboxverify.runtime.hosts import (
    SESSION_HOSTS,
    HostContext,
    PluginAPI,
    PluginLoadError,
    load_plugin,
)

PluginSpec = Union[str, Callable[[Any], Any]]
DEFAULT_GROUP = "sandboxverify.plugins"
#: Set by the sandbox (and usable by anyone): which distribution's plugins a session loads.
DIST_ENV = "SANDBOXVERIFY_DIST"
#: Set by the sandbox: the host a session uses when none is given (``native`` otherwise).
HOST_ENV = "SANDBOXVERIFY_HOST"
#: Set (to 1) to run every session's plugins in a process of their own unless it says otherwise.
ISOLATE_ENV = "SANDBOXVERIFY_ISOLATE_PLUGINS"
_TRUTHY = ("1", "true", "yes")


def isolation_wanted(isolate: bool | None) -> bool:
    """Do a session's plugins run in a process of their own? As asked; by default, when
    ``SANDBOXVERIFY_ISOLATE_PLUGINS`` says so, and always for a .py playbook's sessions under
    ``check --smoke`` and ``run``, whose judge must see every call."""
    from sandboxverify.runtime.harness._transport import under_a_judge  # noqa: PLC0415

    if under_a_judge():
        if isolate is False:
            raise HarnessError(
                "playbook_invalid",
                "isolate=False: under check --smoke and run, a playbook's sessions run their "
                "plugins in a process of their own, so that the judge sees every call; drop "
                "isolate=False",
            )
        return True
    if isolate is not None:
        return isolate
    return os.environ.get(ISOLATE_ENV, "").strip().lower() in _TRUTHY


def session_host(host: str | None) -> str:
    chosen = host or os.environ.get(HOST_ENV) or "native"
    if chosen not in SESSION_HOSTS:
        raise HarnessError(
            "plugin_load_failed",
            f"unknown host {chosen!r}; a session hosts plugins with one of: "
            + ", ".join(SESSION_HOSTS),
        )
    return chosen


def default_group(host: str) -> str:
    groups = _HOST_REGISTRY[host].own_groups if host in _HOST_REGISTRY else ()
    return groups[0] if groups else DEFAULT_GROUP


@dataclass(frozen=True)
class LoadFailure:
    plugin: str
    stage: str
    error_type: str
    message: str
    traceback: str

    def describe(self) -> str:
        return (
            f"plugin {self.plugin!r} failed to load ({self.stage}): "
            f"{self.error_type}: {self.message}"
        )


def load_plugins(
    plugins: Sequence[PluginSpec] | None,
    *,
    dist: str | None,
    group: str,
    registry: Registry,
    host: str = "native",
    context: HostContext | None = None,
    names: Mapping[str, str] | None = None,
) -> tuple[list[str], list[LoadFailure]]:
    """Load each plugin into ``registry`` with ``host``; returns the names loaded and the
    failures. ``names``: the name a plugin given as a string is known by, if not the string."""
    if plugins is None:
        refs = _default_plugins(dist, group)
        targets: list[PluginSpec | EntryPointRef | PluginFile] = list(refs)
    else:
        targets = [_resolve_spec(spec, group, host) for spec in plugins]
    loaded: list[str] = []
    failures: list[LoadFailure] = []
    for given in targets:
        name = _name_of(given)
        name = (names or {}).get(name, name)
        try:
            target = given.load(group, host) if isinstance(given, PluginFile) else given
            if isinstance(target, EntryPointRef):
                if name != target.name:
                    target = EntryPointRef(name, target.group, target.value)
                load_plugin(host, target, registry, context)
            else:
                _call_setup(target, name, registry)
        except PluginLoadError as exc:
            failures.append(
                LoadFailure(
                    name,
                    exc.stage,
                    type(exc.cause).__name__,
                    exc.message,
                    format_traceback(exc.cause),
                )
            )
            continue
        loaded.append(name)
    return loaded, failures


def _call_setup(setup: PluginSpec, name: str, registry: Registry) -> None:
    if not callable(setup):
        raise PluginLoadError("validate", TypeError(f"{setup!r} is not a setup callable"))
    try:
        setup(PluginAPI(name, registry))
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("setup", exc) from exc


def _resolve_spec(
    spec: PluginSpec, group: str, host: str
) -> PluginSpec | EntryPointRef | PluginFile:
    """A native plugin is a setup callable, ``module:attr``, an entry-point name or a file
    (``path/to/plugin.py[:attr]``); an llm plugin is an entry-point name, a module or a file; an
    MCP server is a command line."""
    if host == "native" and callable(spec):
        return spec
    if host != "mcp" and isinstance(spec, str):
        named_file = file_spec(spec)
        if named_file is not None:
            return PluginFile(spec, *named_file)
    if host == "mcp" and isinstance(spec, str) and spec.strip():
        try:
            return server_ref(spec)
        except ValueError as exc:
            raise HarnessError("plugin_load_failed", f"server command {spec!r}: {exc}") from None
    if not isinstance(spec, str) or not spec:
        wanted = {
            "native": "a setup callable, 'module:attr' or an entry-point name",
            "llm": "an entry-point name in group 'llm' or a module name",
            "mcp": "a command line that starts the server",
        }[host]
        raise HarnessError("plugin_load_failed", f"a {host} plugin is {wanted}, got {spec!r}")
    if ":" in spec:
        return EntryPointRef(name=spec, group=group, value=spec)
    if host == "llm" and "." in spec:
        return EntryPointRef(name=spec, group=group, value=spec)
    if host == "llm":
        return _entry_point_named(spec, group, fallback_module=True)
    return _entry_point_named(spec, group)


def _entry_point_named(name: str, group: str, *, fallback_module: bool = False) -> EntryPointRef:
    from importlib import metadata  # noqa: PLC0415 - only sessions naming entry points pay for it

    everything = metadata.entry_points()
    # Python 3.9 returns a dict of groups; 3.10+ can select
    in_group: list[Any] = (
        list(everything.select(group=group))
        if hasattr(everything, "select")
        else list(everything.get(group, ()))
    )
    found = [ep for ep in in_group if ep.name == name]
    if len(found) == 1:
        return EntryPointRef(name=name, group=group, value=found[0].value)
    available = sorted({ep.name for ep in in_group})
    if not found and fallback_module:  # an llm plugin is a module: 'llm_tools_x'
        return EntryPointRef(name=name, group=group, value=name)
    if not found:
        raise HarnessError(
            "plugin_load_failed",
            f"no entry point named {name!r} in group {group!r}; installed: "
            f"{', '.join(available) or 'none'}",
        )
    raise HarnessError(
        "plugin_load_failed",
        f"{len(found)} installed distributions declare {name!r} in {group!r}; "
        "name it as 'module:attr' instead",
    )


def _default_plugins(dist: str | None, group: str) -> list[EntryPointRef]:
    from sandboxverify.runtime._discovery import entry_points_of, find_distribution  # noqa: PLC0415

    name = dist or os.environ.get(DIST_ENV) or project_name(Path.cwd())
    if name is None:
        raise HarnessError(
            "no_plugins",
            "no plugins given and no distribution under test known: pass plugins=[...] or "
            f"dist='name' (sandboxverify run: --plugin or --dist), set {DIST_ENV}, or run "
            "from the project's directory",
        )
    distribution = find_distribution(name)
    if distribution is None:
        raise HarnessError(
            "no_plugins",
            f"distribution {name!r} is not installed here; "
            "install it (pip install -e .) or pass plugins=[...]",
        )
    refs = entry_points_of(distribution, [group])
    if not refs:
        raise HarnessError(
            "no_plugins", f"distribution {name!r} declares no entry points in group {group!r}"
        )
    return refs


def project_name(directory: Path) -> str | None:
    """``[project] name`` from pyproject.toml here or above. Read with a pattern, not a TOML
    parser: the runtime has none on Python < 3.11, and only this one key is needed."""
    for folder in (directory, *directory.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                text = candidate.read_text(encoding="utf-8")
            except OSError:
                return None
            section = re.search(r"^\[project\][ \t]*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
            name = section and re.search(r"^name\s*=\s*[\"']([^\"']+)[\"']", section.group(1), re.M)
            return name.group(1) if name else None
    return None


def _name_of(target: PluginSpec | EntryPointRef | PluginFile) -> str:
    if isinstance(target, (EntryPointRef, PluginFile)):
        return target.name if isinstance(target, EntryPointRef) else target.spec
    if isinstance(target, str):
        return target
    return str(getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target)))
