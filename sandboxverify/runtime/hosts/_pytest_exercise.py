"""The pytest host's second run: a generated test module, run with the plugin active.

``--collect-only`` loads the plugin but never runs a test, so a plugin that breaks every
parametrized test (``pytest_generate_tests``) or a fixture that raises when used would pass it.
So pytest runs, in a fresh scratch directory, a module with a plain test, a parametrized test
and one test per fixture the plugin defines (each requested as an argument, as users do, so
parametrized fixtures and ``pytest_generate_tests`` see it; through ``request.getfixturevalue``
when its name is no identifier). Each test is bounded by its share of the time left.

What fails the plugin (stage ``exercise``, with pytest's message): a collection error, a plain or
parametrized test that does not pass, a fixture that raises at setup or teardown, a hook of the
plugin's that raises, pytest ending with an internal or usage error. What does not: a fixture
that needs a service it cannot reach here, an extra that is not installed, an interpreter
capability, or a program or data its users install apart from Python packages (a browser its
own command downloads, a program on PATH) (``exercise: unavailable``, with a note: see
``_exercise``), one that imports the
framework the plugin is named for and leaves to its users' projects (Django for
``pytest_django``: ``unavailable``), one that raises pytest's ``UsageError`` (it wants a marker
or an argument a test gives it: ``not_exercised``), one that misses a file in the directory the
tests run in (data a project keeps next to its tests: ``not_exercised``), one that needs a fixture
the project defines, or one that skips (``not_exercised``).
"""

from __future__ import annotations

import contextlib
import keyword
import os
import sys
from typing import Any, Protocol

from sandboxverify.runtime._protocol import EntryPointRef, name_words
from sandboxverify.runtime.hosts._base import PluginLoadError, ServerFailure
from sandboxverify.runtime.hosts._exercise import (
    Deadline,
    MissingPrerequisite,
    StepTimeout,
    captured,
    chain,
    need_of,
    reaching,
    step_timed_out,
)
from sandboxverify.runtime.hosts._extras import extra_providing, missing_module
from sandboxverify.runtime.hosts._pytest_run import (
    refused_on_purpose,
    scratch_args,
    scratch_directory,
)

#: the generated module's file and its tests
MODULE = "test_sandboxverify_generated.py"
PLAIN, PARAMETRIZED, FIXTURE = "test_sv_plain", "test_sv_parametrized", "test_sv_fixture_"
#: seconds each test may take at least, and those kept back for pytest's own end
_LEAST, _KEPT = 2.0, 1.0


class GeneratedRunFailed(Exception):
    """pytest could not collect or run the generated tests with the plugin active."""


class PluginRun(Protocol):
    """The first run's plugin: how it is selected, and whose hook implementations are its."""

    select: list[str]
    #: the plugin module's top-level package, and its entry point
    package: str
    ref: EntryPointRef | None

    def objects(self) -> list[Any]: ...

    def owns_impl(self, impl: Any) -> bool: ...


class Generated:
    """What the generated run found: each fixture's verdict, the plugin's hooks pytest called."""

    def __init__(self, verdicts: dict[str, tuple[str, str | None]], called: dict[str, int]) -> None:
        self.verdicts = verdicts
        self.called = called
        #: each switch's run, by option (see ``_pytest_switches``)
        self.switches: dict[str, tuple[str, str | None]] = {}

    def describe(self, registration: dict[str, Any]) -> dict[str, Any]:
        """``registration`` with ``exercise`` and ``exercise_note`` (``None`` for what the runs
        do not use: options that take a value, ini keys, markers)."""
        kind, name = registration["kind"], registration["name"]
        exercise: str | None = None
        note: str | None = None
        if kind == "option" and name in self.switches:
            exercise, note = self.switches[name]
        elif kind == "fixture":
            exercise, note = self.verdicts.get(name, ("not_exercised", "no test requested it"))
        elif kind == "hook" and name in self.called:
            exercise = "passed"
        elif kind == "hook":
            exercise = "not_exercised"
            note = (
                "the generated tests (a plain test, a parametrized one, one per fixture) do "
                "not call it"
            )
        return {**registration, "exercise": exercise, "exercise_note": note}


