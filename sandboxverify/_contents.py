"""Stages ``imports`` and ``scripts``: what the wheel ships, checked in the sandbox.
(Stub: being built.)"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sandboxverify._artifacts import Artifact
from sandboxverify._probing import ProbeSettings
from sandboxverify._report import Failure, PluginRecord
from sandboxverify._sandbox import Sandbox
from sandboxverify.runtime._protocol import EntryPointRef

#: entry-point groups whose entries become executables in the sandbox's bin/
SCRIPT_GROUPS = ("console_scripts", "gui_scripts")


@dataclass(frozen=True)
class ImportsOutcome:
    failures: tuple[Failure, ...]
    #: the ``runs[].imports`` record
    record: dict[str, Any]
    summary: str


@dataclass(frozen=True)
class ScriptsOutcome:
    failures: tuple[Failure, ...]
    #: the ``runs[].scripts`` records, one per console script
    records: tuple[dict[str, Any], ...]
    summary: str


def check_imports(
    sandbox: Sandbox,
    *,
    wheel: Artifact,
    plugins: Sequence[PluginRecord],
    skip: Sequence[str],
    allow_fail: Sequence[str],
    settings: ProbeSettings,
) -> ImportsOutcome:
    """Import every module ``wheel`` ships, in one process in the sandbox."""
    return ImportsOutcome((), {}, "not built yet")


def check_scripts(
    sandbox: Sandbox,
    scripts: Sequence[EntryPointRef],
    *,
    skip_help: Sequence[str],
    servers: Sequence[str],
    settings: ProbeSettings,
) -> ScriptsOutcome:
    """Each console script is installed in ``bin/`` and its ``--help`` exits 0."""
    return ScriptsOutcome((), (), "not built yet")
