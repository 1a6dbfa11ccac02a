"""Where a session's plugins live: loaded into this process, or into a process of their own.

In-process is the pytest API's default: authors may reach into their plugin's modules. A
process of their own (``isolate=True``, ``SANDBOXVERIFY_ISOLATE_PLUGINS=1``, and always under
``check --smoke`` and ``run``) keeps the session's judgement out of the reach of plugin code,
and starts every session from fresh plugin modules.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Protocol

from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.harness._errors import HarnessError
from sandboxverify.runtime.harness._loop import LocalPlugins, Plugins
from sandboxverify.runtime.harness._mocks import MockTools
from sandboxverify.runtime.harness._plugins import (
    LoadFailure,
    PluginSpec,
    default_group,
    load_plugins,
)
from sandboxverify.runtime.harness._remote import RemotePlugins, plugin_reference
from sandboxverify.runtime.harness._transport import Brokered, Spawned, under_a_judge
from sandboxverify.runtime.harness._ui import MockUI
from sandboxverify.runtime.hosts import HostContext

#: seconds a call (and loading the plugins, at the least) may take unless told otherwise
DEFAULT_CALL_TIMEOUT = 60.0


class TestSession(Protocol):
    """What loading the plugins reads and sets of a session."""

    host: str
    cwd: str
    has_ui: bool
    auto_assert: bool
    mocks: MockTools
    ui: MockUI
    registry: Registry
    plugins: list[str]
    load_errors: list[LoadFailure]

    def _sample(self, params: dict[str, Any]) -> dict[str, Any]: ...


def load_plugin_side(
    session: TestSession,
    plugins: Sequence[PluginSpec] | None,
    *,
    dist: str | None,
    group: str | None,
    call_timeout: float | None,
    isolate: bool,
) -> Plugins:
    """The session's plugins, loaded the way the host's application loads them: here, or in a
    process of their own (``isolate``); sets ``session.registry``, ``plugins`` and
    ``load_errors``. With ``auto_assert``, a plugin that fails to load fails the session."""
    group = group or default_group(session.host)
    timeout = call_timeout or DEFAULT_CALL_TIMEOUT
    side: Plugins
    if isolate:
        side = _remote(session, plugins, dist=dist, group=group, timeout=timeout)
    else:
        session.plugins, session.load_errors = load_plugins(
            plugins,
            dist=dist,
            group=group,
            registry=session.registry,
            host=session.host,
            context=HostContext(timeout=timeout, elicit=session.ui.elicit, sample=session._sample),
        )
        side = LocalPlugins(session.registry, session.ui, session.cwd, has_ui=session.has_ui)
    if session.load_errors and session.auto_assert:
        first = session.load_errors[0]
        side.close()
        raise HarnessError(
            "plugin_load_failed",
            "; ".join(failure.describe() for failure in session.load_errors),
            details=first.traceback,
        )
    return side


def _remote(
    session: TestSession,
    plugins: Sequence[PluginSpec] | None,
    *,
    dist: str | None,
    group: str,
    timeout: float,
) -> RemotePlugins:
    options: dict[str, Any] = {
        "mock_tools": sorted(session.mocks.names),
        "auto_assert": session.auto_assert,
    }
    remote = RemotePlugins(
        Brokered(options) if under_a_judge() else Spawned(),
        ui=session.ui,
        sample=session._sample,
    )
    session.registry = remote.registry
    references = (
        None if plugins is None else [plugin_reference(spec, os.getcwd()) for spec in plugins]
    )
    try:
        session.plugins, session.load_errors = remote.load(
            {
                "plugins": None if references is None else [ref for ref, _ in references],
                "names": dict(references or ()),
                "dist": dist,
                "group": group,
                "host": session.host,
                "timeout": timeout,
                "cwd": session.cwd,
                "has_ui": session.has_ui,
            },
            max(timeout, DEFAULT_CALL_TIMEOUT),  # loading may take longer than a call
        )
    except BaseException:
        remote.close()
        raise
    return remote
