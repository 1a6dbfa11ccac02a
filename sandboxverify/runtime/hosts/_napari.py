"""The ``napari`` host: one ``napari.manifest`` plugin, read by npe2, napari's plugin engine.

The value of a ``napari.manifest`` entry point is ``package:napari.yaml``: a *file* next to the
package's modules, not an object (``EntryPoint.load()`` always fails on it). npe2
(``PluginManifest._from_entrypoint``) finds the package with ``importlib.util.find_spec``
without importing it, reads the file from the package's directory, validates it against its
schema and requires the manifest's ``name`` to be the distribution's. napari imports the
``python_name`` of each contribution (``package.module:callable``) when it is used.

This host finds the file as npe2 does first (a manifest missing from the wheel is the plugin's
own error, npe2 or not), then has npe2 read the distribution's manifest
(``PluginManifest.from_distribution``) and import every ``python_name`` in it
(``validate_imports``, what ``npe2 validate --imports`` does). npe2 is the application: napari
depends on it, and it is light (no Qt), so ``--with npe2`` verifies a plugin that declares
neither.

Registrations: the manifest (kind ``manifest``, its name) and each command it contributes
(kind ``command``, its id). npe2 is imported at call time only.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    HostContext,
    LoadedPlugin,
    PluginLoadError,
    import_application,
    kind_of_group,
)
from sandboxverify.runtime.hosts._extras import distribution_of

_KINDS = {"napari.manifest": "manifest"}


def load_napari(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Find the manifest file, have npe2 read and validate it, import what it names; raises
    :class:`PluginLoadError`: ``import`` (no such package, no such file), ``validate`` (not
    ``package:file``), ``application`` (npe2 missing, it refuses the manifest, or a
    ``python_name`` does not import)."""
    del registry, context  # a manifest registers no tools, and needs no limits
    kind_of_group(_KINDS, "npe2", ref.group)
    manifest_file(ref)
    npe2 = import_application("npe2", "npe2", ref.group)
    dist = distribution_of(ref)
    if dist is None:  # pragma: no cover - the probe found the entry point in a distribution
        raise PluginLoadError("validate", LookupError(f"no distribution declares {ref.value!r}"))
    name = dist.metadata["Name"]
    what = f"npe2: PluginManifest.from_distribution({name!r})"
    try:
        manifest = npe2.PluginManifest.from_distribution(name)
    except (Exception, SystemExit) as exc:  # the schema's ValidationError, a name mismatch
        raise PluginLoadError("application", exc, where=what) from exc
    try:
        manifest.validate_imports()
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("application", exc, where=f"{what}.validate_imports()") from exc
    return LoadedPlugin(ref=ref, tools=_registrations(manifest), handlers={})


def manifest_file(ref: EntryPointRef) -> Path:
    """The manifest file, found as npe2 finds it: in the directory of the package the value
    names, which is not imported."""
    filename = ref.attribute
    if not filename:
        raise PluginLoadError(
            "validate",
            ValueError(
                f"the napari.manifest value {ref.value!r} names no manifest file: npe2 reads "
                "'package:napari.yaml', the file inside the package"
            ),
        )
    try:
        spec = importlib.util.find_spec(ref.module)
    except (Exception, SystemExit) as exc:  # a parent package that does not import
        raise PluginLoadError("import", exc) from exc
    if spec is None:
        raise PluginLoadError(
            "import", ModuleNotFoundError(f"No module named {ref.module!r}", name=ref.module)
        )
    locations = list(spec.submodule_search_locations or [])
    for location in locations:
        path = Path(location, filename)
        if path.is_file():
            return path
    where = ", ".join(locations) or f"{ref.module!r}, a module and not a package"
    raise PluginLoadError(
        "import",
        FileNotFoundError(f"no manifest file {filename!r} in {where}: npe2 cannot read it"),
    )


def _registrations(manifest: Any) -> list[dict[str, Any]]:
    shown = getattr(manifest, "display_name", None) or manifest.name
    found = [{"name": manifest.name, "kind": "manifest", "description": f"napari plugin {shown}"}]
    contributions = getattr(manifest, "contributions", None)
    for command in getattr(contributions, "commands", None) or []:
        found.append({"name": command.id, "kind": "command", "description": command.title})
    return [{**registration, "parameters": None} for registration in found]
