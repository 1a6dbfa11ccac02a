"""A live model drives the agent loop: a model of any ``llm`` plugin chooses every step.

Where a playbook plays the model, here ``llm`` asks a real one. Each user prompt starts an
``llm`` tool chain (``conversation.chain``) with the session's tools offered as ``llm.Tool``
objects; every response is one model step: its tool calls (several in one message become one
parallel step) go through the session's agent loop exactly as scripted calls do (schema, hooks,
real execution of the plugins' tools, mocks for environmental tools and the UI), and the text of a
response without tool calls ends the turn. The results the loop produced are what ``llm`` hands
back to the model: the tools' ``implementation`` only returns them, nothing runs twice.

The steps are supplied to :meth:`TestSession.run` as turns whose actions are produced one at a
time, when the loop asks for the next one: by then the previous step's results exist.

``llm`` is imported only here, only when a live model is used, and without switching off its
plugins (the model comes from one); its user directory (keys) is kept where the user has it.
Values that look like secrets (of variables named like ``*KEY*``, ``*TOKEN*``, ``*SECRET*``,
``*PASSWORD*``, and every key ``llm`` stores or resolves for the model) are collected so whatever
is written can be redacted with :func:`redact`.
"""

from __future__ import annotations

import importlib
import os
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast, overload

from sandboxverify.runtime.harness._actions import Action, Call, Parallel, Say, Turn
from sandboxverify.runtime.harness._errors import HarnessError
from sandboxverify.runtime.harness._mocks import ENVIRONMENTAL_TOOLS
from sandboxverify.runtime.harness._secrets import SECRET_NAME, redact, secret_values
from sandboxverify.runtime.harness._session import TestSession

DEFAULT_MAX_STEPS = 10


