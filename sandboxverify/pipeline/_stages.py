"""Stages as they happen: timed, recorded in the report, announced to the event sink; and the
commands they run, announced as each one ends."""

from __future__ import annotations

import time

from sandboxverify._frozen import frozen
from sandboxverify.pipeline._progress import CommandFinished, EventSink, StageFinished, StageStarted
from sandboxverify.report import Failure, Stage, StageName, StageStatus
from sandboxverify.sandbox import Command, Outcome, Runner


class StageTimer:
    """Times a stage, records it and tells the event sink when it starts and ends."""

    def __init__(
        self, stages: list[Stage], name: StageName, python: str | None, on_event: EventSink
    ) -> None:
        self.stages = stages
        self.name = name
        self.python = python
        self.on_event = on_event
        self.failures: list[Failure] = []
        self.summary = ""
        self.started = 0.0
        #: what the stage's own work took, when it was done ahead (not the wall time since start)
        self.own_seconds: float | None = None

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    def fail_with(self, *failures: Failure | None) -> None:
        self.failures.extend(f for f in failures if f is not None)

    def start(self) -> StageTimer:
        self.started = time.perf_counter()
        self.on_event(StageStarted(self.name, self.python))
        return self

    def finish(self, *, seconds: float | None = None, crashed: bool = False) -> None:
        """Record the stage; ``seconds`` when its own work took less than the wall time since
        :meth:`start` (it waited for another stage before it could be judged)."""
        if seconds is None:
            seconds = time.perf_counter() - self.started
        status: StageStatus = "failed" if self.failures or crashed else "passed"
        self.stages.append(Stage(self.name, status, seconds))
        summary = self.summary
        if status == "failed":
            summary = f"{len(self.failures)} failure(s)" + (f"; {summary}" if summary else "")
        self.on_event(StageFinished(self.name, self.python, status, seconds, summary))

    def __enter__(self) -> StageTimer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.finish(seconds=self.own_seconds, crashed=exc_info[0] is not None)


@frozen
class AnnouncingRunner:
    """A check's runner: ``runner`` runs each command, and the event sink hears how it ended."""

    runner: Runner
    on_event: EventSink

    def run(self, command: Command, python: str | None) -> Outcome:
        outcome = self.runner.run(command, python)
        self.on_event(CommandFinished(python, outcome))
        return outcome

    def ended(self, outcome: Outcome, python: str | None) -> None:
        self.runner.ended(outcome, python)
        self.on_event(CommandFinished(python, outcome))
