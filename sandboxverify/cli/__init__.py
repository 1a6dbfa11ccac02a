"""The command line: commands, options merged with ``[tool.sandboxverify]``, text rendering,
live progress, and the GitHub Actions annotations that point back at the user's files.

The top of the host side: it may import every other room; nothing imports it.
"""

from __future__ import annotations

from sandboxverify.cli._main import main

__all__ = ["main"]