def run_generated(
    pytest: Any, run: PluginRun, fixtures: list[str], deadline: Deadline
) -> Generated:
    """Run the generated module with the plugin active, as the first run selected it."""
    from sandboxverify.runtime.hosts._pluggy_watch import HookWatch  # noqa: PLC0415

    watch = HookWatch(run.owns_impl)
    recorder = Recorder(deadline, watch)
    recorder.package, recorder.ref = run.package, run.ref
    with scratch_directory() as directory:
        recorder.directory = directory
        tests = write_module(directory, fixtures)
        args = [*scratch_args(directory), *run.select, directory]  # not -q: the header too
        with captured() as output:
            try:
                status = int(pytest.main(args, plugins=[recorder, *run.objects()]))
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # older pytest lets a plugin's errors out
                if step_timed_out(exc):
                    timeout = ServerFailure(f"pytest: {_timed_out_words(exc)}", code="timeout")
                    raise PluginLoadError("exercise", timeout) from None
                failure = GeneratedRunFailed(f"pytest raised {type(exc).__name__}: {exc}")
                raise PluginLoadError("exercise", failure) from exc
            finally:  # a later run in this process imports a module of that name afresh
                sys.modules.pop(MODULE[: -len(".py")], None)
                watch.detach()
    return Generated(judge(recorder, tests, status, output.text), watch.called)


