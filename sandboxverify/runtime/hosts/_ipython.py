"""The ``ipython`` host: one IPython extension, a module its users load with ``%load_ext
<module>`` (or list in ``c.InteractiveShellApp.extensions``; group ``ipython:extensions``:
IPython reads no entry point), in a real IPython shell.

IPython imports the module and calls its ``load_ipython_extension(ipython)``, where the
extension registers magics, event callbacks or formatters. This host makes an IPython shell
(``InteractiveShell``, history off: nothing is written), loads the extension through the
shell's extension manager, as ``%load_ext`` does, then runs a small cell, which calls every
callback the extension registered. It fails:

- ``import``: the module does not import;
- ``setup``: ``load_ipython_extension`` raised;
- ``application``: IPython itself failed, or found no load function;
- ``exercise``: the cell failed, or IPython showed a traceback while running it (a callback of
  the extension raised: IPython prints the error after every cell and goes on).

Registrations: the module (kind ``extension``), and each magic (kind ``magic``) and event
callback (kind ``callback``) it adds. IPython is imported at call time only.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    ApplicationFailed,
    HostContext,
    LoadedPlugin,
    PluginLoadError,
    import_application,
    kind_of_group,
    resolve,
    summary,
)
from sandboxverify.runtime.hosts._exercise import captured

_KINDS = {"ipython:extensions": "extension"}

#: what a cell of a user's session holds: an assignment, a loop, a value shown
CELL = """\
values = [i * i for i in range(5)]
total = 0
for value in values:
    total += value
total
"""


def load_ipython(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """``%load_ext <module>`` in a fresh shell, then a cell; raises :class:`PluginLoadError`."""
    del registry, context  # an IPython extension registers no tools, and needs no limits
    kind_of_group(_KINDS, "IPython", ref.group)
    with tempfile.TemporaryDirectory(prefix="sandboxverify-ipython-") as home:
        # IPython keeps its profile there: a directory of its own, removed afterwards
        os.environ["IPYTHONDIR"] = home
        interactive = import_application("IPython.core.interactiveshell", "ipython", ref.group)
        with captured():
            # the shell first: %load_ext imports the module in a running shell, and modules
            # written for it call get_ipython() as they import (ipython-memory-usage)
            shell = _shell(interactive)
            module = resolve(EntryPointRef(ref.name, ref.group, ref.module))
            shown: list[BaseException] = []
            _collect_tracebacks(shell, shown)
            before = _registered(shell)
            loaded = _load(shell, ref.module)
            result = shell.run_cell(CELL, store_history=False)
            added = [entry for entry in _registered(shell) if entry not in before]
    if loaded is not None:  # IPython's own words: "no load function", "already loaded"
        failure = ApplicationFailed(f"%load_ext {ref.module}: IPython said {loaded!r}")
        raise PluginLoadError("application", failure)
    error = result.error_before_exec or result.error_in_exec or (shown[0] if shown else None)
    if error is not None:
        where = f"a cell run after %load_ext {ref.module} (IPython showed the error)"
        raise PluginLoadError("exercise", error, where=where)
    registrations: list[dict[str, Any]] = [
        {"name": ref.name, "kind": "extension", "description": summary(module), "parameters": None}
    ]
    registrations += [
        {"name": name, "kind": kind, "description": None, "parameters": None}
        for kind, name in added
    ]
    return LoadedPlugin(ref=ref, tools=registrations, handlers={})


def _shell(interactive: Any) -> Any:
    try:
        config = importlib.import_module("traitlets.config").Config()
        config.HistoryManager.enabled = False
        return interactive.InteractiveShell.instance(config=config)
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("application", exc, where="IPython's InteractiveShell") from exc


def _collect_tracebacks(shell: Any, shown: list[BaseException]) -> None:
    """Keep each error the shell would show the user (its ``showtraceback``)."""
    show = shell.showtraceback

    def collected(*args: Any, **kwargs: Any) -> Any:
        error = sys.exc_info()[1]
        if error is not None:
            shown.append(error)
        return show(*args, **kwargs)

    shell.showtraceback = collected


def _load(shell: Any, module: str) -> str | None:
    """What ``%load_ext`` does: IPython's answer when it did not load (``None``: loaded)."""
    try:
        answer = shell.extension_manager.load_extension(module)
    except (Exception, SystemExit) as exc:
        raise PluginLoadError(
            "setup", exc, where=f"{module}.load_ipython_extension(ipython)"
        ) from exc
    return answer if isinstance(answer, str) else None


def _registered(shell: Any) -> list[tuple[str, str]]:
    """The shell's magics and event callbacks, as (kind, name)."""
    entries = [
        ("magic", f"%{'%' if kind == 'cell' else ''}{name}")
        for kind, magics in shell.magics_manager.magics.items()
        for name in magics
    ]
    entries += [
        ("callback", f"{event}: {getattr(callback, '__qualname__', repr(callback))}")
        for event, callbacks in shell.events.callbacks.items()
        for callback in callbacks
    ]
    return entries
