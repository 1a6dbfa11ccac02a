"""Which distribution is the application that loads an entry-point group (the ``applications``
action), and the host it ships for the group, if any.

An application names its group in its own code: every one of 21 applications measured quotes
the group (``"keyring.backends"``) in a non-test ``.py`` file, though often not inside the
``entry_points(...)`` call (a module constant, a class attribute, a loader's argument), so the
quoted literal anywhere is the signal. What must not be taken for the application: files that
bundle plugins for a freezer (``hook-*.py``: PyInstaller's hooks name many groups), test code,
and, for a group of one word, a distribution that merely uses the word as a string (such a group
needs the literal on a line that looks entry points up). Among those naming the group, the one
whose import name is the group's first component wins.

Stdlib only; reads files, never imports what it scans.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sandboxverify.runtime._discovery import canonical_name

if TYPE_CHECKING:
    from collections.abc import Iterable
    from importlib import metadata
    from typing import Any

#: a distribution (or import) name an installer can be asked for, and nothing else
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
#: a line that looks entry points up (what a one-word group's literal must share a line with)
_LOOKUP = re.compile(
    r"entry_points\s*\(|iter_entry_points\s*\(|\.select\s*\(|load_setuptools_entrypoints\s*\(|"
    r"\bgroup\s*="
)
#: directories whose code is a distribution's tests, not its application
_TEST_DIRS = frozenset({"test", "tests", "testing", "_tests", "_test"})
#: the extra a requirement of METADATA is declared under
_EXTRA = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")


def application_names(group: str) -> list[str]:
    """Names the application of ``group`` is likely published and imported under: its first
    dotted component (``keyring.backends`` -> ``keyring``); for a group without a dot also that
    name without trailing digits (``pyinstaller40`` -> ``pyinstaller``) and before its first
    underscore (``pandas_plotting_backends`` -> ``pandas``). Only names an installer takes."""
    first = group.split(".", 1)[0].strip()
    names = [first]
    if "." not in group:
        names += [first.rstrip("0123456789"), re.split(r"[_-]", first, maxsplit=1)[0]]
    found: dict[str, str] = {}
    for name in names:
        if len(name) >= 2 and _NAME.match(name):
            found.setdefault(canonical_name(name), name)
    return list(found.values())


def applications(request: dict[str, Any]) -> dict[str, Any]:
    """The ``applications`` action. ``request``: ``dist`` (the distribution under test),
    ``groups`` (``{group: application or None}``: the distribution a registry names for the
    group, else ``None`` to find it by the literal), ``paths`` (look in these directories instead
    of the interpreter's own: a candidate fetched to be confirmed)."""
    from importlib import metadata  # noqa: PLC0415 - the host imports this module for its names

    paths = list(request.get("paths") or ())
    dists = list(metadata.distributions(path=paths)) if paths else list(metadata.distributions())
    own_name = canonical_name(str(request["dist"]))
    own = None if paths else _named(dists, own_name, "")
    others = [d for d in dists if canonical_name(d.metadata["Name"] or "") != own_name]
    groups: dict[str, Any] = {}
    for group, named in dict(request["groups"]).items():
        found = _named(others, str(named), group) if named else _search(others, group)
        itself = own is not None and found is None and _is_own_application(own, group)
        groups[group] = {
            "application": _described(found, group) if found is not None else None,
            "itself": itself,
            "host": _shipped_host(found, group) if found is not None else None,
        }
    return {
        "ok": True,
        "error": None,
        "groups": groups,
        "extras": _extra_requirements(own) if own is not None else [],
        "installed": sorted({canonical_name(d.metadata["Name"] or "") for d in dists} - {""}),
    }


def _named(dists: Iterable[metadata.Distribution], name: str, group: str) -> Any:
    wanted = canonical_name(name)
    return next((d for d in dists if canonical_name(d.metadata["Name"] or "") == wanted), None)


def _search(dists: list[metadata.Distribution], group: str) -> metadata.Distribution | None:
    """The distribution that names ``group``: one whose import name is the group's first
    component first, then one that names it on a line looking entry points up, then (a dotted
    group only) one that names it anywhere."""
    matching = [d for d in dists if _named_after(d, group)]
    for dist in matching:
        if _naming(dist, group)[0]:
            return dist
    anywhere: list[metadata.Distribution] = []
    for dist in dists:
        if dist in matching:
            continue
        named, looked_up = _naming(dist, group)
        if looked_up:
            return dist
        if named:
            anywhere.append(dist)
    return anywhere[0] if anywhere and "." in group else None


def _confirms(dist: metadata.Distribution, group: str) -> bool:
    """Does ``dist`` name ``group`` the way :func:`_search` accepts?"""
    named, looked_up = _naming(dist, group)
    return looked_up or (named and ("." in group or _named_after(dist, group)))


def _named_after(dist: metadata.Distribution, group: str) -> bool:
    """Is one of ``dist``'s import names the group's first component (or, for a one-word group,
    its stem)?"""
    return bool({_import_key(name) for name in application_names(group)} & _top_level(dist))


def _is_own_application(dist: metadata.Distribution, group: str) -> bool:
    """The distribution under test loads its own group (twine its commands): it is named after
    the group and names it. Merely naming it is not enough: a plugin may well mention its
    group."""
    return _named_after(dist, group) and _naming(dist, group)[0]


def _described(dist: metadata.Distribution, group: str) -> dict[str, Any]:
    return {
        "name": dist.metadata["Name"],
        "version": dist.version,
        "names_group": _confirms(dist, group),
    }


def _shipped_host(dist: metadata.Distribution, group: str) -> dict[str, str] | None:
    """The host ``dist`` ships for ``group``: its entry point named after the group in our
    host plugin group."""
    from sandboxverify.runtime.hosts import HOST_PLUGIN_GROUP  # noqa: PLC0415

    for entry_point in dist.entry_points:
        if entry_point.group == HOST_PLUGIN_GROUP and entry_point.name.strip() == group:
            return {"dist": str(dist.metadata["Name"]), "value": entry_point.value}
    return None


def _naming(dist: metadata.Distribution, group: str) -> tuple[bool, bool]:
    """Does ``dist``'s own code quote ``group``, and does it on a line that looks entry points
    up?"""
    needles = tuple(f"{quote}{group}{quote}" for quote in ("'", '"'))
    raw = tuple(needle.encode() for needle in needles)
    named = False
    for file in _own_code(dist):
        try:
            with open(file, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        if not any(needle in data for needle in raw):
            continue
        named = True
        lines = data.decode("utf-8", "replace").splitlines()
        if any(_LOOKUP.search(line) for line in lines if any(n in line for n in needles)):
            return True, True
    return named, False


def _own_code(dist: metadata.Distribution) -> Iterable[str]:
    """The ``.py`` files ``dist`` installed, but its tests and freezer hooks."""
    for path in dist.files or ():
        parts = path.parts
        name = parts[-1] if parts else ""
        if not name.endswith(".py") or ".." in parts:
            continue
        if _TEST_DIRS & set(parts[:-1]) or name.startswith(("test_", "hook-")):
            continue
        if name.endswith("_test.py") or name == "conftest.py":
            continue
        yield str(dist.locate_file(path))


def _top_level(dist: metadata.Distribution) -> set[str]:
    """The import names ``dist`` provides (``top_level.txt``, else what it installed)."""
    listed = dist.read_text("top_level.txt")
    if listed:
        return {_import_key(line) for line in listed.split() if line.strip()}
    names: set[str] = set()
    for path in dist.files or ():
        parts = path.parts
        if not parts or parts[0] == ".." or parts[0].endswith((".dist-info", ".data")):
            continue
        if len(parts) > 1:
            names.add(_import_key(parts[0]))
        elif parts[0].endswith(".py"):
            names.add(_import_key(parts[0][:-3]))
    return names


def _import_key(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(".", "_")


def _extra_requirements(dist: metadata.Distribution) -> list[dict[str, str]]:
    """Every requirement ``dist`` declares under an extra: ``{"extra", "requirement"}`` (the
    line as written; the host side parses it)."""
    found: list[dict[str, str]] = []
    for line in dist.requires or ():
        extra = _EXTRA.search(line)
        if extra is not None:
            found.append({"extra": extra.group(1), "requirement": line})
    return found
