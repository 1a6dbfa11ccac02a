"""The stdlib-only runtime: plugin discovery, the hosts and the probe.

Everything under this package runs inside sandboxes on any supported interpreter (Python >= 3.9),
with nothing but the standard library. It never imports host-side modules of ``sandboxverify``;
it talks to the host side through JSON files.
"""

from __future__ import annotations

from sandboxverify.runtime._registry import PluginRegistrationError, Registry, ToolSpec
from sandboxverify.runtime._schema import schema_from_signature
from sandboxverify.runtime.hosts._native import EVENTS, PluginAPI

__all__ = [
    "EVENTS",
    "PluginAPI",
    "PluginRegistrationError",
    "Registry",
    "ToolSpec",
    "schema_from_signature",
]
