"""The stdlib-only runtime: plugin discovery, the hosts and the probe.

Everything under this package runs inside sandboxes on any supported interpreter (Python >= 3.9),
with nothing but the standard library. It never imports host-side modules of ``sandboxverify``;
it talks to the host side through JSON files.
"""

from __future__ import annotations

from sandboxverify.runtime._lazy import imported_on_first_use

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (~10 ms in every sandbox process)
TYPE_CHECKING = False

if TYPE_CHECKING:
    from sandboxverify.runtime._applications import application_names
    from sandboxverify.runtime._protocol import name_words
    from sandboxverify.runtime._registrations import PluginRegistrationError, Registry, ToolSpec
    from sandboxverify.runtime._schema import schema_from_signature
    from sandboxverify.runtime.hosts import EVENTS, PluginAPI

__all__ = [
    "EVENTS",
    "PROTOCOL",
    "EntryPointRef",
    "PluginAPI",
    "PluginRegistrationError",
    "Registry",
    "ToolSpec",
    "application_names",
    "imported_on_first_use",
    "live",
    "live_session_of",
    "name_words",
    "parse_entry_points",
    "record",
    "schema_from_signature",
    "server_ref",
    "smoke",
]

#: Imported on first use: every runtime process (and the command line, for the protocol) imports
#: this package, most of them never touch the plugin API, the harness or a recording.
_LAZY = {
    "EVENTS": "sandboxverify.runtime.hosts",
    "PluginAPI": "sandboxverify.runtime.hosts",
    "PROTOCOL": "sandboxverify.runtime._protocol",
    "EntryPointRef": "sandboxverify.runtime._protocol",
    "parse_entry_points": "sandboxverify.runtime._protocol",
    "name_words": "sandboxverify.runtime._protocol",
    "server_ref": "sandboxverify.runtime._protocol",
    "application_names": "sandboxverify.runtime._applications",
    "live": "sandboxverify.runtime._recording",
    "live_session_of": "sandboxverify.runtime._recording",
    "record": "sandboxverify.runtime._recording",
    "smoke": "sandboxverify.runtime._smoke",
    "PluginRegistrationError": "sandboxverify.runtime._registrations",
    "Registry": "sandboxverify.runtime._registrations",
    "ToolSpec": "sandboxverify.runtime._registrations",
    "schema_from_signature": "sandboxverify.runtime._schema",
}


__getattr__ = imported_on_first_use(globals(), _LAZY)
