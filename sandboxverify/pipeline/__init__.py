"""The driver: ``check()`` builds once, then runs each interpreter's sandbox through the stages
(in parallel) and turns what they found into the verdict; options, stage timing and events.

Imports the stages, build, sandbox and report rooms; never the CLI.

Public here: the events ``check(options, on_event)`` sends. They are imported on first use, so
the command line's options (``_options``) load without the sandbox machinery.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandboxverify.pipeline._progress import (
        CommandFinished,
        Event,
        EventSink,
        IsolationChosen,
        PluginLoaded,
        StageFinished,
        StageStarted,
    )

__all__ = [
    "CommandFinished",
    "Event",
    "EventSink",
    "IsolationChosen",
    "PluginLoaded",
    "StageFinished",
    "StageStarted",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'sandboxverify.pipeline' has no attribute {name!r}")
    return getattr(importlib.import_module("sandboxverify.pipeline._progress"), name)
