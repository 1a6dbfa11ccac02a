"""``tomllib``, or ``tomli`` before Python 3.11: the one place the host side picks it."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older hosts
    import tomli as tomllib

__all__ = ["tomllib"]
