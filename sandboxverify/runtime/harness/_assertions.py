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

from sandboxverify.runtime.harness import _snapshot
from sandboxverify.runtime.harness._actions import Call
from sandboxverify.runtime.harness._errors import HarnessError, Step, short
from sandboxverify.runtime.harness._events import Events, ToolResultRecord


class SessionAssertions:
    """The assertions of a session, on the events it records; mixed into ``TestSession``."""

    events: Events
    auto_assert: bool
    _snapshot_dir: Path | None
    _update_snapshots: bool | None
    _snapshots_taken: int

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

    # -- process assertions ----------------------------------------------------------------
    def assert_called(self, name: str, *, times: int | None = None) -> None:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        count = len(self.events.tool_calls_for(name))
        if count == 0 or (times is not None and count != times):
            wanted = f"{times} time(s)" if times is not None else "at least once"
            raise HarnessError(
                "assertion_failed",
                f"expected {name!r} to be called {wanted}, "
                f"it was called {count} time(s); calls: {self._calls_made()}",
            )

    def assert_not_called(self, name: str) -> None:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        count = len(self.events.tool_calls_for(name))
        if count:
            raise HarnessError(
                "assertion_failed",
                f"expected {name!r} not to be called, it "
                f"was called {count} time(s); calls: {self._calls_made()}",
            )

    def assert_called_before(self, first: str, second: str) -> None:
        """The first call of ``first`` comes before the first call of ``second``."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        names = [record.tool_name for record in self.events.tool_calls]
        for name in (first, second):
            if name not in names:
                raise HarnessError(
                    "assertion_failed",
                    f"expected {first!r} before {second!r}, "
                    f"but {name!r} was never called; calls: {self._calls_made()}",
                )
        if names.index(first) > names.index(second):
            raise HarnessError(
                "assertion_failed",
                f"expected {first!r} before {second!r}, "
                f"but {second!r} came first; calls: {self._calls_made()}",
            )

    def _calls_made(self) -> str:
        return ", ".join(record.tool_name for record in self.events.tool_calls) or "none"

    # -- snapshots -------------------------------------------------------------------------
    def assert_snapshot(self, value: Any, name: str | None = None) -> None:
        """Compare ``value`` (as JSON) with its stored snapshot; the first run stores it."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        self._snapshots_taken += 1
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
            raise HarnessError(
                "snapshot_unlocated",
                "assert_snapshot() does not know where snapshots live: call it under pytest "
                "(they go next to the test file) or pass snapshot_dir=... to create_test_session",
            )
        path = _snapshot.snapshot_path(directory, test_id, self._snapshots_taken, name)
        update = _snapshot.update_requested(env, bool(self._update_snapshots))
        try:
            _snapshot.assert_snapshot(value, path, update=update, ci=_snapshot.in_ci(env))
        except AssertionError as exc:
            raise HarnessError("snapshot_mismatch", str(exc)) from None


def _details_traceback(record: ToolResultRecord) -> str | None:
    details = record.details
    if isinstance(details, Mapping) and isinstance(details.get("traceback"), str):
        return str(details["traceback"])
    return None
