"""The ``fsspec`` host: one ``fsspec.specs`` plugin, resolved by fsspec as a protocol.

fsspec never calls ``EntryPoint.load()``: at ``import fsspec`` it registers each entry point's
value, with ``:`` replaced by ``.``, as the class path of the protocol named by the entry point
(the first of a name wins, over fsspec's own); ``get_filesystem_class(protocol)`` imports it on
first use, splitting the path at its last dot, and refuses what is not a class. So
``pkg.mod:FS`` and ``pkg.mod.FS`` both work (ipfsspec's ``ipfsspec.AsyncIPFSFileSystem``, which
``EntryPoint.load()`` cannot import), and a value naming a module or a function fails. This host
asks fsspec exactly that, and the class must be an ``AbstractFileSystem``, as every fsspec call
expects.

A protocol whose module needs a package the plugin's distribution lists under an extra
(morefs' ``memfs`` needs ``pygtrie``, its extra ``memfs``) is what fsspec's own protocols do too
("Install s3fs to access S3"): fsspec raises only when that protocol is used, so the plugin is
reported as skipped here, with the extra to install, not as broken.

Registrations: kind ``filesystem``, named by the protocol. fsspec is imported at call time only.
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
    summary,
)
from sandboxverify.runtime.hosts._extras import extra_providing, missing_module

_KINDS = {"fsspec.specs": "filesystem"}


def load_fsspec(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """``fsspec.get_filesystem_class(name)``; raises :class:`PluginLoadError`: ``application``
    (fsspec missing), ``import``, ``validate`` (fsspec registered another class for the name, or
    the value names no ``AbstractFileSystem`` class)."""
    del registry, context  # an fsspec plugin registers no tools, and needs no limits
    kind_of_group(_KINDS, "fsspec", ref.group)
    fsspec = import_application("fsspec", "fsspec", ref.group)
    path = ref.value.replace(":", ".")
    implementations = import_application("fsspec.registry", "fsspec", ref.group)
    known = implementations.known_implementations.get(ref.name, {}).get("class")
    if known != path:
        found = f"registers {known!r} for it" if known else "does not know it"
        raise PluginLoadError(
            "validate",
            LookupError(
                f"fsspec {found}, not {path!r}: another installed distribution declares the "
                f"protocol {ref.name!r} first"
            ),
        )
    try:
        cls = fsspec.get_filesystem_class(ref.name)
    except ImportError as exc:
        skipped = _needs_extra(ref, exc)
        if skipped:
            return LoadedPlugin(ref=ref, tools=[], handlers={}, skipped=skipped)
        # fsspec's "Unable to load filesystem from EntryPoint(...)": the import error is its cause
        raise PluginLoadError("import", exc.__cause__ or exc) from exc
    except TypeError as exc:  # "... is not a class"
        raise PluginLoadError("validate", _not_a_class(ref, str(exc))) from exc
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("import", exc) from exc
    base = fsspec.AbstractFileSystem
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise PluginLoadError("validate", _not_a_class(ref, f"{path} is not a class"))
    return LoadedPlugin(ref=ref, tools=[_registration(ref, cls)], handlers={})


def _not_a_class(ref: EntryPointRef, why: str) -> TypeError:
    return TypeError(
        f"fsspec: {why}: the fsspec.specs entry point {ref.name!r} = {ref.value!r} must name "
        "a subclass of fsspec.AbstractFileSystem"
    )


def _needs_extra(ref: EntryPointRef, exc: ImportError) -> str | None:
    module = missing_module(exc)
    extra = extra_providing(ref, module) if module else None
    if extra is None:
        return None
    return (
        f"the protocol {ref.name!r} needs {module!r}, which comes with the extra {extra}; "
        "fsspec imports it only when the protocol is used: install the extra (--with) to "
        "verify it"
    )


def _registration(ref: EntryPointRef, cls: Any) -> dict[str, Any]:
    description = summary(cls) or f"{cls.__module__}.{cls.__qualname__}"
    return {"name": ref.name, "kind": "filesystem", "description": description, "parameters": None}
