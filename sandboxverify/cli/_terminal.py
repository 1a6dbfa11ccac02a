"""What the output stream can take, by the conventions terminal programs share.

- ``NO_COLOR`` (any non-empty value): no colour (https://no-color.org), whatever else is set.
- ``FORCE_COLOR`` (any non-empty value): colour even when the output is not a terminal (a CI
  log viewer that renders ANSI colours, a pager).
- ``TERM=dumb``: no colour and no updates in place (Emacs shells, some editors' consoles).
- Updates in place (a status line rewritten a few times a second) only on a terminal, never in
  CI (``CI``, ``GITHUB_ACTIONS``): a log gets plain lines, one per finished stage.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TextIO

_FALSE = ("", "0", "false", "no")


def colour(stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    """Whether to colour what goes to ``stream``."""
    env = os.environ if env is None else env
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    return env.get("TERM") != "dumb" and _isatty(stream)


def live(stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``stream`` takes a status line rewritten in place."""
    env = os.environ if env is None else env
    in_ci = env.get("CI", "").lower() not in _FALSE or env.get("GITHUB_ACTIONS") == "true"
    return env.get("TERM") != "dumb" and not in_ci and _isatty(stream)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or a fake stream
        return False
