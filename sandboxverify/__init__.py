"""sandboxverify: prove a Python package works when a stranger installs it.

The package root stays importable with the standard library alone: a copy of it travels into
every sandbox with the runtime. The host-side API (``check`` and friends) is imported lazily.
"""

from __future__ import annotations

import importlib

from sandboxverify._version import __version__

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (~10 ms in every sandbox process)
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from sandboxverify._errors import ConfigError, SandboxVerifyError, UsageError
    from sandboxverify.options import CheckOptions
    from sandboxverify.pipeline import (
        CommandFinished,
        Event,
        EventSink,
        IsolationChosen,
        PluginLoaded,
        StageFinished,
        StageStarted,
        check,
    )
    from sandboxverify.report import (
        Failure,
        ImportsRecord,
        PluginRecord,
        Report,
        Run,
        ScriptRecord,
        SmokeRecord,
        ToolRecord,
    )

__all__ = [
    "CheckOptions",
    "CommandFinished",
    "ConfigError",
    "Event",
    "EventSink",
    "Failure",
    "ImportsRecord",
    "IsolationChosen",
    "PluginLoaded",
    "PluginRecord",
    "Report",
    "Run",
    "SandboxVerifyError",
    "ScriptRecord",
    "SmokeRecord",
    "StageFinished",
    "StageStarted",
    "ToolRecord",
    "UsageError",
    "__version__",
    "check",
]

_LAZY = {
    "check": "sandboxverify.pipeline._check",
    "CheckOptions": "sandboxverify.options",
    "ConfigError": "sandboxverify._errors",
    "SandboxVerifyError": "sandboxverify._errors",
    "UsageError": "sandboxverify._errors",
    "Failure": "sandboxverify.report._model",
    "PluginRecord": "sandboxverify.report._model",
    "Report": "sandboxverify.report._model",
    "Run": "sandboxverify.report._model",
    "ToolRecord": "sandboxverify.report._model",
    "ImportsRecord": "sandboxverify.report._records",
    "ScriptRecord": "sandboxverify.report._records",
    "SmokeRecord": "sandboxverify.report._records",
    "CommandFinished": "sandboxverify.pipeline._progress",
    "Event": "sandboxverify.pipeline._progress",
    "EventSink": "sandboxverify.pipeline._progress",
    "IsolationChosen": "sandboxverify.pipeline._progress",
    "PluginLoaded": "sandboxverify.pipeline._progress",
    "StageFinished": "sandboxverify.pipeline._progress",
    "StageStarted": "sandboxverify.pipeline._progress",
}


def __getattr__(name: str) -> Any:
    # not ``runtime.imported_on_first_use``: a pytest session imports this package (for our
    # plugin), and must not pay for the runtime's package too
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sandboxverify' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
