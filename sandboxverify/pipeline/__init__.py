"""The driver: ``check()`` builds once, then runs each interpreter's sandbox through the stages
(in parallel) and turns what they found into the verdict; ``record_in_sandbox`` builds and
installs as a check does, then records there; ``survey()`` checks an application's plugins
with two of its releases; stage timing and the events ``check(options, on_event)`` sends.

Imports the options, stages, build, sandbox and report rooms; never the CLI. Its names are imported
on first use, so the command line's options load without the sandbox machinery.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandboxverify.pipeline._check import check
    from sandboxverify.pipeline._progress import (
        CommandFinished,
        Event,
        EventSink,
        IsolationChosen,
        PluginLoaded,
        StageFinished,
        StageStarted,
    )
    from sandboxverify.pipeline._record_in_sandbox import record_in_sandbox
    from sandboxverify.pipeline._survey import (
        PluginSurveyed,
        SurveyEvent,
        SurveyStarted,
        finished,
        survey,
    )

__all__ = [
    "CommandFinished",
    "Event",
    "EventSink",
    "IsolationChosen",
    "PluginLoaded",
    "PluginSurveyed",
    "StageFinished",
    "StageStarted",
    "SurveyEvent",
    "SurveyStarted",
    "check",
    "finished",
    "record_in_sandbox",
    "survey",
]

_MODULES = {
    "check": "_check",
    "record_in_sandbox": "_record_in_sandbox",
    "survey": "_survey",
    "finished": "_survey",
    "PluginSurveyed": "_survey",
    "SurveyEvent": "_survey",
    "SurveyStarted": "_survey",
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'sandboxverify.pipeline' has no attribute {name!r}")
    module = _MODULES.get(name, "_progress")
    return getattr(importlib.import_module(f"sandboxverify.pipeline.{module}"), name)
