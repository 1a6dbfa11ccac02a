"""What a failing import was importing, by full dotted name, frame by frame.

``ModuleNotFoundError.name`` names only what was missing (``alembic``); the host also needs
what the module was importing when it failed (``alembic.testing.requirements``) to tell a
module that fails only inside another distribution's test machinery from one that lacks a
dependency. Each traceback frame gives its module and the import statement it stopped at,
read from its source (the import system's own frames are not in the traceback).
"""

from __future__ import annotations

import ast
import linecache
from types import FrameType
from typing import Any

#: frames recorded, from the outermost: the host reads only the way in from the module
_MOST_FRAMES = 40
#: the import system's frames, when the interpreter left them in: they import nothing
_IMPORT_SYSTEM = ("importlib._bootstrap", "importlib._bootstrap_external")


def frames_of(exc: BaseException) -> list[dict[str, Any]]:
    """Each frame of ``exc``'s traceback, outermost first: ``module`` (its ``__name__``) and
    ``imports``, the dotted names its failing statement imports (none unless an import)."""
    trees: dict[str, ast.Module | None] = {}
    found: list[dict[str, Any]] = []
    for frame, line in _way_in(exc)[:_MOST_FRAMES]:
        name, package = frame.f_globals.get("__name__"), frame.f_globals.get("__package__")
        where = frame.f_code.co_filename
        if where not in trees:
            trees[where] = _parse(where)
        imports = _imported_at(trees[where], line, package if isinstance(package, str) else "")
        found.append({"module": name if isinstance(name, str) else "", "imports": imports})
    return found


def _way_in(exc: BaseException) -> list[tuple[FrameType, int]]:
    """The frames to where the failure began: a module that re-raises an import's failure
    (``except ImportError: raise ImportError("install pytest")``, or ``raise ... from``)
    failed at that import, so the way goes on into the exception it handled."""
    way = _frames(exc)
    seen = [exc]
    link = exc
    while isinstance(link, ImportError) or link.__cause__ is not None:
        handled = link.__cause__ or link.__context__
        if handled is None or any(handled is other for other in seen):
            break
        seen.append(handled)
        inner = _frames(handled)
        at = next((i for i, (f, _) in enumerate(way) if inner and f is inner[0][0]), None)
        if at is None:
            break
        way, link = way[:at] + inner, handled
    return way


def _frames(exc: BaseException) -> list[tuple[FrameType, int]]:
    found: list[tuple[FrameType, int]] = []
    tb = exc.__traceback__
    while tb is not None:
        line = tb.tb_lineno
        if tb.tb_frame.f_globals.get("__name__") not in _IMPORT_SYSTEM and isinstance(line, int):
            found.append((tb.tb_frame, line))
        tb = tb.tb_next
    return found


def _parse(where: str) -> ast.Module | None:
    source = "".join(linecache.getlines(where))
    if not source:
        return None
    try:
        return ast.parse(source, where)
    except (SyntaxError, ValueError):  # a module we cannot read back: nothing to say
        return None


def _imported_at(tree: ast.Module | None, line: int, package: str) -> list[str]:
    """The modules the import statement(s) spanning ``line`` import: ``from a.b import c``
    imports ``a.b`` and, if it is a module, ``a.b.c``."""
    names: list[str] = []
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if not node.lineno <= line <= (node.end_lineno or node.lineno):
            continue
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
            continue
        base = _absolute(node.module or "", node.level, package)
        if base:
            names.append(base)
            names.extend(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return list(dict.fromkeys(names))


def _absolute(module: str, level: int, package: str) -> str:
    """``from ..x import y`` in package ``a.b.c``: ``a.b.x``."""
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts) or not parts:
        return ""
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base)
