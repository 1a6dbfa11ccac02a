"""The ``keyring`` host: one ``keyring.backends`` plugin, loaded by keyring's own plugin loading.

keyring (``keyring.backend._load_plugins``) calls ``EntryPoint.load()`` on every entry point of
the group and calls what it loaded when that is callable; importing the module is the
registration (``KeyringBackendMeta`` keeps every concrete ``KeyringBackend`` subclass). A failure
there is swallowed: keyring logs ``Error initializing plugin ...`` and carries on without the
backend, so a user never learns why it is missing. This host runs keyring's own loading and
fails on that log line for this entry point.

Then, as ``get_all_keyring()`` does, each backend class the plugin defined is asked for its
``priority``: one that raises is *not viable* here (a backend for another platform, a program or
service missing), which keyring treats as normal, so this host says it in the description, not
as a failure. A viable backend is created with no arguments: keyring skips one whose
``__init__`` raises ``TypeError``, and any other exception breaks ``get_all_keyring()`` for
every keyring user, so that fails.

Registrations: kind ``backend``, named ``module.Class``. keyring is imported at call time only.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    HostContext,
    LoadedPlugin,
    LoadStage,
    PluginLoadError,
    import_application,
    kind_of_group,
    resolve,
    summary,
)

_KINDS = {"keyring.backends": "backend"}


def load_keyring(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Load the plugin with keyring's plugin loading, then judge its backends as keyring does;
    raises :class:`PluginLoadError`: ``application`` (keyring missing), ``import`` or ``setup``
    (keyring's ``Error initializing plugin``, or a viable backend that cannot be created)."""
    del registry, context  # a keyring plugin registers no tools, and needs no limits
    kind_of_group(_KINDS, "keyring", ref.group)
    backend = import_application("keyring.backend", "keyring", ref.group)
    base = backend.KeyringBackend
    before = set(getattr(base, "_classes", ()))
    with _errors_logged() as errors:
        backend._load_plugins()  # keyring's own loading, of every installed plugin
    ours = [record for record in errors if _names(record, ref)]
    if ours:
        raise _initializing_failed(ref, ours[0])
    target = resolve(ref)  # loaded already: what it names, to find the classes it defined
    added = set(getattr(base, "_classes", ())) - before
    classes = _defined_by(ref, target, added)
    if not classes:
        return _no_backend(ref, target, base)
    tools = [_judge(cls) for cls in sorted(classes, key=_qualified)]
    return LoadedPlugin(ref=ref, tools=tools, handlers={})


def _no_backend(ref: EntryPointRef, target: Any, base: type) -> LoadedPlugin:
    """keyring loads a module that registers no backend without a word. A backend class left
    abstract (a method keyring requires is missing) is never registered: that fails; a module
    with no backend class at all (helpers for other backends) is said, not failed."""
    import inspect  # noqa: PLC0415 - only this case needs it

    module = inspect.getmodule(target)
    abstract = [
        value
        for value in (vars(module).values() if module else ())
        if isinstance(value, type)
        and issubclass(value, base)
        and getattr(value, "__abstractmethods__", None)
        and value.__module__ == getattr(module, "__name__", None)
    ]
    if abstract:
        missing = ", ".join(sorted(getattr(abstract[0], "__abstractmethods__", ())))
        raise PluginLoadError(
            "validate",
            TypeError(
                f"{_qualified(abstract[0])} is abstract (it lacks {missing}), so keyring does "
                "not register it as a backend"
            ),
        )
    return LoadedPlugin(
        ref=ref,
        tools=[],
        handlers={},
        skipped="keyring loads it without an error, and it defines no KeyringBackend "
        "subclass (it may hold helpers other backends use)",
    )


@contextlib.contextmanager
def _errors_logged() -> Iterator[list[logging.LogRecord]]:
    """What keyring logs at ERROR while it loads its plugins."""
    logger = logging.getLogger("keyring.backend")
    records: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Collect(logging.ERROR)
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)


def _names(record: logging.LogRecord, ref: EntryPointRef) -> bool:
    """Is the log line about this entry point? (keyring names it as ``EntryPoint(name=...)``.)"""
    message = record.getMessage()
    return f"name={ref.name!r}" in message and f"value={ref.value!r}" in message


def _initializing_failed(ref: EntryPointRef, record: logging.LogRecord) -> PluginLoadError:
    cause: BaseException = RuntimeError(record.getMessage())
    if record.exc_info and record.exc_info[1] is not None:
        cause = record.exc_info[1]
    # an import error is the plugin's module; anything else its initialization
    stage: LoadStage = "import" if isinstance(cause, (ImportError, AttributeError)) else "setup"
    return PluginLoadError(stage, cause, where=f"keyring: Error initializing plugin {ref.name!r}")


def _defined_by(ref: EntryPointRef, target: Any, classes: set[type]) -> set[type]:
    """The backend classes the entry point defined, among those keyring registered while it
    loaded its plugins: what it names, and the classes of the module it names (and below)."""
    prefix = ref.module
    return {
        cls
        for cls in classes
        if cls is target or cls.__module__ == prefix or cls.__module__.startswith(prefix + ".")
    }


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _judge(cls: Any) -> dict[str, Any]:
    """One backend as ``get_all_keyring()`` sees it: viable or not, then created."""
    name = _qualified(cls)
    try:
        priority = cls.priority
    except Exception as exc:
        verdict = f"not viable here, so keyring does not use it: {type(exc).__name__}: {exc}"
    else:
        verdict = f"priority {priority:g}" if isinstance(priority, (int, float)) else "viable"
        try:
            cls()
        except TypeError as exc:  # keyring skips a backend it cannot create without arguments
            verdict += f"; keyring skips it: creating it without arguments fails ({exc})"
        except Exception as exc:
            raise PluginLoadError(
                "setup", exc, where=f"creating {name}, as keyring's get_all_keyring() does"
            ) from exc
    description = summary(cls)
    text = f"{description} ({verdict})" if description else verdict
    return {"name": name, "kind": "backend", "description": text, "parameters": None}
