"""The harness core (stdlib only): a scripted model drives a real agent loop.

Plugins' tools run for real; environmental tools (bash, read, write, edit) and UI prompts are
mocked; every divergence between the script and what happened is a :class:`HarnessError` with a
stable code. The same engine runs in a pytest process and inside every sandbox.
"""

from __future__ import annotations

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
from sandboxverify.runtime.harness._contract import divergences as divergences
from sandboxverify.runtime.harness._declarative import run_spec, session_from_spec, turns_from_spec
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
from sandboxverify.runtime.harness._live import open_model as open_model
from sandboxverify.runtime.harness._live import redact as redact
from sandboxverify.runtime.harness._loop import ToolCallEvent, ToolResultEvent
from sandboxverify.runtime.harness._mocks import ENVIRONMENTAL_TOOLS
from sandboxverify.runtime.harness._plugins import DIST_ENV as DIST_ENV
from sandboxverify.runtime.harness._plugins import HOST_ENV as HOST_ENV
from sandboxverify.runtime.harness._plugins import project_name as project_name
from sandboxverify.runtime.harness._recorded_turns import live_session as live_session
from sandboxverify.runtime.harness._recorded_turns import recorded_turns as recorded_turns
from sandboxverify.runtime.harness._replay import replay
from sandboxverify.runtime.harness._session import SESSION_OBSERVERS as SESSION_OBSERVERS
from sandboxverify.runtime.harness._session import (
    PlaybookState,
    TestSession,
    create_test_session,
)
from sandboxverify.runtime.harness._snapshot import request_updates as request_updates
from sandboxverify.runtime.harness._trace import Trace, load_trace, write_trace

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
