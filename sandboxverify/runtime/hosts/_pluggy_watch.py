"""One run of a pluggy application with the plugin: which of its hooks the application called,
which raised, and the verdict of each step.

The application loads its plugins itself, from the installed entry points, into its own plugin
manager. pluggy's hook-call monitoring (``add_hookcall_monitoring``) on that manager shows every
hook call and the implementations it is about to call; each implementation of the plugin's is
wrapped as it is about to be called, so the run knows exactly which of its hooks ran (a
``firstresult`` hook stops at the first answer) and which raised, even when the application
catches the exception and turns it into a 500 page or an exit code.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
from collections.abc import Iterator
from typing import Any, Callable, NoReturn

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime.hosts._base import (
    ApplicationFailed,
    PluginLoadError,
    ServerFailure,
    import_application,
)
from sandboxverify.runtime.hosts._exercise import (
    Deadline,
    StepTimeout,
    chain,
    in_files,
    need_of,
    package_roots,
    reaching,
    within,
)

_WATCHED = "__sandboxverify_watched__"


class HookWatch:
    """What an application's plugin managers did with the plugin's hook implementations."""

    def __init__(self, owns: Callable[[Any], bool]) -> None:
        self._owns = owns
        #: hook name -> how often one of the plugin's implementations of it ran
        self.called: dict[str, int] = {}
        #: ``(hook, exception)``: what the plugin's implementations raised
        self.raised: list[tuple[str, BaseException]] = []
        #: hook name -> what the plugin's implementations returned
        self.results: dict[str, list[Any]] = {}
        #: exceptions hook calls raised or were handed (``handle_exception``), anyone's
        self.seen: list[BaseException] = []
        #: hook name -> the code of the plugin's implementation and of the functions it defines
        #: (an async ``startup`` returns an inner function the application runs later)
        self.code: dict[str, set[Any]] = {}
        self._managers: list[Any] = []
        self._undo: list[Callable[[], None]] = []
        #: ``(hook implementation, its own function)``, to unwrap it again
        self._wrapped_impls: list[tuple[Any, Callable[..., Any]]] = []

    def attach(self, pm: Any) -> None:
        if all(pm is not other for other in self._managers):
            self._managers.append(pm)
            self._undo.append(pm.add_hookcall_monitoring(self._before, self._after))

    def detach(self) -> None:
        """Stop watching (an application's manager may outlive the run: a module global)."""
        while self._undo:
            self._undo.pop()()
        while self._wrapped_impls:
            impl, function = self._wrapped_impls.pop()
            impl.function = function

    def _before(self, hook_name: str, hook_impls: Any, kwargs: Any) -> None:
        self.seen += [value for value in kwargs.values() if isinstance(value, BaseException)]
        for impl in hook_impls:
            if self._owns(impl) and not getattr(impl.function, _WATCHED, False):
                self._wrapped_impls.append((impl, impl.function))
                impl.function = self._wrapped(hook_name, impl.function)

    def _after(self, outcome: Any, hook_name: str, hook_impls: Any, kwargs: Any) -> None:
        exception = getattr(outcome, "exception", None)
        if exception is None and getattr(outcome, "excinfo", None):  # pluggy < 1.1
            exception = outcome.excinfo[1]
        if exception is not None:
            self.seen.append(exception)

    def _wrapped(self, hook: str, function: Callable[..., Any]) -> Callable[..., Any]:
        self.code.setdefault(hook, set()).update(_code_within(function))

        @functools.wraps(function)
        def watched(*args: Any, **kwargs: Any) -> Any:
            self.called[hook] = self.called.get(hook, 0) + 1
            try:
                result = function(*args, **kwargs)
            except BaseException as exc:  # recorded, then raised on as pluggy expects
                self.raised.append((hook, exc))
                raise
            self.results.setdefault(hook, []).append(result)
            return result

        setattr(watched, _WATCHED, True)
        return watched


def _code_within(function: Any) -> set[Any]:
    """The code objects of ``function`` and of every function defined inside it."""
    pending = [getattr(inspect.unwrap(function), "__code__", None)]
    found: set[Any] = set()
    while pending:
        code = pending.pop()
        if code is None or code in found:
            continue
        found.add(code)
        pending += [const for const in code.co_consts if isinstance(const, type(code))]
    return found


@contextlib.contextmanager
def watching_new_managers(watch: HookWatch, project: str) -> Iterator[None]:
    """Attach ``watch`` to every plugin manager of ``project`` made meanwhile (hatchling makes
    one per build)."""
    pluggy = importlib.import_module("pluggy")
    original = pluggy.PluginManager.__init__

    def init(manager: Any, project_name: str, *args: Any, **kwargs: Any) -> None:
        original(manager, project_name, *args, **kwargs)
        if project_name == project:
            watch.attach(manager)

    pluggy.PluginManager.__init__ = init
    try:
        yield
    finally:
        pluggy.PluginManager.__init__ = original


class Stopped(Exception):
    """The run cannot go on, through no fault of the plugin's (it needs configuration the
    scripted run cannot guess): what was not reached is reported as not exercised, with why."""


class AppRun:
    """One run of ``application`` with the plugin, step by step, each step bounded."""

    def __init__(
        self,
        ref: EntryPointRef,
        target: Any,
        application: str,
        deadline: Deadline,
        hooks: list[str],
    ) -> None:
        self.ref = ref
        self.target = target
        self.application = application
        self.deadline = deadline
        self.package = ref.module.split(".", 1)[0]
        self.roots = package_roots(self.package)
        self.watch = HookWatch(self.owns)
        #: the hooks the plugin implements
        self.hooks = hooks
        #: hook -> (``exercise``, note): what the run found beyond the hook being called
        self.judged: dict[str, tuple[str, str]] = {}
        #: what the scripted run does, in a few words (``served /, a database, ...``)
        self.scenario = ""
        #: hook -> why the scripted run cannot reach it
        self.unreached: dict[str, str] = {}
        #: why the run stopped early, if it did
        self.stopped: str | None = None
        #: how many hooks had raised and exceptions been seen when the step began
        self._mark = (0, 0)
        #: ``(manager, plugin)`` the run registered the plugin with itself
        self._joined: list[tuple[Any, Any]] = []

    def owns(self, impl: Any) -> bool:
        plugin = impl.plugin
        if plugin is self.target or impl.plugin_name == self.ref.name:
            return True
        module = plugin.__name__ if isinstance(plugin, type(importlib)) else type(plugin).__module__
        return within(module, self.package)

    def judge(self, hook: str, exercise: str, note: str) -> None:
        """Say how the run exercised ``hook`` (what it registered, used or not)."""
        self.judged[hook] = (exercise, note)

    def import_app(self, module: str) -> Any:
        return import_application(module, self.application, self.ref.group)

    def join(self, pm: Any) -> None:
        """Watch the application's plugin manager; register the plugin with it when the
        application did not load it from its entry point (its loading switched off here)."""
        self.watch.attach(pm)
        if not pm.is_registered(self.target) and pm.get_plugin(self.ref.name) is None:
            pm.register(self.target, name=self.ref.name)
            self._joined.append((pm, self.target))

    def close(self) -> None:
        """Leave the application's managers as the run found them."""
        self.watch.detach()
        for pm, plugin in self._joined:
            if pm.is_registered(plugin):
                pm.unregister(plugin)
        self._joined.clear()

    @contextlib.contextmanager
    def step(self, what: str, seconds: float | None = None) -> Iterator[list[str]]:
        """Run one step: a raise, a hook of the plugin's raising (even one the application
        caught), or running out of time fails the plugin, naming the step and the hook. Yields
        what the step reached outside the process for, so far."""
        self._mark = (len(self.watch.raised), len(self.watch.seen))
        with reaching() as reached:
            try:
                with self.deadline.bound(f"{self.application}: {what}", seconds):
                    yield reached
            except PluginLoadError as exc:
                if isinstance(exc.cause, StepTimeout):  # out of time importing the application
                    self.timed_out(exc.cause, reached)
                if exc.stage != "application" or len(self.watch.raised) <= self._mark[0]:
                    raise
                hook, caught = self.watch.raised[self._mark[0]]  # the import ran its hook
                self.broke(what, caught, reached, hook=hook)
            except Stopped:
                raise
            except StepTimeout as exc:
                self.timed_out(exc, reached)
            except Exception as exc:
                self.broke(what, exc, reached)
            if len(self.watch.raised) > self._mark[0]:  # raised, and the application caught it
                hook, caught = self.watch.raised[self._mark[0]]
                self.broke(what, caught, reached, hook=hook)

    def broke(
        self,
        what: str,
        exc: BaseException | None,
        reached: list[str],
        *,
        hook: str | None = None,
        answer: str = "",
    ) -> NoReturn:
        """Fail the plugin for ``what``: the plugin's hook that raised, or the exception the
        application handled on the way to ``answer`` (a 500 page, an exit status)."""
        raised, seen = self.watch.raised[self._mark[0] :], self.watch.seen[self._mark[1] :]
        if hook is None and raised:
            hook, exc = raised[0]
        timeout = next((e for e in [exc, *seen] if isinstance(e, StepTimeout)), None)
        if timeout is not None:  # out of time in a hook, and the application caught it
            self.timed_out(timeout, reached)
        if exc is None:
            exc = next((e for e in reversed(seen) if in_files(e, self.roots)), None)
        if exc is None:  # nothing the plugin's code raised, as far as can be seen
            other = seen[-1] if seen else None
            cause = (
                f" ({type(other).__name__}: {other}; its traceback does not pass through the "
                "plugin's code)"
                if other is not None
                else ""
            )
            failed = ApplicationFailed(
                f"{self.application} failed with the plugin installed: {what} {answer}{cause}"
            )
            raise PluginLoadError("exercise", failed) from other
        hook = hook or self._hook_in(exc)
        where = f"the {hook} hook, during {what}" if hook else what
        if answer:
            where += f", which {answer}"
        need = need_of(exc, reached)
        if need is not None:
            need.__cause__ = exc
            raise PluginLoadError("exercise", need, where=where) from exc
        raise PluginLoadError("exercise", exc, where=where) from exc

    def timed_out(self, exc: StepTimeout, reached: list[str]) -> NoReturn:
        """A step outlasted its time: a ``timeout``, naming the hook it was in, if the
        plugin's."""
        since = self.watch.raised[self._mark[0] :]
        hook = next((hook for hook, raised in since if isinstance(raised, StepTimeout)), None)
        during = f" (in the plugin's {hook} hook)" if hook else ""
        tried = f"; it tried {', '.join(reached[:3])}" if reached else ""
        timeout = ServerFailure(f"{exc}{during}{tried}", code="timeout")
        raise PluginLoadError("exercise", timeout) from None

    def _hook_in(self, exc: BaseException) -> str | None:
        """The plugin's hook whose code (or code it defined: an async ``startup``'s inner
        function) raised ``exc``."""
        for link in chain(exc):
            tb = link.__traceback__
            while tb is not None:
                code = tb.tb_frame.f_code
                for hook, codes in self.watch.code.items():
                    if code in codes:
                        return hook
                tb = tb.tb_next
        return None

    def registrations(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The hook registrations, each saying whether the run exercised it."""
        described: list[dict[str, Any]] = []
        for tool in tools:
            hook = tool["name"]
            if hook in self.judged:
                exercise, note = self.judged[hook]
                described.append({**tool, "exercise": exercise, "exercise_note": note})
                continue
            if hook in self.watch.called:
                described.append({**tool, "exercise": "passed", "exercise_note": None})
                continue
            why = self.stopped or self.unreached.get(hook)
            if why is None:
                why = f"the scripted {self.application} run ({self.scenario}) does not call it"
            described.append({**tool, "exercise": "not_exercised", "exercise_note": why})
        return described
