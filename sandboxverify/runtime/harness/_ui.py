"""The mocked user interface a tool reaches through ``ctx.ui``, and the context itself.

Interactive methods answer from ``mock_ui`` (a value, a callable, or a list consumed in order),
with defaults when unset: ``confirm`` True, ``select`` the first item, ``input``/``editor`` "".
An answer that could not come from a real user (a ``select`` value that is not an item, an index
out of range, a non-bool ``confirm``) is a hard failure, not a silent fallback. Every call is
recorded with its arguments and the answer given.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any, Callable, NoReturn

from sandboxverify.runtime.harness._errors import HarnessError
from sandboxverify.runtime.harness._guards import ending
from sandboxverify.runtime.harness._mocks import StatefulValues
from sandboxverify.runtime.harness._validate import describe, validate

INTERACTIVE = ("confirm", "select", "input", "editor", "elicit")
#: how a user answers an MCP server's ``elicitation/create``
ELICIT_ACTIONS = ("accept", "decline", "cancel")
FIRE_AND_FORGET = ("notify", "set_status", "set_widget")
METHODS = INTERACTIVE + FIRE_AND_FORGET

#: (method, args, answer) -> None; the session records it with the current location
Recorder = Callable[[str, list[Any], Any], None]


class MockUI:
    def __init__(
        self, config: Mapping[str, Any] | None, record: Recorder, *, has_ui: bool = True
    ) -> None:
        self._answers = StatefulValues(config, "mock_ui", "mock_ui")
        self._record = record
        #: False: no user is there (``ctx.has_ui`` is False); a tool that asks anyway fails
        self.has_ui = has_ui
        #: a failure raised inside plugin code, kept in case the plugin swallows it
        self.failure: HarnessError | None = None
        self._where = "a UI call"
        self._answers.check_known(METHODS, "UI method")
        for method in self._answers.keys:
            _check_answers(method, self._answers.entries(method))

    @property
    def answers(self) -> StatefulValues:
        return self._answers

    def located(self, where: str) -> None:
        self._where = where

    # interactive -------------------------------------------------------------------------
    def confirm(self, title: str, message: str = "") -> bool:
        answer = self._answer("confirm", [title, message], True)
        if not isinstance(answer, bool):
            self._fail(f"confirm must answer True or False, the mock answered {answer!r}")
        return bool(self._recorded("confirm", [title, message], answer))

    def select(self, title: str, items: Sequence[str]) -> str | None:
        options = list(items)
        answer = self._answer("select", [title, options], options[0] if options else None)
        if isinstance(answer, bool) or (answer is not None and not isinstance(answer, (int, str))):
            self._fail(f"select must answer an index, an item or None, got {answer!r}")
        if isinstance(answer, int):
            if not 0 <= answer < len(options):
                self._fail(f"select({title!r}): index {answer} is out of range for {options!r}")
            answer = options[answer]
        elif answer is not None and answer not in options:
            close = difflib.get_close_matches(str(answer), [str(o) for o in options], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            self._fail(f"select({title!r}): {answer!r} is not one of {options!r}{hint}")
        result: str | None = self._recorded("select", [title, options], answer)
        return result

    def input(self, title: str, placeholder: str | None = None) -> str | None:
        return self._text("input", [title, placeholder])

    def editor(self, title: str, prefilled: str | None = None) -> str | None:
        return self._text("editor", [title, prefilled])

    def elicit(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """An MCP server asks the user for input (``elicitation/create``). The mock answers
        ``"accept"``/``"decline"``/``"cancel"``, the content to accept (a dict), or a full
        ``{"action": ..., "content": {...}}``; unmocked, the user declines. Accepted content
        must fit the server's ``requestedSchema``."""
        message = str(params.get("message", ""))
        schema = params.get("requestedSchema")
        answer = self._answer("elicit", [message, schema], "decline")
        if isinstance(answer, str) and answer in ELICIT_ACTIONS:
            answer = {"action": answer}
        elif isinstance(answer, Mapping) and "action" not in answer:
            answer = {"action": "accept", "content": dict(answer)}
        if not isinstance(answer, Mapping) or answer.get("action") not in ELICIT_ACTIONS:
            self._fail(
                "elicit must answer 'accept', 'decline', 'cancel', the content to accept (a "
                f"dict) or {{'action': ..., 'content': {{...}}}}, the mock answered {answer!r}"
            )
        result = dict(answer)
        if result["action"] == "accept":
            content = result.setdefault("content", {})
            if not isinstance(content, Mapping):
                self._fail(f"elicit: accepted content must be a dict, got {content!r}")
            if isinstance(schema, Mapping):
                violations = validate(dict(content), dict(schema))
                if violations:
                    self._fail(
                        f"elicit({message!r}): the answer {dict(content)!r} does not fit the "
                        f"server's requested schema: {describe(violations)}"
                    )
        else:
            result.pop("content", None)
        return dict(self._recorded("elicit", [message, schema], result))

    # fire and forget ---------------------------------------------------------------------
    def notify(self, message: str, level: str = "info") -> None:
        self._record("notify", [message, level], None)

    def set_status(self, key: str, value: Any) -> None:
        self._record("set_status", [key, value], None)

    def set_widget(self, key: str, lines: Any) -> None:
        self._record("set_widget", [key, lines], None)

    # -------------------------------------------------------------------------------------
    def _text(self, method: str, args: list[Any]) -> str | None:
        answer = self._answer(method, args, "")
        if answer is not None and not isinstance(answer, str):
            self._fail(f"{method} must answer a string or None, the mock answered {answer!r}")
        result: str | None = self._recorded(method, args, answer)
        return result

    def _answer(self, method: str, args: list[Any], default: Any) -> Any:
        if not self.has_ui and method != "elicit":
            self._fail(
                f"the tool asked {method}({', '.join(repr(arg) for arg in args[:1])}) although the "
                "session has no UI (ctx.has_ui is False); a tool must check ctx.has_ui before "
                "asking the user"
            )
        if method not in self._answers:
            return default
        try:
            value = self._answers.take(method, self._where)
        except HarnessError as exc:
            self._fail(exc.message, code=exc.code, located=False)
        if callable(value):
            try:
                return value(*args)
            except HarnessError:
                raise
            except Exception as exc:
                self._fail(f"the mock_ui {method!r} callable raised {type(exc).__name__}: {exc}")
            except BaseException as exc:  # sys.exit, KeyboardInterrupt: never the user's answer
                self._fail(f"the mock_ui {method!r} callable {ending(exc)}", code="aborted")
        return value

    def _recorded(self, method: str, args: list[Any], answer: Any) -> Any:
        self._record(method, args, answer)
        return answer

    def _fail(self, message: str, code: str = "ui_invalid", *, located: bool = True) -> NoReturn:
        error = HarnessError(code, f"{self._where}: {message}" if located else message)
        if self.failure is None:
            self.failure = error
        raise error

    def take_failure(self) -> HarnessError | None:
        failure, self.failure = self.failure, None
        return failure


