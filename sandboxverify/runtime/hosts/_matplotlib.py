"""The ``matplotlib`` host: one ``matplotlib.backend`` plugin, resolved by matplotlib's backend
registry (matplotlib 3.9 and later).

matplotlib never calls ``EntryPoint.load()``: ``backend_registry`` reads each entry point's name
and value, refuses a name that shadows a built-in backend, starts with ``module://`` or is
declared twice with different modules (a ``RuntimeError`` for every backend not built in), and
imports the value as a module name when the backend is used, reading its ``FigureCanvas``. So
the value is a bare module (``package.backend_name``): ``package.mod:attr`` fails there. This
host asks the registry (``resolve_backend``, ``load_backend_module``), requires ``FigureCanvas``,
and with a non-interactive backend (no GUI framework, such as a file format) draws a small
figure and saves it in the canvas' default format. An interactive one needs its GUI framework
or kernel running: it is loaded, not drawn.

Registrations: kind ``backend``, named by the entry point. matplotlib is imported at call time.
"""

from __future__ import annotations

import importlib
import io
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    HostContext,
    LoadedPlugin,
    PluginLoadError,
    import_application,
    kind_of_group,
    resolve,
    summary,
)

_KINDS = {"matplotlib.backend": "backend"}

#: matplotlib reads backends from entry points from this release on
ENTRY_POINTS_SINCE = "3.9"


def load_matplotlib(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Resolve and load the backend as ``matplotlib.use(name)`` does, and draw with a headless
    one; raises :class:`PluginLoadError`: ``application`` (matplotlib missing or too old, or it
    failed with the backend), ``import``, ``validate`` (not a module with ``FigureCanvas``)."""
    del registry, context  # a backend registers no tools, and needs no limits
    kind_of_group(_KINDS, "matplotlib", ref.group)
    if ":" in ref.value:
        raise PluginLoadError(
            "validate",
            ValueError(
                f"matplotlib imports the value {ref.value!r} as a module name, and no module "
                "has a ':' in its name"
            ),
        )
    matplotlib = import_application("matplotlib", "matplotlib", ref.group)
    registry_module = _registry(matplotlib)
    module = resolve(ref)  # the plugin's own import error, before matplotlib's
    backends = registry_module.backend_registry
    name, gui = _use(
        f"backend_registry.resolve_backend({ref.name!r})", backends.resolve_backend, ref.name
    )
    loaded = _use(
        f"backend_registry.load_backend_module({name!r})", backends.load_backend_module, name
    )
    canvas = getattr(loaded, "FigureCanvas", None)
    if loaded is not module or canvas is None:
        raise PluginLoadError(
            "validate",
            AttributeError(
                f"the backend module {ref.value!r} defines no FigureCanvas: matplotlib reads the "
                "backend's canvas class from it"
            ),
        )
    if gui is None:
        drawn = _use(f"drawing a figure with the backend {name!r}", _draw, canvas)
        what = f"non-interactive; drew a figure and saved it as {drawn}"
    else:
        what = f"interactive ({gui}); loaded, not drawn: it needs {gui} running"
    description = f"{summary(module) or ref.value} ({what})"
    registration = {"name": ref.name, "kind": "backend", "description": description}
    return LoadedPlugin(ref=ref, tools=[{**registration, "parameters": None}], handlers={})


def _registry(matplotlib: Any) -> Any:
    try:
        return importlib.import_module("matplotlib.backends.registry")
    except ImportError as exc:
        version = getattr(matplotlib, "__version__", "(unknown version)")
        raise PluginLoadError(
            "application",
            RuntimeError(
                f"matplotlib {version} does not read matplotlib.backend entry points (matplotlib "
                f">={ENTRY_POINTS_SINCE} does): install a newer matplotlib in the sandbox"
            ),
        ) from exc


def _use(what: str, step: Any, *args: Any) -> Any:
    try:
        return step(*args)
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("application", exc, where=what) from exc


def _draw(canvas_class: Any) -> str:
    """A small figure drawn on the backend's canvas and saved in its default format."""
    figure = importlib.import_module("matplotlib.figure").Figure()
    canvas = canvas_class(figure)
    axes = figure.add_subplot()
    axes.plot([0, 1, 2, 3], [0, 1, 4, 9], label="squares")
    axes.set_title("sandboxverify")
    axes.legend()
    fmt = str(canvas.get_default_filetype())
    figure.savefig(io.BytesIO(), format=fmt)
    return fmt
