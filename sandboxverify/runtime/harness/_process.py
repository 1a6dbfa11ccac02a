"""Process assertions: what was called, in which order, and what the user approved, over a
session's events or a recorded trace's (``Trace`` asserts without running anything again).

A name that is no tool of the session (or of the recorded run) is ``unknown_tool`` with a
did-you-mean: an assertion about a typo would hold for ``not_called`` and never for ``called``.
Everything else that does not hold is ``assertion_failed``, saying what did happen.
"""

from __future__ import annotations

import difflib
from typing import Any

from sandboxverify.runtime.harness._errors import HarnessError


class ProcessAssertions:
    """Mixed into what has a run to assert on: ``_calls`` (tool names, in order), ``_tools``
    (the names that exist), ``_questions`` (UI calls: method, args, answer), ``failed``."""

    _kind = "session"

    def _calls(self) -> list[str]:
        raise NotImplementedError

    def _tools(self) -> list[str]:
        raise NotImplementedError

    def _questions(self) -> list[tuple[str, list[Any], Any]]:
        raise NotImplementedError

    def failed(self, error: HarnessError) -> HarnessError:
        return error

    def _calls_made(self) -> str:
        return ", ".join(self._calls()) or "none"

    def assert_called(self, name: str, *, times: int | None = None) -> None:
        """``name`` was called at least once, or exactly ``times`` times (0: never)."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        if times is not None and (not isinstance(times, int) or times < 0):
            raise TypeError(f"assert_called(times=...) takes a count >= 0, got {times!r}")
        self.check_tool_name(name, f"assert_called({name!r})")
        count = self._calls().count(name)
        if (count == 0) if times is None else (count != times):
            wanted = f"{times} time(s)" if times is not None else "at least once"
            raise self.failed(
                HarnessError(
                    "assertion_failed",
                    f"expected {name!r} to be called {wanted}, "
                    f"it was called {count} time(s); calls: {self._calls_made()}",
                )
            )

    def assert_not_called(self, name: str) -> None:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        self.check_tool_name(name, f"assert_not_called({name!r})")
        count = self._calls().count(name)
        if count:
            raise self.failed(
                HarnessError(
                    "assertion_failed",
                    f"expected {name!r} not to be called, it "
                    f"was called {count} time(s); calls: {self._calls_made()}",
                )
            )

    def assert_called_before(self, first: str, second: str) -> None:
        """The first call of ``first`` comes before the first call of ``second``."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        where = f"assert_called_before({first!r}, {second!r})"
        if first == second:
            raise self.failed(
                HarnessError(
                    "assertion_failed",
                    f"{where} compares a tool with itself, which can never be before itself; "
                    "name two different tools",
                )
            )
        self.check_tool_name(first, where)
        self.check_tool_name(second, where)
        names = self._calls()
        for name in (first, second):
            if name not in names:
                raise self.failed(
                    HarnessError(
                        "assertion_failed",
                        f"expected {first!r} before {second!r}, "
                        f"but {name!r} was never called; calls: {self._calls_made()}",
                    )
                )
        if names.index(first) > names.index(second):
            raise self.failed(
                HarnessError(
                    "assertion_failed",
                    f"expected {first!r} before {second!r}, "
                    f"but {second!r} came first; calls: {self._calls_made()}",
                )
            )

    def check_tool_name(self, name: str, where: str) -> None:
        """An assertion about a tool no plugin registers (and no mock provides) would always
        hold for ``not_called`` and never for ``called``: either way a typo, so an error."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        known = self._tools()
        if name in known:
            return
        close = difflib.get_close_matches(str(name), known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise self.failed(
            HarnessError(
                "unknown_tool",
                f"{where}: {name!r} is no tool of this {self._kind}{hint}; tools: "
                f"{', '.join(known) or 'none'}",
            )
        )

    def assert_approved(self, label: str) -> None:
        """The user approved ``label``: a ``confirm`` with that title (or message) answered yes,
        or an MCP elicitation with that message accepted."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        asked = [
            (method, args, answer)
            for method, args, answer in self._questions()
            if method in ("confirm", "elicit")
        ]
        about = [(m, args, answer) for m, args, answer in asked if label in args[:2]]
        if any(_approval(method, answer) for method, _, answer in about):
            return
        if about:
            answers = ", ".join(repr(answer) for _, _, answer in about)
            problem = f"the user was asked, and did not approve it (answered {answers})"
        else:
            titles = [str(args[0]) for _, args, _ in asked if args]
            close = difflib.get_close_matches(label, titles, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problem = f"the user was never asked about it{hint}; asked: " + (
                ", ".join(repr(title) for title in titles) or "nothing"
            )
        raise self.failed(
            HarnessError("assertion_failed", f"expected {label!r} to be approved: {problem}")
        )


def _approval(method: str, answer: Any) -> bool:
    if method == "confirm":
        return answer is True
    return isinstance(answer, dict) and answer.get("action") == "accept"
