"""The runtime's account of why a module failed to import, read on the host side: package
code ran in the sandbox that wrote it, so nothing in it is trusted to have its shape."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: what the interpreter says when an import stops at a module not installed: the one
#: wording of it the host side reads (``.match`` where it must open the message)
NO_MODULE_NAMED = re.compile(r"No module named '([^']+)'")


def import_cause(item: Mapping[str, Any]) -> dict[str, Any]:
    """The runtime's ``cause`` of a module's failure (``runtime._causes``), each field of the
    type the rules expect, whatever package code left there."""
    cause = item.get("cause")
    cause = cause if isinstance(cause, Mapping) else {}
    missing = cause.get("missing")
    names = cause.get("names")
    swallowed = cause.get("swallowed")
    return {
        "missing": [str(n) for n in missing] if isinstance(missing, list) else [],
        "names": [[str(p) for p in n] for n in names if isinstance(n, list)]
        if isinstance(names, list)
        else [],
        "skip": cause.get("skip") is True,
        "requires_platform": [str(p) for p in required if isinstance(p, str)]
        if isinstance(required := cause.get("requires_platform"), list)
        else [],
        "python_test": str(cause.get("python_test") or ""),
        "frames": _frames(cause.get("frames")),
        # what the import looked for and did not find, the failure aside (``NotFound``)
        "swallowed": [str(n) for n in swallowed] if isinstance(swallowed, list) else [],
    }


def _frames(value: object) -> list[dict[str, Any]]:
    """The runtime's ``frames``, each a module and the names its statement imports."""
    frames = value if isinstance(value, list) else []
    return [
        {
            "module": str(frame.get("module") or ""),
            "imports": [str(n) for n in imports]
            if isinstance(imports := frame.get("imports"), list)
            else [],
        }
        for frame in frames
        if isinstance(frame, Mapping)
    ]
