"""Loading plugins into a harness session: setup callables, ``module:attr`` strings, entry-point
names, or by default every plugin of the distribution under test."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Union

from sandboxverify.runtime._hosts import PluginLoadError, load_native
from sandboxverify.runtime._native import PluginAPI, Registry
from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._tracebacks import format_traceback
from sandboxverify.runtime.harness._errors import HarnessError

PluginSpec = Union[str, Callable[[Any], Any]]
DEFAULT_GROUP = "sandboxverify.plugins"
#: Set by the sandbox (and usable by anyone): which distribution's plugins a session loads.
DIST_ENV = "SANDBOXVERIFY_DIST"


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
) -> tuple[list[str], list[LoadFailure]]:
    """Load each plugin into ``registry``; returns the names loaded and the failures."""
    if plugins is None:
        refs = _default_plugins(dist, group)
        targets: list[PluginSpec | EntryPointRef] = list(refs)
    else:
        targets = [_resolve_spec(spec, group) for spec in plugins]
    loaded: list[str] = []
    failures: list[LoadFailure] = []
    for target in targets:
        name = _name_of(target)
        try:
            if isinstance(target, EntryPointRef):
                load_native(target, registry)
            else:
                _call_setup(target, name, registry)
        except PluginLoadError as exc:
            failures.append(
                LoadFailure(
                    name,
                    exc.stage,
                    type(exc.cause).__name__,
                    str(exc.cause),
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


def _resolve_spec(spec: PluginSpec, group: str) -> PluginSpec | EntryPointRef:
    if callable(spec):
        return spec
    if not isinstance(spec, str) or not spec:
        raise HarnessError(
            "plugin_load_failed",
            f"a plugin is a setup callable, 'module:attr' or an entry-point name, got {spec!r}",
        )
    if ":" in spec:
        return EntryPointRef(name=spec, group=group, value=spec)
    return _entry_point_named(spec, group)


def _entry_point_named(name: str, group: str) -> EntryPointRef:
    from importlib import metadata  # noqa: PLC0415 - only sessions naming entry points pay for it

    found = [ep for ep in metadata.entry_points(group=group) if ep.name == name]
    if len(found) == 1:
        return EntryPointRef(name=name, group=group, value=found[0].value)
    available = sorted({ep.name for ep in metadata.entry_points(group=group)})
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

    name = dist or os.environ.get(DIST_ENV) or _project_name(Path.cwd())
    if name is None:
        raise HarnessError(
            "no_plugins",
            "no plugins given and no distribution under test known: pass plugins=[...] or "
            f"dist='name', set {DIST_ENV}, or run from the project's directory",
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


def _project_name(directory: Path) -> str | None:
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


def _name_of(target: PluginSpec | EntryPointRef) -> str:
    if isinstance(target, EntryPointRef):
        return target.name
    if isinstance(target, str):
        return target
    return str(getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target)))
