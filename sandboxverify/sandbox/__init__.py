"""Stages ``venv`` and ``install``, and process control: the workspace, interpreters,
environments from allowlists, the installers, and the one subprocess helper.

Imports report only (and the stdlib-only runtime protocol).
"""

from __future__ import annotations

from sandboxverify.sandbox._bounds import BoundExceeded, loads_bounded, read_bounded, read_json
from sandboxverify.sandbox._bwrap import probe_ahead
from sandboxverify.sandbox._command_server import CommandServer
from sandboxverify.sandbox._context import SUBPROCESSES, RunContext, Runner
from sandboxverify.sandbox._environment import backend_env, build_inputs, installer_env, plugin_env
from sandboxverify.sandbox._integrity import PACKAGE, Fingerprint, changes, fingerprint
from sandboxverify.sandbox._interpreters import (
    SELECTORS,
    Interpreter,
    floor_note,
    resolve_all,
    select_interpreters,
)
from sandboxverify.sandbox._isolation import (
    HINT,
    ISOLATION_CHOICES,
    PROCESS_RISKS,
    Confined,
    Confinement,
    Isolation,
    IsolationChoice,
    NetworkName,
    choose_isolation,
    interpreter_roots,
    unfiltered_reason,
)
from sandboxverify.sandbox._subprocess import (
    Command,
    Launch,
    Launcher,
    Outcome,
    format_argv,
    parallel_map,
    read_head,
    shutting_down,
    supervised,
)
from sandboxverify.sandbox._toolchain import (
    INSTALLER_CHOICES,
    IndexOptions,
    InstallerChoice,
    choose_toolchain,
    direct_references,
)
from sandboxverify.sandbox._venv import (
    NO_WHEEL_HINT,
    Sandbox,
    create_sandbox,
    fetch_alone,
    install_wheel,
    learn_interpreter,
    without_wheel,
)
from sandboxverify.sandbox._workspace import SandboxPaths, Workspace

__all__ = [
    "HINT",
    "INSTALLER_CHOICES",
    "ISOLATION_CHOICES",
    "NO_WHEEL_HINT",
    "PACKAGE",
    "PROCESS_RISKS",
    "SELECTORS",
    "SUBPROCESSES",
    "BoundExceeded",
    "Command",
    "CommandServer",
    "Confined",
    "Confinement",
    "Fingerprint",
    "IndexOptions",
    "InstallerChoice",
    "Interpreter",
    "Isolation",
    "IsolationChoice",
    "Launch",
    "Launcher",
    "NetworkName",
    "Outcome",
    "RunContext",
    "Runner",
    "Sandbox",
    "SandboxPaths",
    "Workspace",
    "backend_env",
    "build_inputs",
    "changes",
    "choose_isolation",
    "choose_toolchain",
    "create_sandbox",
    "direct_references",
    "fetch_alone",
    "fingerprint",
    "floor_note",
    "format_argv",
    "install_wheel",
    "installer_env",
    "interpreter_roots",
    "learn_interpreter",
    "loads_bounded",
    "parallel_map",
    "plugin_env",
    "probe_ahead",
    "read_bounded",
    "read_head",
    "read_json",
    "resolve_all",
    "select_interpreters",
    "shutting_down",
    "supervised",
    "unfiltered_reason",
    "without_wheel",
]
