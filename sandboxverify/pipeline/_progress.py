"""What a check reports while it runs. The library emits these; only the CLI renders them.

Public: ``sandboxverify`` (and ``sandboxverify.pipeline``) export every event, ``Event`` and
``EventSink``; the README's "As a library" documents them. Fields may be added, never renamed.
Events come from the threads a check runs its interpreters on: a sink may be called from several
at once.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Union

from sandboxverify._frozen import frozen
from sandboxverify.report import PluginRecord, StageName, StageStatus
from sandboxverify.sandbox import Outcome


@frozen
class StageStarted:
    """A stage began; ``python`` is the run's interpreter version, ``None`` for the build."""

    stage: StageName
    python: str | None
    #: the run installs the wheel built from the given sdist (beside the given wheel's run)
    from_sdist: bool = False


@frozen
class StageFinished:
    """A stage ended: its status, its time and a one-line summary (``3 module(s) imported``)."""

    stage: StageName
    python: str | None
    status: StageStatus
    seconds: float
    summary: str = ""
    from_sdist: bool = False


@frozen
class CommandFinished:
    """A subprocess ended (an installer, the build backend, a runtime action)."""

    python: str | None
    outcome: Outcome
    from_sdist: bool = False


@frozen
class PluginLoaded:
    """The probe judged a plugin: its record (``ok``, ``error``) and the names it registered."""

    python: str
    plugin: PluginRecord
    tools: tuple[str, ...]
    from_sdist: bool = False


@frozen
class IsolationChosen:
    """Before any work: how code from the package will run, and, when the OS sandbox was
    wanted but is unavailable, a warning saying why and what stays possible."""

    isolation: str
    warning: str | None = None


#: what an ``on_event`` callable receives
Event = Union[StageStarted, StageFinished, CommandFinished, PluginLoaded, IsolationChosen]
EventSink = Callable[[Event], None]


def of_wheel_from_sdist(sink: EventSink) -> EventSink:
    """``sink``, hearing every event of a run as one of the wheel built from the given sdist
    (``from_sdist``): given a wheel and an sdist, an interpreter has a run of each."""

    def tagged(event: Event) -> None:
        if isinstance(event, (StageStarted, StageFinished, CommandFinished, PluginLoaded)):
            event = replace(event, from_sdist=True)
        sink(event)

    return tagged


def ignore(event: Event) -> None:
    """The default sink: a library call stays silent."""
