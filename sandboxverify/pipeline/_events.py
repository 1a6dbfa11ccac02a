"""What a check reports while it runs. The library emits these; only the CLI renders them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

from sandboxverify.report._model import PluginRecord, StageName, StageStatus
from sandboxverify.sandbox._subprocess import Outcome


@dataclass(frozen=True)
class StageStarted:
    stage: StageName
    python: str | None


@dataclass(frozen=True)
class StageFinished:
    stage: StageName
    python: str | None
    status: StageStatus
    seconds: float
    summary: str = ""


@dataclass(frozen=True)
class CommandFinished:
    python: str | None
    outcome: Outcome


@dataclass(frozen=True)
class PluginLoaded:
    python: str
    plugin: PluginRecord
    tools: tuple[str, ...]


@dataclass(frozen=True)
class IsolationChosen:
    """Before any work: how code from the package will run, and, when the OS sandbox was
    wanted but is unavailable, a warning saying why and what stays possible."""

    isolation: str
    warning: str | None = None


Event = Union[StageStarted, StageFinished, CommandFinished, PluginLoaded, IsolationChosen]
EventSink = Callable[[Event], None]


def ignore(event: Event) -> None:
    """The default sink: a library call stays silent."""
