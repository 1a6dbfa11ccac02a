"""The command line: commands, options merged with ``[tool.sandboxverify]``, text rendering,
live progress, and the GitHub Actions annotations that point back at the user's files.

The top of the host side: it may import every other room; nothing imports it.
"""

from __future__ import annotations

import gc

# What the command line imports (some 300 modules, 100 dataclasses) lives as long as the
# process: the cycle collector ran ~60 times over it during the imports, ~15 ms of every
# command's start, and found nothing to free. It runs again once they are done, and no longer
# looks at them (``freeze``).
_collecting = gc.isenabled()
gc.disable()
try:
    from sandboxverify.cli._main import main
finally:
    if _collecting:
        gc.freeze()
        gc.enable()

__all__ = ["main"]
