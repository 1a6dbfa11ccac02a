"""The pytest host's third run: the generated tests again, once with each switch the plugin adds.

Many pytest plugins do their work only when their own option turns them on (``--mypy``,
``--flake8``, ``--benchmark-only``): the default run never reaches that code, and a plugin whose
switch makes every pytest run end in an internal error would pass it. So each option the plugin
adds that takes no value (``store_true``, ``store_false``, ``store_const``, ``count``,
``append_const``) is turned on alone for one more run of the generated module, bounded by its
share of the time left.

What fails the plugin (stage ``exercise``): the run ends in an internal error, or an exception
escapes pytest, or the generated plain or parametrized test fails with the switch on. What does
not: a test the plugin adds failing (a linter's findings on the generated module), a usage error
(the switch needs another option), a run that does not end in its share of time (``--looponfail``
waits for changes by design), the plugin's own code refusing the switch on purpose (a ``raise``
of its own, not a programming error: it needs configuration users give with it, an API key),
those are notes on the option (``not_exercised``); and an error that says the switch needs a
service or a capability this machine lacks (``unavailable``).
"""

from __future__ import annotations

import sys
from typing import Any

from sandboxverify.runtime.hosts._base import PluginLoadError
from sandboxverify.runtime.hosts._exercise import (
    Deadline,
    captured,
    need_of,
    reaching,
    step_timed_out,
)
from sandboxverify.runtime.hosts._pytest_exercise import (
    MODULE,
    PARAMETRIZED,
    PLAIN,
    GeneratedRunFailed,
    PluginRun,
    write_module,
)
from sandboxverify.runtime.hosts._pytest_run import (
    refused_on_purpose,
    scratch_args,
    scratch_directory,
)

#: pytest's exit statuses: internal error, usage error
_INTERNAL, _USAGE = 3, 4
#: statuses of a run that went through: passed, tests failed (the plugin's own items may), none
_ENDED = frozenset({0, 1, 5})
#: seconds a switch's run may take at most, at least, and those kept back for the load's end
_MOST, _LEAST, _KEPT = 10.0, 2.0, 1.0
_TAIL_LINES = 25


def run_switches(
    pytest: Any, run: PluginRun, switches: list[str], deadline: Deadline
) -> dict[str, tuple[str, str | None]]:
    """Each switch's verdict (``exercise``, ``note``); a switch that breaks pytest raises
    :class:`PluginLoadError` at stage ``exercise``."""
    verdicts: dict[str, tuple[str, str | None]] = {}
    for index, switch in enumerate(switches):
        share = (deadline.remaining() - _KEPT) / (len(switches) - index)
        if share < _LEAST:
            verdicts[switch] = ("not_exercised", "no time was left to run it")
            continue
        verdicts[switch] = _run_one(pytest, run, switch, deadline, min(share, _MOST))
    return verdicts


def _run_one(
    pytest: Any, run: PluginRun, switch: str, deadline: Deadline, seconds: float
) -> tuple[str, str | None]:
    watcher = _Outcomes()
    with scratch_directory() as directory:
        write_module(directory, [])
        args = [*scratch_args(directory), *run.select, switch, directory]
        with captured() as output, reaching() as reached:
            try:
                with deadline.bound(f"pytest {switch}", seconds):
                    status = int(pytest.main(args, plugins=[watcher, *run.objects()]))
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # older pytest lets a plugin's errors out
                if step_timed_out(exc):
                    return "not_exercised", f"pytest {switch} did not end within {seconds:.0f} s"
                need = need_of(exc, reached)
                if need is not None:
                    return "unavailable", f"with {switch}: {need}"
                failure = GeneratedRunFailed(f"pytest {switch} raised {type(exc).__name__}: {exc}")
                raise PluginLoadError("exercise", failure, where=f"its {switch} option") from exc
            finally:  # a later run in this process imports a module of that name afresh
                sys.modules.pop(MODULE[: -len(".py")], None)
    if watcher.internal_error is not None and refused_on_purpose(
        watcher.internal_error, run.package
    ):
        error = watcher.internal_error
        return "not_exercised", f"pytest {switch} alone is refused: {type(error).__name__}: {error}"
    return _judge(switch, status, watcher, output.text, (seconds, reached))


def _judge(
    switch: str,
    status: int,
    watcher: _Outcomes,
    output: str,
    bounds: tuple[float, list[str]],
) -> tuple[str, str | None]:
    """``bounds``: the seconds the run had, and what it reached outside the process for."""
    seconds, reached = bounds
    cause = watcher.internal_error
    if step_timed_out(cause):
        return "not_exercised", f"pytest {switch} did not end within {seconds:.0f} s"
    need = need_of(cause, reached) if cause is not None else None
    if need is not None:  # the switch asks for a service or a capability this machine lacks
        return "unavailable", f"with {switch}: {need}"
    where = f"its {switch} option"
    if cause is not None or status == _INTERNAL:
        failure = GeneratedRunFailed(
            f"pytest {switch} ended in an internal error (status {status}): {_tail(output)}"
        )
        raise PluginLoadError("exercise", failure, where=where) from cause
    broken = watcher.broken_generated()
    if broken:
        failure = GeneratedRunFailed(
            f"with pytest {switch}, the generated test {broken} failed: {_tail(output)}"
        )
        raise PluginLoadError("exercise", failure, where=where)
    if status == _USAGE:
        return "not_exercised", f"pytest {switch} alone is a usage error: {_last_line(output)}"
    if status not in _ENDED:  # interrupted: a collection error, pytest.exit with a failure
        failure = GeneratedRunFailed(
            f"pytest {switch} ended with status {status}, not running the tests through: "
            f"{_tail(output)}"
        )
        raise PluginLoadError("exercise", failure, where=where)
    return "passed", None


class _Outcomes:
    """The plugin this host hands pytest for a switch's run: the generated tests' outcomes."""

    def __init__(self) -> None:
        self.failed: list[str] = []
        self.internal_error: BaseException | None = None

    def pytest_runtest_logreport(self, report: Any) -> None:
        test = str(report.nodeid).rsplit("::", 1)[-1].split("[", 1)[0]
        if report.failed and test in (PLAIN, PARAMETRIZED):
            self.failed.append(f"{test} (at {report.when})")

    def pytest_internalerror(self, excinfo: Any) -> None:
        self.internal_error = excinfo.value

    def broken_generated(self) -> str:
        return ", ".join(dict.fromkeys(self.failed))


def _tail(text: str) -> str:
    kept = [line.rstrip() for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-_TAIL_LINES:])


def _last_line(text: str) -> str:
    kept = [line.strip() for line in text.splitlines() if line.strip()]
    return kept[-1] if kept else "no reason given"
