"""The harness core (stdlib only): a scripted model drives a real agent loop.

Plugins' tools run for real; environmental tools (bash, read, write, edit) and UI prompts are
mocked; every divergence between the script and what happened is a :class:`HarnessError` with a
stable code. The same engine runs in a pytest process and inside every sandbox.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandboxverify.runtime._lazy import imported_on_first_use

if TYPE_CHECKING:
    from sandboxverify.runtime._results import ToolResult
    from sandboxverify.runtime.harness._actions import (
        Call,
        Parallel,
        Say,
        Turn,
        call,
        call_parallel,
        say,
        when,
    )
    from sandboxverify.runtime.harness._channel import END as END
    from sandboxverify.runtime.harness._channel import Channel as Channel
    from sandboxverify.runtime.harness._channel import ChannelBroken as ChannelBroken
    from sandboxverify.runtime.harness._compare import GENERATED as GENERATED
    from sandboxverify.runtime.harness._compare import normalizer as normalizer
    from sandboxverify.runtime.harness._contract import divergences as divergences
    from sandboxverify.runtime.harness._declarative import (
        run_spec,
        session_from_spec,
        turns_from_spec,
    )
    from sandboxverify.runtime.harness._declarative import spec_plugins as spec_plugins
    from sandboxverify.runtime.harness._errors import CODES, HarnessError
    from sandboxverify.runtime.harness._events import (
        Event,
        Events,
        Message,
        ToolCallRecord,
        ToolResultRecord,
        UICallRecord,
    )
    from sandboxverify.runtime.harness._guards import HardExit as HardExit
    from sandboxverify.runtime.harness._guards import ending as ending
    from sandboxverify.runtime.harness._guards import watching_exits as watching_exits
    from sandboxverify.runtime.harness._live import DEFAULT_MAX_STEPS as DEFAULT_MAX_STEPS
    from sandboxverify.runtime.harness._live import LiveDriver as LiveDriver
    from sandboxverify.runtime.harness._live import LiveModel as LiveModel
    from sandboxverify.runtime.harness._live import ModelUnavailable as ModelUnavailable
    from sandboxverify.runtime.harness._live import offered_tools as offered_tools
    from sandboxverify.runtime.harness._live import open_model as open_model
    from sandboxverify.runtime.harness._loop import ToolCallEvent, ToolResultEvent
    from sandboxverify.runtime.harness._mocks import ENVIRONMENTAL_TOOLS
    from sandboxverify.runtime.harness._plugins import DIST_ENV as DIST_ENV
    from sandboxverify.runtime.harness._plugins import HOST_ENV as HOST_ENV
    from sandboxverify.runtime.harness._plugins import project_name as project_name
    from sandboxverify.runtime.harness._recorded_turns import live_session as live_session
    from sandboxverify.runtime.harness._recorded_turns import recorded_turns as recorded_turns
    from sandboxverify.runtime.harness._replay import replay
    from sandboxverify.runtime.harness._requests import request_hash as request_hash
    from sandboxverify.runtime.harness._requests import settings_hash as settings_hash
    from sandboxverify.runtime.harness._requests import tools_hash as tools_hash
    from sandboxverify.runtime.harness._secrets import REDACTED as REDACTED
    from sandboxverify.runtime.harness._secrets import redact as redact
    from sandboxverify.runtime.harness._secrets import secret_values as secret_values
    from sandboxverify.runtime.harness._session import SESSION_OBSERVERS as SESSION_OBSERVERS
    from sandboxverify.runtime.harness._session import (
        PlaybookState,
        TestSession,
        create_test_session,
    )
    from sandboxverify.runtime.harness._snapshot import request_updates as request_updates
    from sandboxverify.runtime.harness._trace import Trace, load_trace, write_trace
    from sandboxverify.runtime.harness._transport import Spawned as Spawned
    from sandboxverify.runtime.harness._transport import absolute as absolute
    from sandboxverify.runtime.harness._transport import end_process as end_process
    from sandboxverify.runtime.harness._transport import exit_status as exit_status
    from sandboxverify.runtime.harness._transport import serve_judge as serve_judge
    from sandboxverify.runtime.harness._transport import spawn as spawn

# The public harness API; what is imported ``as`` itself above is not in it: the runtime's smoke
# and record actions, the command line and the pytest plugin use those.
__all__ = [
    "CODES",
    "ENVIRONMENTAL_TOOLS",
    "Call",
    "Event",
    "Events",
    "HarnessError",
    "Message",
    "Parallel",
    "PlaybookState",
    "Say",
    "TestSession",
    "ToolCallEvent",
    "ToolCallRecord",
    "ToolResult",
    "ToolResultEvent",
    "ToolResultRecord",
    "Trace",
    "Turn",
    "UICallRecord",
    "call",
    "call_parallel",
    "create_test_session",
    "load_trace",
    "replay",
    "run_spec",
    "say",
    "session_from_spec",
    "turns_from_spec",
    "when",
    "write_trace",
]

#: where each name lives, imported on first use: the process that holds a session's plugins
#: imports the harness too, and must not pay for the session, playbooks, traces or llm
_LAZY = {
    "GENERATED": "sandboxverify.runtime.harness._compare",
    "normalizer": "sandboxverify.runtime.harness._compare",
    "offered_tools": "sandboxverify.runtime.harness._live",
    "request_hash": "sandboxverify.runtime.harness._requests",
    "settings_hash": "sandboxverify.runtime.harness._requests",
    "tools_hash": "sandboxverify.runtime.harness._requests",
    "spec_plugins": "sandboxverify.runtime.harness._declarative",
    "END": "sandboxverify.runtime.harness._channel",
    "Channel": "sandboxverify.runtime.harness._channel",
    "ChannelBroken": "sandboxverify.runtime.harness._channel",
    "Spawned": "sandboxverify.runtime.harness._transport",
    "absolute": "sandboxverify.runtime.harness._transport",
    "end_process": "sandboxverify.runtime.harness._transport",
    "exit_status": "sandboxverify.runtime.harness._transport",
    "serve_judge": "sandboxverify.runtime.harness._transport",
    "spawn": "sandboxverify.runtime.harness._transport",
    "ToolResult": "sandboxverify.runtime._results",
    "Call": "sandboxverify.runtime.harness._actions",
    "Parallel": "sandboxverify.runtime.harness._actions",
    "Say": "sandboxverify.runtime.harness._actions",
    "Turn": "sandboxverify.runtime.harness._actions",
    "call": "sandboxverify.runtime.harness._actions",
    "call_parallel": "sandboxverify.runtime.harness._actions",
    "say": "sandboxverify.runtime.harness._actions",
    "when": "sandboxverify.runtime.harness._actions",
    "divergences": "sandboxverify.runtime.harness._contract",
    "run_spec": "sandboxverify.runtime.harness._declarative",
    "session_from_spec": "sandboxverify.runtime.harness._declarative",
    "turns_from_spec": "sandboxverify.runtime.harness._declarative",
    "CODES": "sandboxverify.runtime.harness._errors",
    "HarnessError": "sandboxverify.runtime.harness._errors",
    "Event": "sandboxverify.runtime.harness._events",
    "Events": "sandboxverify.runtime.harness._events",
    "Message": "sandboxverify.runtime.harness._events",
    "ToolCallRecord": "sandboxverify.runtime.harness._events",
    "ToolResultRecord": "sandboxverify.runtime.harness._events",
    "UICallRecord": "sandboxverify.runtime.harness._events",
    "HardExit": "sandboxverify.runtime.harness._guards",
    "ending": "sandboxverify.runtime.harness._guards",
    "watching_exits": "sandboxverify.runtime.harness._guards",
    "DEFAULT_MAX_STEPS": "sandboxverify.runtime.harness._live",
    "LiveDriver": "sandboxverify.runtime.harness._live",
    "LiveModel": "sandboxverify.runtime.harness._live",
    "ModelUnavailable": "sandboxverify.runtime.harness._live",
    "open_model": "sandboxverify.runtime.harness._live",
    "redact": "sandboxverify.runtime.harness._secrets",
    "REDACTED": "sandboxverify.runtime.harness._secrets",
    "secret_values": "sandboxverify.runtime.harness._secrets",
    "ToolCallEvent": "sandboxverify.runtime.harness._loop",
    "ToolResultEvent": "sandboxverify.runtime.harness._loop",
    "ENVIRONMENTAL_TOOLS": "sandboxverify.runtime.harness._mocks",
    "DIST_ENV": "sandboxverify.runtime.harness._plugins",
    "HOST_ENV": "sandboxverify.runtime.harness._plugins",
    "project_name": "sandboxverify.runtime.harness._plugins",
    "live_session": "sandboxverify.runtime.harness._recorded_turns",
    "recorded_turns": "sandboxverify.runtime.harness._recorded_turns",
    "replay": "sandboxverify.runtime.harness._replay",
    "SESSION_OBSERVERS": "sandboxverify.runtime.harness._session",
    "PlaybookState": "sandboxverify.runtime.harness._session",
    "TestSession": "sandboxverify.runtime.harness._session",
    "create_test_session": "sandboxverify.runtime.harness._session",
    "request_updates": "sandboxverify.runtime.harness._snapshot",
    "Trace": "sandboxverify.runtime.harness._trace",
    "load_trace": "sandboxverify.runtime.harness._trace",
    "write_trace": "sandboxverify.runtime.harness._trace",
}


__getattr__ = imported_on_first_use(globals(), _LAZY)
