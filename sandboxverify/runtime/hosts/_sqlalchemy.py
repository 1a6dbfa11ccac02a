"""The ``sqlalchemy`` host: one ``sqlalchemy.dialects`` plugin, resolved as ``create_engine`` does.

A URL ``dialect+driver://`` names the entry point ``dialect.driver``: ``URL.get_dialect()`` asks
``sqlalchemy.dialects.registry.load(name)`` (SQLAlchemy's own dialects first, then the first
entry point of that name, ``EntryPoint.load()``), unwraps a module's ``dialect`` attribute and
calls ``get_dialect_cls``. This host resolves the plugin that way, creates the dialect (no
driver needed: SQLAlchemy imports the DBAPI in ``create_engine``, through ``import_dbapi``) and
compiles a query with it.

The DBAPI driver is the user's choice and is usually not declared: a driver that is not installed
is said in the description, not failed. A dialect module that imports its driver at import
(``sqlalchemy_cockroachdb.psycopg`` imports ``psycopg``) fails to load without it exactly as
``create_engine`` would for a user who lacks it; every user of that dialect has installed the
driver, so the plugin is reported as skipped here, with the driver to install, not as broken.
So is a module the distribution lists under an extra. Any other import error is the plugin's.

Registrations: kind ``dialect``, named by the entry point. SQLAlchemy is imported at call time.
"""

from __future__ import annotations

import importlib
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
)
from sandboxverify.runtime.hosts._extras import extra_providing, normalized

_KINDS = {"sqlalchemy.dialects": "dialect"}


def load_sqlalchemy(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Resolve, create and use the dialect; raises :class:`PluginLoadError`: ``application``
    (SQLAlchemy missing, or it failed with the dialect), ``import``, ``validate``."""
    del registry, context  # a dialect registers no tools, and needs no limits
    kind_of_group(_KINDS, "SQLAlchemy", ref.group)
    engine = import_application("sqlalchemy.engine", "sqlalchemy", ref.group)
    dialects = import_application("sqlalchemy.dialects", "sqlalchemy", ref.group)
    url = f"{ref.name.replace('.', '+')}://"
    try:
        cls = engine.URL.create(ref.name.replace(".", "+")).get_dialect()
    except ImportError as exc:
        skipped = _driver_at_import(ref, exc)
        if skipped:
            return LoadedPlugin(ref=ref, tools=[], handlers={}, skipped=skipped)
        raise PluginLoadError("import", exc) from exc
    except (Exception, SystemExit) as exc:
        if type(exc).__name__ == "NoSuchModuleError":  # no entry point of that name reached
            raise PluginLoadError("validate", exc, where=f"resolving {url}") from exc
        raise PluginLoadError("import", exc, where=f"resolving {url}") from exc
    _require_own(ref, dialects.registry.load(ref.name))
    dialect = _use(f"creating {cls.__qualname__}()", cls)
    _use(f"compiling a query with {cls.__qualname__}", _compile, dialect)
    description = f"{cls.__module__}.{cls.__qualname__}: {_driver(cls)}"
    registration = {"name": ref.name, "kind": "dialect", "description": description}
    return LoadedPlugin(ref=ref, tools=[{**registration, "parameters": None}], handlers={})


def _use(what: str, step: Any, *args: Any) -> Any:
    try:
        return step(*args)
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("application", exc, where=what) from exc


def _require_own(ref: EntryPointRef, loaded: Any) -> None:
    """The registry gives this entry point's dialect, not SQLAlchemy's own of that name."""
    target = resolve(ref)
    if loaded is target or loaded is getattr(target, "dialect", None):
        return
    shown = f"{getattr(loaded, '__module__', '?')}.{getattr(loaded, '__qualname__', loaded)}"
    raise PluginLoadError(
        "validate",
        LookupError(
            f"SQLAlchemy resolves {ref.name!r} to {shown}, not to {ref.value!r}: its own "
            "dialects (and the first entry point of a name) win, so this one is never used"
        ),
    )


def _compile(dialect: Any) -> str:
    sql = importlib.import_module("sqlalchemy")
    query = (
        sql.select(sql.column("a"), sql.column("b"))
        .select_from(sql.table("t"))
        .where(sql.column("a") == 1)
        .order_by(sql.column("b"))
        .limit(5)
    )
    return str(query.compile(dialect=dialect))


def _driver(cls: Any) -> str:
    """Whether the DBAPI the dialect would use is installed here (the user's choice)."""
    load = getattr(cls, "import_dbapi", None) or getattr(cls, "dbapi", None)
    driver = getattr(cls, "driver", None) or "its DBAPI"
    if load is None:
        return f"driver {driver}"
    try:
        load()
    except ImportError as exc:
        return f"driver {driver} not installed here ({exc}): create_engine needs it"
    except Exception as exc:
        where = f"{cls.__qualname__}.import_dbapi(), as create_engine calls it"
        raise PluginLoadError("application", exc, where=where) from exc
    return f"driver {driver} installed"


def _driver_at_import(ref: EntryPointRef, exc: ImportError) -> str | None:
    """Why a failed import is the user's driver or an extra, not the plugin: ``None`` if not."""
    failed: BaseException | None = exc
    while failed is not None and not (isinstance(failed, ImportError) and failed.name):
        failed = failed.__cause__ or failed.__context__
    if not isinstance(failed, ImportError) or not failed.name:
        return None
    module = failed.name.split(".", 1)[0]
    _, dot, driver = ref.name.partition(".")
    if dot and normalized(driver) == normalized(module):
        url = f"{ref.name.replace('.', '+')}://"
        return (
            f"the dialect module imports its DBAPI driver {module!r} when it is imported, and "
            f"the driver is not importable here ({failed}); create_engine({url!r}) fails the "
            "same way for a user without it, and users of this dialect install it: pass "
            f"--with {module} to verify the dialect"
        )
    extra = extra_providing(ref, module)
    if extra:
        return f"the dialect needs {module!r}, which comes with the extra {extra}: install it"
    return None
