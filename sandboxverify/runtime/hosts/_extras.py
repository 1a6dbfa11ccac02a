"""What a plugin's distribution declares for its optional parts: the distribution found by the
entry point, and the requirements it lists under extras (``Requires-Dist: x; extra == "y"``).

An application that loads a plugin lazily (fsspec, SQLAlchemy) or skips it by design
(opentelemetry) leaves out what needs an extra the user did not install: that is the plugin
asking for an extra, not a broken plugin. ``importlib.metadata`` is imported only here, by the
hosts that ask.
"""

from __future__ import annotations

import re
from importlib import metadata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandboxverify.runtime._protocol import EntryPointRef

_EXTRA = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def normalized(name: str) -> str:
    """A distribution or module name as PEP 503 compares them (``Foo_Bar`` -> ``foo-bar``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def distribution_of(ref: EntryPointRef) -> metadata.Distribution | None:
    """The installed distribution that declares this entry point."""
    for dist in metadata.distributions():
        try:
            points = dist.entry_points
        except Exception:
            continue
        if any((p.group, p.name, p.value) == (ref.group, ref.name, ref.value) for p in points):
            return dist
    return None


def requirements_of_extra(dist: metadata.Distribution, extra: str | None = None) -> list[str]:
    """The requirements ``dist`` lists under ``extra`` (under any extra when ``None``)."""
    found = []
    for requirement in dist.requires or ():
        _, _, marker = requirement.partition(";")
        match = _EXTRA.search(marker)
        if match and (extra is None or normalized(match.group(1)) == normalized(extra)):
            found.append(requirement.strip())
    return found


def requirement_name(requirement: str) -> str:
    match = _NAME.match(requirement)
    return normalized(match.group(1)) if match else ""


def extra_providing(ref: EntryPointRef, module: str) -> str | None:
    """``DIST[EXTRA] (requirement)``: the extra of the plugin's distribution that brings
    ``module``, by name (``pygtrie`` for ``pygtrie``); ``None`` when no extra names it."""
    dist = distribution_of(ref)
    if dist is None:
        return None
    wanted = normalized(module.split(".", 1)[0])
    for requirement in requirements_of_extra(dist):
        if requirement_name(requirement).replace("-", "") == wanted.replace("-", ""):
            match = _EXTRA.search(requirement.partition(";")[2])
            if match:
                return f"{dist.metadata['Name']}[{match.group(1)}] ({requirement})"
    return None


def missing_module(exc: BaseException) -> str | None:
    """The module a failed import could not find, following ``raise ... from`` causes."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ModuleNotFoundError) and seen.name:
            return seen.name
        seen = seen.__cause__ or seen.__context__
    return None