def write_module(directory: str, fixtures: list[str]) -> dict[str, str]:
    """Write the generated module; the fixture each fixture test requests, by test name."""
    lines = [
        "import pytest",
        "",
        "",
        f"def {PLAIN}():",
        "    assert 1 + 1 == 2",
        "",
        "",
        "@pytest.mark.parametrize('sv_value', [1, 2])",
        f"def {PARAMETRIZED}(sv_value):",
        "    assert sv_value in (1, 2)",
    ]
    tests: dict[str, str] = {}
    for index, name in enumerate(fixtures):
        test = f"{FIXTURE}{index}"
        tests[test] = name
        if name.isidentifier() and not keyword.iskeyword(name):
            lines += ["", "", f"def {test}({name}):", "    pass"]
        else:
            lines += ["", "", f"def {test}(request):", f"    request.getfixturevalue({name!r})"]
    with open(os.path.join(directory, MODULE), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return tests


class Phase:
    """One phase (setup, call, teardown) of one generated test, as pytest reported it."""

    def __init__(
        self, when: str, outcome: str, exception: Any, reached: list[str], message: str
    ) -> None:
        self.when = when
        self.outcome = outcome
        #: what it raised (``None`` when it passed, or skipped)
        self.exception: BaseException | None = exception
        #: what it reached outside the process for
        self.reached = reached
        #: pytest's own account of it
        self.message = message


class Recorder:
    """The plugin this host hands pytest for the generated run: bounds each test, records what
    it reached for, its outcome and exception, and (through the watch) the plugin's hooks."""

    def __init__(self, deadline: Deadline, watch: Any) -> None:
        self.deadline = deadline
        self.watch = watch
        #: nodeid -> its phases
        self.phases: dict[str, list[Phase]] = {}
        self.collect_errors: list[str] = []
        self.internal_error: BaseException | None = None
        self._left = 0
        self._reached: list[str] = []
        self._stack: contextlib.ExitStack | None = None
        #: the plugin module's top-level package, and its entry point
        self.package = ""
        self.ref: EntryPointRef | None = None
        #: where the generated tests run: a project's tree would be there
        self.directory = ""

    def pytest_plugin_registered(self, plugin: Any, manager: Any) -> None:
        self.watch.attach(manager)  # before the plugins load: their pytest_addoption is seen

    def pytest_collection_finish(self, session: Any) -> None:
        self._left = len(session.items)

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.collect_errors.append(str(getattr(report, "longreprtext", report.longrepr)))

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self._stack = contextlib.ExitStack()
        self._reached = self._stack.enter_context(reaching())
        share = (self.deadline.remaining() - _KEPT) / max(self._left, 1)
        self._stack.enter_context(self.deadline.bound(f"pytest: {nodeid}", max(_LEAST, share)))

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self._left -= 1
        if self._stack is not None:
            self._stack.close()
            self._stack = None

    def pytest_runtest_logreport(self, report: Any) -> None:
        message = str(getattr(report, "longreprtext", "") or "")
        phase = Phase(report.when, report.outcome, None, list(self._reached), message)
        self.phases.setdefault(report.nodeid, []).append(phase)

    def pytest_exception_interact(self, node: Any, call: Any, report: Any) -> None:
        """What a phase raised (pytest reports it, then offers it here)."""
        phases = self.phases.get(getattr(report, "nodeid", ""), [])
        if call.excinfo is not None and phases and phases[-1].when == report.when:
            phases[-1].exception = call.excinfo.value
        if call.excinfo is not None and isinstance(call.excinfo.value, StepTimeout):
            self.deadline.disarm()  # pytest has it: not again in its teardown or its report

    def pytest_internalerror(self, excinfo: Any) -> None:
        self.internal_error = excinfo.value


def judge(
    recorder: Recorder, tests: dict[str, str], status: int, output: str
) -> dict[str, tuple[str, str | None]]:
    """What the generated run says: per fixture, ``(exercise, note)``; a break raises
    :class:`PluginLoadError` at stage ``exercise``."""
    _judge_session(recorder, status, output)
    verdicts: dict[str, tuple[str, str | None]] = {}
    known: dict[int, tuple[str, str | None]] = {}  # a cached fixture's exception, classified
    for nodeid, phases in recorder.phases.items():
        test = nodeid.rsplit("::", 1)[-1].split("[", 1)[0]
        fixture = tests.get(test)
        for phase in phases:
            if phase.outcome == "passed" or (phase.outcome == "skipped" and fixture is None):
                continue
            key = id(phase.exception)
            verdict = known.get(key) or _verdict(recorder, test, fixture, phase)
            if phase.exception is not None:
                known[key] = verdict
            if fixture is None:
                _require_passed(test, verdict, phase)
            elif verdicts.get(fixture, ("passed", None))[0] == "passed":
                verdicts[fixture] = verdict
    for fixture in tests.values():
        verdicts.setdefault(fixture, ("passed", None))
    return verdicts


def _judge_session(recorder: Recorder, status: int, output: str) -> None:
    """A generated run that could not collect, or ended in an internal or usage error."""
    cause = recorder.internal_error
    if step_timed_out(cause):
        raise PluginLoadError("exercise", ServerFailure(_timed_out_words(cause), code="timeout"))
    if recorder.collect_errors:
        text = _tail("\n".join(recorder.collect_errors))
        failure = GeneratedRunFailed(f"pytest could not collect the generated tests: {text}")
        raise PluginLoadError("exercise", failure) from cause
    if cause is not None or status not in (0, 1, 5):
        failure = GeneratedRunFailed(
            f"pytest ran the generated tests and exited with status {status}: {_tail(output)}"
        )
        raise PluginLoadError("exercise", failure) from cause


def _verdict(
    recorder: Recorder, test: str, fixture: str | None, phase: Phase
) -> tuple[str, str | None]:
    """One failed (or skipped) phase of one test: a note, or a raised break."""
    subject = f"fixture {fixture!r}" if fixture is not None else f"test {test}"
    exception = phase.exception
    if phase.outcome == "skipped":
        return "not_exercised", f"skipped: {_last_line(phase.message)}"
    if type(exception).__name__ == "FixtureLookupError":
        missing = getattr(exception, "argname", None)
        if fixture is not None and missing and missing != fixture:
            return "not_exercised", f"needs the fixture {missing!r}, which a project defines"
    excuse = _fixture_excuse(recorder, exception, phase.when) if fixture else None
    if excuse is not None:
        return excuse
    if exception is not None:
        need = need_of(exception, phase.reached)
        if need is not None:
            return "unavailable", f"{need} (at {phase.when})"
        if fixture is not None and refused_on_purpose(exception, recorder.package):
            # it wants a test of its own kind (an async test of its framework)
            return "not_exercised", (
                f"the plugin refuses it in a plain test: {type(exception).__name__}: "
                f"{_last_line(str(exception))}"
            )
        if step_timed_out(exception):
            words = _timed_out_words(exception)
            timeout = ServerFailure(f"{subject} at {phase.when}: {words}", code="timeout")
            raise PluginLoadError("exercise", timeout)
    where = f"{subject}, at {phase.when}" + _raising_hook(recorder, exception)
    if exception is None:
        failure = GeneratedRunFailed(f"{subject} failed at {phase.when}: {_tail(phase.message)}")
        raise PluginLoadError("exercise", failure, where=where)
    raise PluginLoadError("exercise", exception, where=where) from exception


def _project_file(exception: BaseException, directory: str) -> str | None:
    """The path a fixture did not find in the directory the tests run in (pytest-datadir's
    ``data/`` next to the test module): what a project's tree has and a scratch one lacks."""
    for link in chain(exception):
        name = getattr(link, "filename", None) if isinstance(link, FileNotFoundError) else None
        if directory and isinstance(name, str):
            path, root = os.path.realpath(name), os.path.realpath(directory)
            if os.path.commonpath([path, root]) == root:
                return os.path.relpath(path, root)
    return None


def _framework_left_out(exception: BaseException | None, package: str) -> str | None:
    """The framework a fixture failed to import, when the plugin is named for it and it is not
    installed (``pytest_django``'s fixtures need Django, which its users' projects bring)."""
    import importlib.util  # noqa: PLC0415 - only a failed fixture pays

    words = name_words(package)
    for link in chain(exception) if exception is not None else ():
        name = getattr(link, "name", None) if isinstance(link, ModuleNotFoundError) else None
        top = name.split(".", 1)[0] if isinstance(name, str) else ""
        if top and top.lower() in words and importlib.util.find_spec(top) is None:
            return top
    return None


def _fixture_excuse(
    recorder: Recorder, exception: BaseException | None, when: str
) -> tuple[str, str] | None:
    """A fixture's failure that is not a break: it wants what a test or a project gives it."""
    if exception is None:
        return None
    if type(exception).__name__ == "UsageError":
        # pytest's error for a misuse: the fixture wants what a test gives it (a marker)
        return "not_exercised", f"needs what a test gives it: {_last_line(str(exception))}"
    absent = _project_file(exception, recorder.directory)
    if absent is not None:
        return "not_exercised", f"needs a file a project keeps next to its tests: {absent}"
    framework = _framework_left_out(exception, recorder.package)
    if framework is not None:
        return "unavailable", (
            f"needs {framework}, which the plugin is named for and leaves to the project it "
            f"tests: it is not installed here (at {when})"
        )
    missing = missing_module(exception)
    extra = extra_providing(recorder.ref, missing) if missing and recorder.ref else None
    if extra is not None:
        return "unavailable", f"needs the extra {extra}, which is not installed (at {when})"
    return None


def _require_passed(test: str, verdict: tuple[str, str | None], phase: Phase) -> None:
    """The plain and parametrized tests must pass: what they need and lack fails them too."""
    if verdict[0] == "unavailable":
        missing = MissingPrerequisite(str(verdict[1]), "service")
        raise PluginLoadError("exercise", missing, where=f"test {test}, at {phase.when}")


def _raising_hook(recorder: Recorder, exception: BaseException | None) -> str:
    if exception is None:
        return ""
    links = chain(exception)
    for hook, raised in recorder.watch.raised:
        if any(raised is link for link in links):
            return f", in the plugin's {hook} hook"
    return ""


def _tail(text: str, lines: int = 25) -> str:
    kept = [line.rstrip() for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def _last_line(text: str) -> str:
    kept = [line.strip() for line in text.splitlines() if line.strip()]
    return kept[-1] if kept else "no reason given"


def _timed_out_words(exc: BaseException | None) -> str:
    """What the :class:`StepTimeout` behind ``exc`` says (:func:`step_timed_out`)."""
    for link in chain(exc) if exc is not None else []:
        if isinstance(link, StepTimeout):
            return str(link)
    return "the step did not end in time (its time-out was raised where it could not propagate)"
