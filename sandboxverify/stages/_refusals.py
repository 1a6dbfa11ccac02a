"""Modules written to refuse to be imported: a tombstone left where a module used to be, a stub
that says where its code went.

distributed 2026.8.0 ships ``distributed/bokeh.py``, whose one statement is ``raise
ImportError("The distributed.bokeh module has moved to distributed.dashboard")``: nothing of the
package imports it, and whoever imports it by its old name reads where to go. Such a module is
excused (reason ``refuses``) when all of these hold:

- its failure was raised by a statement of its own (the way in to it ends in the module, at no
  import), lacking nothing: no module, no name;
- its source raises at its top level (not only inside a function or a class);
- it is not one of the wheel's top-level modules, no entry point reaches it, and no import
  statement of the package's imports it but where its failure is caught, or under a version
  test false here (``_version_gates.importers_here``), or in a module in the same position. A
  loader's table that spells its dotted name out does not count: docutils 0.23 maps the
  ``markdown`` parser to ``docutils.parsers.commonmark_wrapper``, which raises "Parsing
  "CommonMark" requires one of the packages ('pycmark', 'myst', 'recommonmark')" unless one is
  installed; only users who ask for that parser by name meet it.

A module that raises by mistake where the package imports it fails as before: its users meet it.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sandboxverify.artifacts import Artifact
from sandboxverify.report import ExcusedModule
from sandboxverify.stages._import_causes import import_cause
from sandboxverify.stages._integrations import own_first_line, unreferenced
from sandboxverify.stages._version_gates import importers_here
from sandboxverify.stages._wheel_imports import parsed_modules


def refusals(
    failed: Sequence[Mapping[str, Any]],
    *,
    judged: Collection[str],
    wheel: Artifact,
    version: tuple[int | str, ...],
) -> list[ExcusedModule]:
    """The modules of ``failed`` not ``judged`` yet that were written to refuse import."""
    said: dict[str, str] = {}
    for item in failed:
        module = str(item.get("module") or "")
        if not module or module in judged or module in wheel.top_level or item.get("reached_by"):
            continue
        words = _own_refusal(module, item)
        if words is not None:
            said[module] = words
    if not said:
        return []
    raising = _raising_at_top_level(wheel, said)
    importers = importers_here(wheel.path, raising, version, statements_only=True)
    lone = unreferenced(raising, importers)
    return [_excuse(module, said[module]) for module in sorted(lone)]


def _own_refusal(module: str, item: Mapping[str, Any]) -> str | None:
    """The first line of what ``module`` raised, when its own statement raised it lacking
    nothing; ``None`` otherwise."""
    cause = import_cause(item)
    if cause["missing"] or cause["names"] or cause["python_test"]:
        return None
    frames = cause["frames"]
    if not frames or frames[-1]["module"] != module or frames[-1]["imports"]:
        return None
    return own_first_line(item) or None


def _raising_at_top_level(wheel: Artifact, modules: Collection[str]) -> list[str]:
    """Those of ``modules`` whose source holds a ``raise`` outside any function or class."""
    found = []
    for module, _, tree in parsed_modules(wheel.path, containing=b"raise"):
        if module in modules and _raises_at_top_level(tree):
            found.append(module)
    return found


def _raises_at_top_level(tree: ast.Module) -> bool:
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        pending.extend(ast.iter_child_nodes(node))
    return False


def _excuse(module: str, words: str) -> ExcusedModule:
    return ExcusedModule(
        module,
        "refuses",
        "it refuses to be imported, raising at its own top level and lacking nothing: "
        f"{words!r}; no import statement of the package imports it and no entry point "
        "reaches it, so only those who ask for it by name meet this, as its author wrote it "
        "for them",
    )