class ModelUnavailable(Exception):
    """The model cannot be used here (llm missing, unknown model, no key, bad option): a problem
    of the command, found before anything runs. ``reason`` says which (``no_llm``,
    ``unknown_model``, ``no_key``, ``options``); ``key_env`` names the variable a missing key
    may come from, if the model has one."""

    def __init__(
        self,
        message: str,
        hint: str | None = None,
        *,
        reason: str | None = None,
        key_env: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.reason = reason
        self.key_env = key_env


@dataclass
class LiveModel:
    """A resolved ``llm`` model and how to prompt it."""

    llm: Any
    model: Any
    system: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    max_steps: int = DEFAULT_MAX_STEPS
    secrets: tuple[str, ...] = ()

    @property
    def model_id(self) -> str:
        return str(getattr(self.model, "model_id", self.model))


def open_model(
    model_id: str,
    *,
    system: str | None = None,
    options: Mapping[str, Any] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> LiveModel:
    """``llm.get_model(model_id)``, its options checked and its key found, before any turn."""
    try:
        # llm reads LLM_LOAD_PLUGINS when imported: a host that imported it first with plugins
        # off (the llm host does) would hide every model plugin
        llm = importlib.import_module("llm")
    except ImportError as exc:
        raise ModelUnavailable(
            f"a live model needs the llm library, which cannot be imported here: {exc}",
            hint="pip install llm and the plugin of your model (llm install llm-anthropic, ...)",
            reason="no_llm",
        ) from None
    # keys live in llm's user directory: keep it where it is now, whatever a host sets later
    os.environ.setdefault("LLM_USER_PATH", str(llm.user_dir()))
    try:
        model = llm.get_model(model_id)
    except llm.UnknownModelError as exc:
        raise ModelUnavailable(
            f"unknown model {model_id!r}: {exc.args[0] if exc.args else exc}",
            hint="'llm models list' shows the models of the llm plugins installed here",
            reason="unknown_model",
        ) from None
    chosen = dict(options or {})
    key = None
    if getattr(model, "needs_key", None):
        try:
            key = model.get_key()
        except Exception as exc:  # llm.errors.NeedsKeyException
            raise ModelUnavailable(
                f"model {model_id!r}: {exc}",
                reason="no_key",
                key_env=getattr(model, "key_env_var", None) or None,
            ) from None
    secret_options = [str(value) for name, value in chosen.items() if SECRET_NAME.search(name)]
    secrets = secret_values(os.environ, [key, *_stored_keys(llm), *secret_options])
    try:
        model.Options(**chosen)
    except Exception as exc:
        raise ModelUnavailable(
            redact(f"model {model_id!r} does not take options {', '.join(chosen)}: {exc}", secrets),
            hint="'llm models list --options' shows each model's options",
            reason="options",
        ) from None
    return LiveModel(llm, model, system, chosen, max_steps, secrets)


def _stored_keys(llm: Any) -> list[str]:
    try:
        keys = llm.load_keys()
    except Exception:  # an unreadable keys.json holds no key we could leak
        return []
    return [value for value in keys.values() if isinstance(value, str)]


class LiveDriver:
    """Turns whose steps a live model chooses, played by one session."""

    def __init__(self, live: LiveModel, session: TestSession) -> None:
        self.live = live
        self.session = session
        self.conversation = live.model.conversation()
        self._pending: deque[tuple[str, str]] = deque()
        #: what went wrong handing results back; llm turns a raising tool into an error result
        #: the model reads, so the step after it fails instead
        self.fault: str | None = None
        self.tools = [self._tool(name, *spec) for name, spec in offered_tools(session).items()]

    def turns(self, prompts: Sequence[str]) -> list[Turn]:
        # Turn.actions is a sequence the loop reads in order: these steps exist once asked for
        return [
            Turn(prompt, cast("tuple[Action, ...]", LiveActions(self, prompt, number)))
            for number, prompt in enumerate(prompts, start=1)
        ]

    def _tool(self, name: str, description: str | None, schema: dict[str, Any]) -> Any:
        def implementation(**arguments: Any) -> str:
            """What the agent loop returned for this call: the loop ran it already."""
            del arguments
            if not self._pending or self._pending[0][0] != name:
                self.fault = f"llm asked for the result of {name!r}, which the loop did not run"
                raise RuntimeError(self.fault)
            return self._pending.popleft()[1]

        return self.live.llm.Tool(
            name=name, description=description, input_schema=schema, implementation=implementation
        )

    def start(self, prompt: str) -> Iterator[Any]:
        kwargs: dict[str, Any] = {
            "system": self.live.system,
            "tools": self.tools,
            "stream": False,
            # one more than allowed: the loop, not llm, says when a turn has too many steps
            "chain_limit": self.live.max_steps + 1,
        }
        if self.live.options:
            kwargs["options"] = dict(self.live.options)
        chain = self.conversation.chain(prompt, **kwargs)
        return iter(chain.responses())

    def hand_back(self, results: list[tuple[str, str]]) -> None:
        self._pending.clear()
        self._pending.extend(results)

    def check_handed_back(self) -> None:
        """Every result went back to the model, in the loop's order: else the model saw
        something the session did not record."""
        left = [name for name, _ in self._pending]
        fault = self.fault or (f"llm never asked for the results of {left}" if left else None)
        if fault is not None:
            raise HarnessError("model_failed", f"the model's view of the session broke: {fault}")


class LiveActions(Sequence[Action]):
    """One turn's actions, each asked of the model when the agent loop reaches it."""

    def __init__(self, driver: LiveDriver, prompt: str, turn: int) -> None:
        self._driver = driver
        self._prompt = prompt
        self._turn = turn
        self._actions: list[Action] = []
        self._responses: Iterator[Any] | None = None
        self._done = False

    def __len__(self) -> int:
        return len(self._actions) + (0 if self._done else 1)

    @overload
    def __getitem__(self, index: int) -> Action: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Action]: ...

    def __getitem__(self, index: int | slice) -> Action | Sequence[Action]:
        if isinstance(index, slice):
            return tuple(self._actions)[index]
        if index == len(self._actions) and not self._done:
            self._actions.append(self._next_step())
        return self._actions[index]

    def _next_step(self) -> Action:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        live = self._driver.live
        where = f"turn {self._turn}"
        if len(self._actions) >= live.max_steps:
            raise HarnessError(
                "too_many_steps",
                f"{where}: after {live.max_steps} step(s) the model {live.model_id!r} has not "
                "ended the turn (its last step called tools); raise --max-steps if the task "
                "needs more",
                turn=self._turn,
            )
        try:
            if self._responses is None:
                self._responses = self._driver.start(self._prompt)
            else:
                self._driver.hand_back(self._results_of_last_step())
            response = next(self._responses)
            tool_calls = list(response.tool_calls())
            text = response.text()
            self._driver.check_handed_back()
        except HarnessError:
            raise
        except StopIteration:
            raise HarnessError(
                "model_failed",
                f"{where}: llm ended the chain of {live.model_id!r} without a final answer",
                turn=self._turn,
            ) from None
        except Exception as exc:
            raise HarnessError(
                "model_failed",
                f"{where}: the model {live.model_id!r} failed: {type(exc).__name__}: {exc}",
                turn=self._turn,
            ) from exc
        text = text if isinstance(text, str) else str(text)
        if not tool_calls:
            self._done = True
            return Say(text)
        calls = tuple(Call(tool=c.name, params=_arguments(c.arguments)) for c in tool_calls)
        if len(calls) == 1:
            calls[0].text = text or None
            return calls[0]
        return Parallel(calls, text=text or None)

    def _results_of_last_step(self) -> list[tuple[str, str]]:
        """The results the agent loop recorded for the model's last step, in its call order."""
        events = self._driver.session.events
        steps = [event for event in events.all if event.type == "model_step"]
        if not steps or steps[-1].data.get("turn") != self._turn:
            raise RuntimeError("a live step was asked for before the previous one ran")
        results = {record.tool_call_id: record for record in events.tool_results}
        handed: list[tuple[str, str]] = []
        for tool_call in steps[-1].data["tool_calls"]:
            record = results.get(tool_call["id"])
            if record is None:
                raise RuntimeError("a live step was asked for before the previous one ran")
            handed.append((record.tool_name, record.text))
        return handed


def _arguments(arguments: Any) -> Any:
    """What the model sent as arguments; a JSON object decoded by llm is a dict already."""
    return dict(arguments) if isinstance(arguments, Mapping) else arguments


def offered_tools(session: TestSession) -> dict[str, tuple[str | None, dict[str, Any]]]:
    """What the model may call: every registered tool, and each mocked environmental tool."""
    tools: dict[str, tuple[str | None, dict[str, Any]]] = {
        name: (spec.description, dict(spec.parameters))
        for name, spec in sorted(session.registry.tools.items())
    }
    for name in session.mocks.names:
        if name not in tools and name in ENVIRONMENTAL_TOOLS:
            tools[name] = (f"The {name} tool of the agent (mocked).", ENVIRONMENTAL_TOOLS[name])
    return tools
