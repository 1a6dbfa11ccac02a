"""The ``mypy`` host: one mypy plugin, a module its users name in ``plugins = ...`` of their mypy
configuration (group ``mypy:plugins``: mypy reads no entry point), in a real mypy run.

mypy imports each module its configuration names, calls its ``plugin(version)`` and requires a
``mypy.plugin.Plugin`` subclass back, whose hooks it calls while it checks. This host runs mypy
in-process (``mypy.api.run``) on a small, typed module with a configuration naming the plugin
and nothing else, with no cache kept. It fails:

- ``import``: the module does not import;
- ``setup``: ``plugin(version)`` raised;
- ``validate``: mypy refused what ``plugin`` returned (no ``Plugin`` subclass);
- ``application``: mypy stopped with an error of its own about the plugin (status 2);
- ``exercise``: mypy crashed while checking the module with the plugin (an internal error,
  what a hook of the plugin raised).

What mypy says about the sample module (status 1) is no failure: a plugin may well have
opinions. Registrations: the module (kind ``plugin``) and the class it returns (kind
``plugin_class``). mypy is imported at call time only.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    ApplicationFailed,
    CallWatch,
    HostContext,
    LoadedPlugin,
    LoadStage,
    PluginLoadError,
    import_application,
    kind_of_group,
    resolve,
    summary,
    tail,
)
from sandboxverify.runtime.hosts._exercise import captured

_KINDS = {"mypy:plugins": "plugin"}

#: what a plugin's hooks meet: classes, a dataclass, functions, decorators, a call
SAMPLE = '''\
"""A typed module of the kinds of code plugin hooks see."""

from __future__ import annotations

import dataclasses
import functools
from typing import Generic, Optional, TypeVar

T = TypeVar("T")


@dataclasses.dataclass
class Point:
    x: int
    y: int = 0


class Box(Generic[T]):
    def __init__(self, item: T) -> None:
        self.item = item

    def get(self) -> T:
        return self.item

    @property
    def size(self) -> int:
        return 1


@functools.lru_cache(maxsize=None)
def square(value: int) -> int:
    return value * value


def first(items: list[str], default: Optional[str] = None) -> Optional[str]:
    return items[0] if items else default


box = Box(Point(1, 2))
total: int = square(box.get().x) + len(first(["a"]) or "")
'''


def load_mypy(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """``mypy`` with ``plugins = <module>`` on :data:`SAMPLE`; raises :class:`PluginLoadError`."""
    del registry, context  # a mypy plugin registers no tools, and needs no limits
    kind_of_group(_KINDS, "mypy", ref.group)
    api = import_application("mypy.api", "mypy", ref.group)
    module = resolve(EntryPointRef(ref.name, ref.group, ref.module))
    exits = _Exits()
    watch = CallWatch(module, "plugin", "version", "mypy", wrap=exits.watched)
    shown = f"mypy with plugins = {ref.module}"
    with tempfile.TemporaryDirectory(prefix="sandboxverify-mypy-") as tmp:
        Path(tmp, "sample.py").write_text(SAMPLE, encoding="utf-8")
        Path(tmp, "mypy.ini").write_text(f"[mypy]\nplugins = {ref.module}\n", encoding="utf-8")
        here = os.getcwd()
        os.chdir(tmp)  # nobody's configuration is read, and messages name sample.py
        try:
            argv = ["--config-file", "mypy.ini", "--cache-dir", os.devnull, "--show-traceback"]
            # mypy reports its own crash on the process's stderr, not in what run() returns
            with captured() as crash:
                stdout, stderr, status = api.run([*argv, "sample.py"])
        except (Exception, SystemExit) as exc:
            watch.reraise()
            if exits.exited is None:  # (mypy's api asserts an exit status is a number)
                raise PluginLoadError("application", exc, where=shown) from exc
            stdout, stderr, status = "", "", 2
        finally:
            os.chdir(here)
    watch.reraise()
    said = tail(f"{stdout}\n{stderr}\n{crash.text}", 30)
    if exits.exited is not None and status == 2:
        code = exits.exited.code
        last = code if isinstance(code, str) else said.splitlines()[-1] if said else ""
        if not _ASKS_CONFIGURATION.search(last):
            failure = ApplicationFailed(f"{shown}: the plugin stopped mypy: {last}\n{said}")
            raise PluginLoadError("setup", failure)
        skipped = (
            "it needs its users' configuration: the plugin stopped mypy without it "
            f"({last.strip()})"
        )
        return LoadedPlugin(ref=ref, tools=[], handlers={}, skipped=skipped)
    if status not in (0, 1) or "INTERNAL ERROR" in said or "Traceback" in said:
        failure = ApplicationFailed(f"{shown} exited with status {status}:\n{said}")
        raise PluginLoadError(_stage(said), failure)
    if not watch.called:  # mypy checked the module without the plugin: nothing was verified
        failure = ApplicationFailed(f"{shown} checked the module and never called {watch.where}")
        raise PluginLoadError("application", failure)
    registrations: list[dict[str, Any]] = [
        {"name": ref.name, "kind": "plugin", "description": summary(module), "parameters": None}
    ]
    if watch.returned is not None:
        returned = watch.returned
        name = f"{getattr(returned, '__module__', '?')}.{getattr(returned, '__qualname__', '?')}"
        registrations.append(
            {
                "name": name,
                "kind": "plugin_class",
                "description": summary(returned),
                "parameters": None,
            }
        )
    return LoadedPlugin(ref=ref, tools=registrations, handlers={})


def _stage(said: str) -> LoadStage:
    """A crash while checking is the plugin's hooks breaking mypy; mypy's words for a return
    that is no ``Plugin`` subclass are a malformed plugin; any other error is mypy refusing
    the plugin."""
    if "INTERNAL ERROR" in said or "Traceback" in said:
        return "exercise"
    return "validate" if "return value of" in said else "application"


#: a plugin's words for a setting its users' configuration lacks
_ASKS_CONFIGURATION = re.compile(r"\b(section|config\w*|settings?|option)\b", re.IGNORECASE)


class _Exits:
    """Whether the plugin, as mypy created it, ended mypy on purpose (``sys.exit``:
    django-stubs without its settings section)."""

    def __init__(self) -> None:
        self.exited: SystemExit | None = None

    def watched(self, returned: Any) -> Any:
        """The class ``plugin()`` returned, as a subclass whose creation records a
        ``SystemExit`` of the plugin's own (anything else is not a class: mypy refuses it)."""
        if not isinstance(returned, type):
            return returned
        exits = self

        def __init__(plugin: Any, *args: Any, **kwargs: Any) -> None:
            try:
                returned.__init__(plugin, *args, **kwargs)  # type: ignore[misc]
            except SystemExit as exc:
                exits.exited = exc
                raise

        namespace = {"__init__": __init__, "__module__": returned.__module__}
        watched = type(returned.__name__, (returned,), namespace)
        watched.__qualname__ = returned.__qualname__
        return watched
