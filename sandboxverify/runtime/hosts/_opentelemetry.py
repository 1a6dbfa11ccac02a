"""The ``opentelemetry`` host: one ``opentelemetry_instrumentor`` plugin, loaded as
``opentelemetry-instrument`` loads it (``auto_instrumentation._load._load_instrumentors``).

For each instrumentor entry point, OpenTelemetry first reads the instrumentor's own distribution
metadata: the library it instruments is declared under its ``instruments`` extra (or
``instruments-any``), not as a dependency. When that library is not installed, OpenTelemetry
skips the instrumentor by design (a DEBUG line): a plain install of
``opentelemetry-instrumentation-requests`` does not bring ``requests``. This host reports that
as a plugin skipped here, with a note saying what to install, never as a failure. With the
library installed at a version outside the declared range, OpenTelemetry logs an error and
skips it: that fails.

With the library there, it loads the entry point (a ``BaseInstrumentor`` subclass), creates it
with no arguments and calls ``instrument()``, as ``BaseDistro.load_instrumentor`` does, then
``uninstrument()``; ``instrumentation_dependencies()`` must name requirements that are met here.

The ``opentelemetry_pre_instrument`` and ``opentelemetry_post_instrument`` hooks are called with
no arguments around the instrumentors, as OpenTelemetry calls them.

Registrations: kind ``instrumentor``, named by the entry point (the library), and ``hook``.
OpenTelemetry is imported at call time only.
"""

from __future__ import annotations

from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    HostContext,
    LoadedPlugin,
    PluginLoadError,
    import_application,
    kind_of_group,
    require_callable,
    resolve,
    summary,
)
from sandboxverify.runtime.hosts._extras import distribution_of

_KINDS = {
    "opentelemetry_instrumentor": "instrumentor",
    "opentelemetry_pre_instrument": "hook",
    "opentelemetry_post_instrument": "hook",
}
APPLICATION = "opentelemetry-instrumentation"


def load_opentelemetry(
    ref: EntryPointRef, registry: Registry, context: HostContext
) -> LoadedPlugin:
    """Skip, or load, instrument and uninstrument, as OpenTelemetry does; raises
    :class:`PluginLoadError`: ``application`` (OpenTelemetry missing, or the library installed at
    a version the instrumentor does not instrument), ``import``, ``validate`` (not a
    ``BaseInstrumentor``), ``setup`` (creating or instrumenting raised)."""
    del registry, context  # an instrumentor registers no tools, and needs no limits
    if kind_of_group(_KINDS, "OpenTelemetry", ref.group) == "hook":
        return _hook(ref)
    dependencies = import_application(
        "opentelemetry.instrumentation.dependencies", APPLICATION, ref.group
    )
    base = import_application(
        "opentelemetry.instrumentation.instrumentor", APPLICATION, ref.group
    ).BaseInstrumentor
    dist = distribution_of(ref)
    conflict = dependencies.get_dist_dependency_conflicts(dist) if dist is not None else None
    if conflict is not None:
        if not (getattr(conflict, "found", None) or getattr(conflict, "found_any", None)):
            name = dist.metadata["Name"] if dist is not None else "the distribution"
            return LoadedPlugin(ref=ref, tools=[], handlers={}, skipped=_skipped(conflict, name))
        raise PluginLoadError("application", RuntimeError(f"OpenTelemetry: {conflict}"))
    cls = resolve(ref)
    if not (isinstance(cls, type) and issubclass(cls, base)):
        shown = getattr(cls, "__qualname__", None) or type(cls).__name__
        raise PluginLoadError(
            "validate",
            TypeError(
                f"opentelemetry_instrumentor entry point {ref.name!r} = {ref.value!r} resolved "
                f"to {shown}, not a BaseInstrumentor subclass: OpenTelemetry creates it and "
                "calls instrument()"
            ),
        )
    instrumentor = _use(f"{cls.__qualname__}()", cls)
    needs = list(_use(f"{cls.__qualname__}().instrumentation_dependencies()", _needs, instrumentor))
    unmet = dependencies.get_dependency_conflicts(needs)
    if unmet is not None:
        raise PluginLoadError(
            "validate",
            RuntimeError(
                f"{cls.__qualname__}.instrumentation_dependencies() is not met although the "
                f"'instruments' extra is: {unmet}"
            ),
        )
    _use(f"{cls.__qualname__}().instrument()", instrumentor.instrument, skip_dep_check=True)
    _use(f"{cls.__qualname__}().uninstrument()", instrumentor.uninstrument)
    libraries = ", ".join(needs) or "no library beyond the standard library"
    description = f"{summary(cls) or cls.__qualname__} (instruments {libraries})"
    registration = {"name": ref.name, "kind": "instrumentor", "description": description}
    return LoadedPlugin(ref=ref, tools=[{**registration, "parameters": None}], handlers={})


def _hook(ref: EntryPointRef) -> LoadedPlugin:
    """A pre- or post-instrument hook: OpenTelemetry calls what the entry point names, with no
    arguments, before or after it instruments (an exception stops auto-instrumentation)."""
    import_application("opentelemetry.instrumentation", APPLICATION, ref.group)
    hook = resolve(ref)
    require_callable(ref, hook, "a function OpenTelemetry calls")
    _use(f"{ref.value}()", hook)
    registration = {"name": ref.name, "kind": "hook", "description": summary(hook)}
    return LoadedPlugin(ref=ref, tools=[{**registration, "parameters": None}], handlers={})


def _skipped(conflict: Any, dist: str) -> str:
    return (
        f"OpenTelemetry skips it by design: {conflict} Its 'instruments' extra names that "
        f"library: install it (--with '{dist}[instruments]') to verify the instrumentor"
    )


def _needs(instrumentor: Any) -> list[str]:
    needs = instrumentor.instrumentation_dependencies()
    if isinstance(needs, str) or not all(isinstance(need, str) for need in needs):
        raise TypeError(f"instrumentation_dependencies() returned {needs!r}, not requirements")
    return list(needs)


def _use(what: str, step: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return step(*args, **kwargs)
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("setup", exc, where=what) from exc
