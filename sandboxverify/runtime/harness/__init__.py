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
from sandboxverify.runtime.harness._loop import ToolCallEvent, ToolResultEvent
from sandboxverify.runtime.harness._mocks import ENVIRONMENTAL_TOOLS
from sandboxverify.runtime.harness._replay import replay
from sandboxverify.runtime.harness._session import (
    PlaybookState,
    TestSession,
    create_test_session,
)
from sandboxverify.runtime.harness._trace import Trace, load_trace, write_trace

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
