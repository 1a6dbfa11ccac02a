"""The playbook: what the scripted model does, turn by turn.

``when(prompt, actions)`` is one user turn; the actions are the model's steps: ``call`` (one
tool call), ``call_parallel`` (several tool calls in one model message), ``say`` (text that ends
the turn). A call may carry ``text`` the model says in the same message.

Each action remembers where it was written (``tests/test_plan.py:42``; a declarative playbook's
``turns[0].actions[1]``), and every failure of it says so: the line that diverged, not ``run(``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Callable, Union

Params = Union[Mapping[str, Any], Callable[[], Mapping[str, Any]], None]
Callback = Callable[[Any], Any]


@dataclass
class Call:
    """The model calls ``tool`` with ``params`` (a dict, or a zero-argument callable resolved
    when the action is taken, for values known only then)."""

    tool: str
    params: Params = None
    expect_error: bool | str = False
    text: str | None = None
    callbacks: list[Callback] = field(default_factory=list)
    #: where the action was written, for messages ("test_plan.py:42", "turns[0].actions[1]")
    where: str | None = None
    #: the model's answers, in order, to the sampling requests (``sampling/createMessage``) an
    #: MCP server sends while running this call: text, a full result dict, or a callable
    sample: tuple[Any, ...] = ()
    #: False sends the params even if they break the tool's schema (to test its handling)
    validate: bool = True

    def then(self, callback: Callback) -> Call:
        """Run ``callback(result)`` after the call; an exception in it, or returning False,
        fails the run; an ``async def`` callback is awaited."""
        if not callable(callback):
            raise TypeError(f".then() needs a callable, got {type(callback).__name__}")
        self.callbacks.append(callback)
        return self

    def describe(self) -> str:
        return f"call({self.tool!r})"


@dataclass(frozen=True)
class Parallel:
    """Several tool calls in one model message, executed in the order given."""

    calls: tuple[Call, ...]
    text: str | None = None
    where: str | None = None

    def describe(self) -> str:
        return "call_parallel([" + ", ".join(c.describe() for c in self.calls) + "])"


@dataclass(frozen=True)
class Say:
    """The model answers with text and ends the turn."""

    text: str
    where: str | None = None

    def describe(self) -> str:
        shown = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        return f"say({shown!r})"


Action = Union[Call, Parallel, Say]


@dataclass(frozen=True)
class Turn:
    prompt: str
    actions: tuple[Action, ...]
    where: str | None = None


def call(
    tool: str,
    params: Params = None,
    *,
    expect_error: bool | str = False,
    text: str | None = None,
    sample: Any = None,
    validate: bool = True,
) -> Call:
    """``sample``: what the model answers when the server asks it to sample while running this
    call (text, a ``sampling/createMessage`` result dict, or a callable taking the request's
    params); a list answers several requests in order. ``validate=False`` sends ``params`` even
    if they break the tool's schema, to test how the tool handles bad arguments."""
    if not isinstance(tool, str) or not tool:
        raise TypeError(f"call() needs a tool name, got {tool!r}")
    if params is not None and not callable(params) and not isinstance(params, Mapping):
        raise TypeError(
            f"call({tool!r}): params must be a dict or a zero-argument callable, "
            f"got {type(params).__name__}"
        )
    if not isinstance(expect_error, (bool, str)):
        raise TypeError(f"call({tool!r}): expect_error must be True/False or a regex string")
    if expect_error == "":
        raise TypeError(f"call({tool!r}): expect_error='' matches any error; write True")
    if not isinstance(validate, bool):
        raise TypeError(f"call({tool!r}): validate must be True or False")
    if sample is None:
        answers: tuple[Any, ...] = ()
    else:
        answers = tuple(sample) if isinstance(sample, (list, tuple)) else (sample,)
    for answer in answers:
        if not (isinstance(answer, (str, Mapping)) or callable(answer)):
            raise TypeError(
                f"call({tool!r}): a sample answer is text, a result dict or a callable, "
                f"got {type(answer).__name__}"
            )
    return Call(
        tool=tool,
        params=params,
        expect_error=expect_error,
        text=text,
        sample=answers,
        validate=validate,
        where=written_at(),
    )


def call_parallel(calls: Sequence[Call], *, text: str | None = None) -> Parallel:
    calls = tuple(calls)
    if not calls or not all(isinstance(c, Call) for c in calls):
        raise TypeError("call_parallel() needs a non-empty list of call(...) actions")
    if any(c.text is not None for c in calls):
        raise TypeError("call_parallel(): give the message text once, as text=..., not per call")
    return Parallel(calls=calls, text=text, where=written_at())


def say(text: str) -> Say:
    if not isinstance(text, str):
        raise TypeError(f"say() needs a string, got {type(text).__name__}")
    return Say(text=text, where=written_at())


def when(prompt: str, actions: Sequence[Action]) -> Turn:
    if not isinstance(prompt, str):
        raise TypeError(f"when() needs the user's prompt as a string, got {type(prompt).__name__}")
    actions = tuple(actions)
    for index, action in enumerate(actions, start=1):
        if not isinstance(action, (Call, Parallel, Say)):
            raise TypeError(
                f"when({prompt!r}): action {index} is a {type(action).__name__}; "
                "use call(...), call_parallel([...]) or say(...)"
            )
    return Turn(prompt=prompt, actions=actions)


_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def written_at() -> str | None:
    """``file:line`` of the code outside sandboxverify that is building this action."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:
        return None
    path = os.path.abspath(frame.f_code.co_filename)
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        relative = path
    shown = path if relative.startswith("..") else relative
    return f"{shown}:{frame.f_lineno}"