def _check_answers(method: str, entries: list[Any]) -> None:
    if method in FIRE_AND_FORGET:
        if entries != ["collect"]:
            raise HarnessError(
                "invalid_mock",
                f"mock_ui {method!r} is fire-and-forget: its calls are always collected; "
                f"the only value is 'collect', got "
                f"{entries[0] if len(entries) == 1 else entries!r}",
            )
        return
    allowed = {
        "confirm": (bool,),
        "select": (int, str),
        "input": (str,),
        "editor": (str,),
        "elicit": (str, Mapping),
    }
    expected = {
        "confirm": "True/False",
        "select": "an index or an item",
        "input": "a string",
        "editor": "a string",
        "elicit": "'accept', 'decline', 'cancel', the content to accept (a dict) or "
        "{'action': ..., 'content': {...}}",
    }
    for entry in entries:
        if callable(entry) or (entry is None and method not in ("confirm", "elicit")):
            continue
        wrong_bool = isinstance(entry, bool) and method == "select"
        # the only strings elicit answers are its three actions
        wrong_action = method == "elicit" and isinstance(entry, str) and entry not in ELICIT_ACTIONS
        if not isinstance(entry, allowed[method]) or wrong_bool or wrong_action:
            raise HarnessError(
                "invalid_mock",
                f"mock_ui {method!r} cannot answer {entry!r}; expected {expected[method]}, "
                "a callable, or a list of those",
            )
