"""Given a wheel and an sdist, both are verified: each interpreter has a run of the given wheel
and one of the wheel built from the sdist, and where the two differ is a failure
(``artifact_mismatch``): in what they hold (``artifacts._compare``), or in a stage that passes
with one and fails with the other.

What users install from the sdist must be what the given wheel is: a module the sdist lacks
passes unseen when only the given wheel is installed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from sandboxverify._frozen import frozen
from sandboxverify.artifacts import (
    SDIST_LACKS,
    WHEEL_STALE,
    BuildResult,
    compare_wheels,
    fits,
    select_wheel,
)
from sandboxverify.pipeline._state import Built
from sandboxverify.report import Failure, Run
from sandboxverify.sandbox import Interpreter

if TYPE_CHECKING:  # imported ahead at run time: see _headstart
    from sandboxverify.pipeline._run import RunResult


@frozen
class PlannedRun:
    """One run of a check: an interpreter (with its label) and which wheel it installs."""

    interpreter: Interpreter
    label: str
    #: the wheel built from the given sdist, not the given one (or the one built from a tree)
    from_sdist: bool = False


def planned_runs(built: Built) -> list[PlannedRun]:
    """A run per interpreter; given a wheel and an sdist, each interpreter the wheel built from
    the sdist fits has a second run, of that wheel, right after the given wheel's."""
    wheel = built.result.from_sdist
    runs: list[PlannedRun] = []
    for interpreter, label in built.pythons:
        runs.append(PlannedRun(interpreter, label))
        if wheel is not None and fits(wheel, interpreter.version_info):
            runs.append(PlannedRun(interpreter, label, from_sdist=True))
    return runs


def compared(
    result: BuildResult, pythons: Sequence[tuple[Interpreter, str]]
) -> tuple[tuple[Failure, ...], tuple[str, ...]]:
    """Where the given wheel that fits each interpreter and the wheel built from the sdist
    differ in what they hold (each pair once), and a note when that wheel fits none of the
    interpreters: it is then neither installed nor compared."""
    wheel = result.from_sdist
    if wheel is None or result.sdist is None:
        return (), ()
    pairs = {}
    for interpreter, _ in pythons:
        given = select_wheel(result.wheels, interpreter.version_info) if result.wheels else None
        if given is not None and fits(wheel, interpreter.version_info):
            pairs[given.path] = given
    if not pairs and not any(fits(wheel, python.version_info) for python, _ in pythons):
        versions = ", ".join(interpreter.version for interpreter, _ in pythons)
        note = (
            f"{wheel.path.name}, the wheel built from {result.sdist.path.name}, fits none of "
            f"the interpreters verified (Python {versions}): it was neither installed nor "
            "compared with the given wheels; verify on the Python that built it too"
        )
        return (), (note,)
    sdist = result.sdist.path.name
    return tuple(f for given in pairs.values() for f in compare_wheels(given, wheel, sdist)), ()


def with_differences(
    planned: Sequence[PlannedRun], results: Sequence[RunResult]
) -> list[RunResult]:
    """``results`` (one per planned run, in order), where a stage passes with one wheel of an
    interpreter and fails with the other: an ``artifact_mismatch`` for the run it failed in."""
    found = list(results)
    for given, from_sdist in _pairs(planned):
        for failing, passing in ((given, from_sdist), (from_sdist, given)):
            failure = _difference(found[failing].run, found[passing].run)
            if failure is not None:
                result = found[failing]
                found[failing] = replace(result, failures=(*result.failures, failure))
    return found


def _pairs(planned: Sequence[PlannedRun]) -> Iterator[tuple[int, int]]:
    """The indexes of each interpreter's two runs: the given wheel's, then the other's."""
    for index, run in enumerate(planned):
        if run.from_sdist and index and planned[index - 1].label == run.label:
            yield index - 1, index


def _difference(failing: Run, passing: Run) -> Failure | None:
    """``failing``'s stages that passed in ``passing`` (the other wheel on its interpreter)."""
    passed = {stage.name for stage in passing.stages if stage.status == "passed"}
    stages = [s.name for s in failing.stages if s.status == "failed" and s.name in passed]
    if not stages:
        return None
    loaded = {plugin.name for plugin in passing.plugins if plugin.ok}
    plugins = [repr(p.name) for p in failing.plugins if not p.ok and p.name in loaded]
    mine, theirs = ("the wheel built from the sdist", "the given wheel")
    if not failing.wheel_built:
        mine, theirs = theirs, mine
    where = f" (plugin(s) {', '.join(plugins)} load only with {theirs})" if plugins else ""
    return Failure(
        "artifact_mismatch",
        f"on Python {failing.python} {mine} ({failing.wheel}) fails where {theirs} "
        f"({passing.wheel}) passes: stage(s) {', '.join(stages)}{where}",
        python=failing.python,
        hint=SDIST_LACKS if failing.wheel_built else WHEEL_STALE,
        wheel=failing.wheel,
        wheel_built=failing.wheel_built,
    )
