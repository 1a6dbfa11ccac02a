"""What a session asserts: each call's outcome against its action, and the tests' own assertions.

While a turn plays, every tool result is checked against what the call declared
(``expect_error``): an error nobody expected (``tool_error``), an error that does not match
(``expect_mismatch``), a success where an error was expected (``unexpected_success``). After the
run, a test asks about the process (``assert_called``, ``assert_not_called``,
``assert_called_before``: ``assertion_failed``) or compares a value with its stored snapshot
(``assert_snapshot``: ``snapshot_mismatch``, ``snapshot_unlocated``). :class:`SessionAssertions`
holds them all as methods of :class:`~sandboxverify.harness.TestSession`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.harness import _snapshot
from sandboxverify.runtime.harness._actions import Call
from sandboxverify.runtime.harness._errors import HarnessError, Step, short
from sandboxverify.runtime.harness._events import Events, ToolResultRecord
from sandboxverify.runtime.harness._loop import AgentLoop
from sandboxverify.runtime.harness._mocks import ENVIRONMENTAL_TOOLS, MockTools
from sandboxverify.runtime.harness._process import ProcessAssertions
from sandboxverify.runtime.harness._ui import MockUI


class SessionAssertions(ProcessAssertions):
    """The assertions of a session, on the events it records; mixed into ``TestSession``."""

    events: Events
    auto_assert: bool
    registry: Registry
    loop: AgentLoop
    mocks: MockTools
    ui: MockUI
    failure: HarnessError | None
    _snapshot_dir: Path | None
    _update_snapshots: bool | None

    # -- what the process assertions read ------------------------------------------------
    def _calls(self) -> list[str]:
        return [record.tool_name for record in self.events.tool_calls]

    def _tools(self) -> list[str]:
        return sorted(set(self.registry.tools) | set(ENVIRONMENTAL_TOOLS) | set(self.mocks.names))

    def _questions(self) -> list[tuple[str, list[Any], Any]]:
        return [
            (record.method, list(record.args), record.return_value) for record in self.events.ui
        ]

    # -- the script's expectations ---------------------------------------------------------
    def _check_outcome(self, call: Call, record: ToolResultRecord, step: Step) -> None:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        expected = call.expect_error
        if record.is_error:
            if expected is False:
                if not self.auto_assert:
                    return
                cause = "was blocked" if record.blocked else "returned an error"
                source = "its mock" if record.mocked else repr(call.tool)
                raise step.error(
                    "tool_error",
                    f"{source} {cause}: {record.text}; declare expect_error=True if the error "
                    "is what you test",
                    details=_details_traceback(record),
                )
            if isinstance(expected, str) and not re.search(expected, record.text):
                raise step.error(
                    "expect_mismatch",
                    f"expected an error matching {expected!r}, got: {record.text!r}",
                )
        elif expected is not False:
            raise step.error(
                "unexpected_success",
                f"expected an error, but {call.tool!r} succeeded with: {short(record.text, 200)}",
            )

    def assert_mocks_used(self) -> None:
        """Every entry of a list mock and every listed UI answer was used: an answer prepared
        for a call that never came is a step of the script that did not happen. One exception:
        an environmental tool never called at all, whose mock is the environment's standing
        answer (as in the design example, where ``read`` is mocked and never read)."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        unused = [
            f"{section} {key!r}: {used} of {total} entries used"
            for section, values in (("mock_tools", self.mocks.values), ("mock_ui", self.ui.answers))
            for key, used, total in values.unused()
            if not (section == "mock_tools" and used == 0 and key in ENVIRONMENTAL_TOOLS)
        ]
        if unused:
            raise self.failed(
                HarnessError(
                    "mocks_unused",
                    f"prepared answers were never asked for ({'; '.join(unused)}): the calls "
                    "they were for did not happen; remove them or find out why the calls did not "
                    "come (a list mock serves one call per entry)",
                )
            )

    def assert_plugin_code_ran(self) -> None:
        """A smoke run exists to exercise the plugins: one that called no tool
        (``nothing_called``), or whose every call was mocked or blocked without a plugin's
        handler seeing it (``no_plugin_code``), proves nothing."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        if not self.events.tool_calls:
            raise self.failed(
                HarnessError(
                    "nothing_called",
                    "the playbook ran but called no tool: a smoke run that exercises nothing "
                    "proves nothing; add call(...) actions",
                )
            )
        if not self.loop.plugin_ran:
            mocked = sorted({record.tool_name for record in self.events.tool_results})
            tools = ", ".join(sorted(self.registry.tools)) or "none"
            raise self.failed(
                HarnessError(
                    "no_plugin_code",
                    "no plugin code ran: every call was answered by a mock or blocked "
                    f"({', '.join(mocked) or 'no result'}), so the run proves nothing about the "
                    f"plugins; call a tool a plugin registers ({tools})",
                )
            )

    def failed(self, error: HarnessError) -> HarnessError:
        """Remember ``error`` as the session's failure (the first one stays) and return it: a
        smoke run fails on it even if a script catches the exception."""
        if self.failure is None:
            self.failure = error
        return error

    # -- snapshots -------------------------------------------------------------------------
    def assert_snapshot(self, value: Any, name: str | None = None) -> None:
        """Compare ``value`` (as JSON) with its stored snapshot; the first run stores it.

        Unnamed snapshots are numbered per test (``001.json``, ``002.json``...), across every
        session the test creates."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        env = os.environ
        located = _snapshot.test_id_from_pytest(env)
        if self._snapshot_dir is not None:
            directory = self._snapshot_dir
            test_id = located[1] if located else "session"
        elif located is not None:
            directory = Path(located[0]).resolve().parent / "__snapshots__" / Path(located[0]).stem
            test_id = located[1]
        else:
            # Stored next to nothing anyone keeps, it would be "created" on every run and never
            # compared: a snapshot that always passes. Refuse instead.
            raise self.failed(
                HarnessError(
                    "snapshot_unlocated",
                    "assert_snapshot() does not know where snapshots live: call it under pytest "
                    "(they go next to the test file) or pass snapshot_dir=... to "
                    "create_test_session",
                )
            )
        number = _snapshot.next_number(directory, test_id)
        path = _snapshot.snapshot_path(directory, test_id, number, name)
        update = _snapshot.update_requested(env, bool(self._update_snapshots))
        try:
            _snapshot.assert_snapshot(
                value,
                path,
                update=update,
                ci=_snapshot.in_ci(env),
                read_only=_snapshot.read_only(env),
            )
        except TypeError as exc:
            raise self.failed(HarnessError("snapshot_invalid", f"{path}: {exc}")) from None
        except AssertionError as exc:
            raise self.failed(HarnessError("snapshot_mismatch", str(exc))) from None


def _details_traceback(record: ToolResultRecord) -> str | None:
    details = record.details
    if isinstance(details, Mapping) and isinstance(details.get("traceback"), str):
        return str(details["traceback"])
    return None
