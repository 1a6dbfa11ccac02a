"""The check's steps, driven through ``check()`` with a stand-in runner: no process is started
for a step (the runner does what the real command would leave behind), so each check takes a
fraction of a second. The wheel is given, made here; the real commands are ``tests/e2e``'s."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.options._check_options import CheckOptions
from sandboxverify.pipeline._check import check
from sandboxverify.pipeline._progress import (
    CommandFinished,
    Event,
    IsolationChosen,
    PluginLoaded,
    StageFinished,
    StageStarted,
)
from sandboxverify.report._model import Report
from sandboxverify.runtime._protocol import PROTOCOL
from sandboxverify.sandbox._subprocess import Command, Outcome
from tests.helpers import make_wheel

#: a command by the start of its label: what it does instead of what the runner would
Behaviour = Callable[[Command], Outcome]


def finished(
    command: Command, returncode: int | None = 0, *, timed_out: bool = False, tail: str = ""
) -> Outcome:
    return Outcome(command, returncode, timed_out, seconds=0.01, tail=tail)


def request_of(command: Command) -> dict[str, Any]:
    """What a runtime command was asked, on its stdin."""
    assert command.stdin is not None
    request = json.loads(command.stdin)
    assert isinstance(request, dict)
    return request


def answered(command: Command, result: dict[str, Any], *, nonce: str | None = None) -> Outcome:
    """The runtime's way of answering: the result file it was named, with the request's nonce
    (or ``nonce``), and exit code 0."""
    request = request_of(command)
    envelope = {"protocol": PROTOCOL, "nonce": nonce or request["nonce"], "python": "3"}
    Path(request["result"]).write_text(json.dumps({**envelope, **result}), encoding="utf-8")
    return finished(command)


#: the import run's answer: the wheel's one module imported
IMPORTED = {"ok": True, "modules": ["demo"], "results": [{"module": "demo", "ok": True}]}


class StandIn:
    """The runner of a check with no processes: each command leaves what the real one would
    (a sandbox's interpreter, the runtime's answer to discovery, a load, the import run),
    unless ``instead`` gives a behaviour for its label."""

    def __init__(
        self, instead: Mapping[str, Behaviour] | None = None, *, sends_early: bool = True
    ) -> None:
        self.instead = dict(instead or {})
        #: the import run sends discovery before it imports anything, as the runtime does
        self.sends_early = sends_early
        #: every command run, with the interpreter it was run for
        self.ran: list[tuple[str | None, Command]] = []

    @property
    def labels(self) -> list[str]:
        return [command.label for _, command in self.ran]

    def run(self, command: Command, python: str | None) -> Outcome:
        self.ran.append((python, command))
        for start, behaviour in self.instead.items():
            if command.label.startswith(start):
                return behaviour(command)
        if command.label == "venv":  # virtualenv's last argument is where the sandbox goes
            python_path = Path(command.argv[-1]) / "bin" / "python"
            python_path.parent.mkdir(parents=True, exist_ok=True)
            python_path.write_text("")
            return finished(command)
        if command.stdin is not None:
            return self._runtime(command)
        return finished(command)

    def ended(self, outcome: Outcome, python: str | None) -> None:
        raise AssertionError("a given wheel is not built: nothing holds a conversation")

    def _runtime(self, command: Command) -> Outcome:
        action = request_of(command)["action"]
        venv = Path(command.argv[0]).parent.parent
        if action == "discover":
            return answered(command, _discovery(venv))
        if action == "load":
            return answered(command, {"ok": True, "tools": [{"name": "greet"}], "seconds": 0.0})
        if action == "imports":
            early = request_of(command).get("early")
            if early is not None and self.sends_early:  # as the runtime does, before importing
                line = {"protocol": PROTOCOL, "nonce": early["nonce"], **_discovery(venv)}
                os.write(early["fd"], (json.dumps(line) + "\n").encode())
            return answered(command, IMPORTED)
        raise AssertionError(f"no stand-in for the runtime's {action!r}")


def _discovery(venv: Path) -> dict[str, Any]:
    """What the runtime finds in a sandbox with the wheel of :func:`wheel` installed."""
    return {
        "ok": True,
        "dist": {"name": "demo", "version": "1.0"},
        "plugins": [{"name": "greeter", "group": "sandboxverify.plugins", "value": "demo:setup"}],
        "declared_groups": ["sandboxverify.plugins"],
        "others": [],
        "sys_path": [str(venv / "lib" / "python3" / "site-packages")],
        "prefix": str(venv),
        "base_prefix": sys.base_prefix,
        "flags": {"isolated": True},
        "installed": [{"name": "demo", "version": "1.0"}],
    }


@pytest.fixture
def wheel(tmp_path: Path) -> Path:
    """One plugin, ``greeter``, in the group of the native host."""
    return make_wheel(
        tmp_path,
        files={
            "demo/__init__.py": "def setup(api):\n    api.register_tool('greet', print)\n",
            "demo-1.0.dist-info/entry_points.txt": (
                "[sandboxverify.plugins]\ngreeter = demo:setup\n"
            ),
        },
    )


def checked(
    wheel: Path,
    runner: StandIn,
    events: list[Event] | None = None,
    **options: Any,
) -> Report:
    chosen = {"host": "native", "installer": "pip", "isolation": "process", **options}
    return check(
        CheckOptions(targets=(str(wheel),), **chosen),
        on_event=(events.append if events is not None else lambda event: None),
        runner=runner,
        config=False,  # the wheel is no project: the repository's own table is not its
    )


def statuses(report: Report) -> list[tuple[str, str]]:
    [run] = report.runs
    return [(stage.name, stage.status) for stage in run.stages]


def test_a_good_wheel_goes_through_every_stage_in_order(wheel: Path) -> None:
    runner = StandIn()

    report = checked(wheel, runner, expect_tools=("greet",))

    assert report.ok, report.failures
    assert statuses(report) == [
        ("build", "passed"),
        ("venv", "passed"),
        ("install", "passed"),
        ("probe", "passed"),
        ("imports", "passed"),
        ("scripts", "passed"),
    ]
    [run] = report.runs
    assert [(tool.name, tool.plugin) for tool in run.tools] == [("greet", "greeter")]
    # the sandbox before the install, the install before anything runs in it
    assert runner.labels[:2] == ["venv", "install"]
    # discovery comes from the import run, which sends it before it imports anything
    assert sorted(runner.labels[2:]) == ["imports", "load-0-greeter"]
    assert {python for python, _ in runner.ran} == {run.python}
    [imports] = [command for _, command in runner.ran if command.label == "imports"]
    assert imports.inherit == (request_of(imports)["early"]["fd"],)


def _forging_early(command: Command) -> Outcome:
    """An import run whose early result carries another nonce than the one it was given."""
    os.write(request_of(command)["early"]["fd"], b'{"nonce": "forged", "ok": true}\n')
    return answered(command, IMPORTED)


@pytest.mark.parametrize(
    ("runner", "options"),
    [
        (StandIn(sends_early=False), {}),
        (StandIn(), {"import_all": False}),
        # an early result with another nonce counts for nothing
        (StandIn({"imports": _forging_early}), {}),
    ],
    ids=["import-run-sent-nothing", "no-import-run", "forged"],
)
def test_discovery_runs_on_its_own_when_the_import_run_does_not_send_it(
    wheel: Path, runner: StandIn, options: dict[str, Any]
) -> None:
    report = checked(wheel, runner, expect_tools=("greet",), **options)

    assert report.ok, report.failures
    assert "discover" in runner.labels
    assert report.runs[0].plugins[0].name == "greeter"


def test_each_step_runs_with_its_own_timeout_and_confinement(wheel: Path) -> None:
    runner = StandIn()

    checked(wheel, runner, timeout=7, install_timeout=70)

    by_label = {command.label: command for _, command in runner.ran}
    # the installer's steps are bounded by --install-timeout and trusted: started as they are
    for label in ("venv", "install"):
        assert (by_label[label].timeout, by_label[label].launcher) == (70, None)
    # plugin code is bounded by --timeout and confined
    for label in ("load-0-greeter", "imports"):
        assert by_label[label].timeout == 7
        assert by_label[label].launcher is not None


def test_the_event_sink_hears_the_stages_and_every_command_in_order(wheel: Path) -> None:
    runner, events = StandIn(), list[Event]()

    report = checked(wheel, runner, events)

    python = report.runs[0].python
    assert isinstance(events[0], IsolationChosen)
    assert events[0].isolation == "process"
    steps = [_step(event) for event in events[1:]]
    # until the install, one thing at a time; each command is heard of within its stage
    assert steps[:8] == [
        ("StageStarted", "build", None),
        ("StageFinished", "build", None),
        ("StageStarted", "venv", python),
        ("CommandFinished", "venv", python),
        ("StageFinished", "venv", python),
        ("StageStarted", "install", python),
        ("CommandFinished", "install", python),
        ("StageFinished", "install", python),
    ]
    heard = [event.outcome.command for event in events if isinstance(event, CommandFinished)]
    assert sorted(c.label for c in heard) == sorted(runner.labels)
    loaded = [event for event in events if isinstance(event, PluginLoaded)]
    assert [(event.plugin.name, event.tools) for event in loaded] == [("greeter", ("greet",))]
    probe_done = next(
        i for i, e in enumerate(events) if isinstance(e, StageFinished) and e.stage == "probe"
    )
    assert events.index(loaded[0]) < probe_done  # a plugin is announced within its stage
    started = {e.stage for e in events if isinstance(e, StageStarted)}
    assert started == {"build", "venv", "install", "probe", "imports", "scripts"}


def _step(event: Event) -> tuple[str, str | None, str | None]:
    """An event as (kind, stage or command label, interpreter)."""
    if isinstance(event, CommandFinished):
        return ("CommandFinished", event.outcome.command.label, event.python)
    return (type(event).__name__, getattr(event, "stage", None), getattr(event, "python", None))


def test_a_sandbox_that_cannot_be_made_skips_the_install_and_every_stage(wheel: Path) -> None:
    runner = StandIn({"venv": lambda command: finished(command, 1, tail="no space left")})

    report = checked(wheel, runner)

    assert not report.ok
    assert statuses(report) == [
        ("build", "passed"),
        ("venv", "failed"),
        ("install", "skipped"),
        ("probe", "skipped"),
        ("imports", "skipped"),
        ("scripts", "skipped"),
    ]
    [failure] = report.failures
    assert failure.code == "venv_failed"
    assert "no space left" in failure.message
    assert runner.labels == ["venv"]


def test_a_failed_install_is_install_failed_and_nothing_runs_in_the_sandbox(wheel: Path) -> None:
    refused = "ERROR: No matching distribution found for missing-dependency"
    runner = StandIn({"install": lambda command: finished(command, 1, tail=refused)})

    report = checked(wheel, runner)

    assert statuses(report)[2:] == [
        ("install", "failed"),
        ("probe", "skipped"),
        ("imports", "skipped"),
        ("scripts", "skipped"),
    ]
    [failure] = report.failures
    assert failure.code == "install_failed"
    assert failure.hint is not None and "--index-url" in failure.hint
    assert runner.labels == ["venv", "install"]


def test_a_plugin_that_hangs_is_a_timeout_naming_it(wheel: Path) -> None:
    runner = StandIn({"load-": lambda command: finished(command, -9, timed_out=True)})

    report = checked(wheel, runner, timeout=5)

    assert ("probe", "failed") in statuses(report)
    [failure] = report.failures
    assert (failure.code, failure.plugin) == ("timeout", "greeter")
    assert "plugin 'greeter' did not finish within 5s" in failure.message
    [plugin] = report.runs[0].plugins
    assert not plugin.ok


def test_a_plugin_process_that_exits_0_without_a_result_is_probe_crashed(wheel: Path) -> None:
    runner = StandIn({"load-": lambda command: finished(command, 0)})  # os._exit(0), say

    report = checked(wheel, runner)

    [failure] = report.failures
    assert (failure.code, failure.plugin) == ("probe_crashed", "greeter")
    assert "exited without writing a result" in failure.message


def test_a_result_that_does_not_carry_the_requests_nonce_is_not_believed(wheel: Path) -> None:
    def forged(command: Command) -> Outcome:
        return answered(command, {"ok": True, "tools": [{"name": "greet"}]}, nonce="0" * 32)

    report = checked(wheel, StandIn({"load-": forged}))

    [failure] = report.failures
    assert (failure.code, failure.plugin) == ("probe_crashed", "greeter")
    assert "does not carry this run's nonce" in failure.message
    assert report.runs[0].tools == ()
