"""Tracebacks that show the plugin's frames, not the machinery that loaded it."""

from __future__ import annotations

import importlib
import os

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (~10 ms in every sandbox process)
TYPE_CHECKING = False

if TYPE_CHECKING:
    import traceback
    from typing import Any

_RUNTIME_DIR = os.path.dirname(os.path.realpath(__file__))
_IMPORTLIB_DIR = os.path.dirname(os.path.realpath(importlib.__file__))


def format_traceback(exc: BaseException) -> str:
    """The traceback without the runtime's own frames: they only hide the plugin's."""
    import traceback  # noqa: PLC0415 - only a failure needs it, and most runs have none

    summary = traceback.TracebackException.from_exception(exc)
    for level in _chain(summary):
        kept = [frame for frame in level.stack if not _machinery(frame.filename)]
        level.stack = traceback.StackSummary.from_list(kept)
    return "".join(summary.format())


def _machinery(filename: str) -> bool:
    return filename.startswith((_RUNTIME_DIR, _IMPORTLIB_DIR, "<frozen importlib"))


def _chain(summary: traceback.TracebackException) -> list[traceback.TracebackException]:
    levels: list[traceback.TracebackException] = []
    current: Any = summary
    while current is not None and current not in levels:
        levels.append(current)
        current = current.__cause__ or current.__context__
    return levels
