"""The house style the design asks for, held by the code itself: short functions, small modules,
and no private name of one module used by another (a room's face says what others may use;
``lint-imports`` holds the modules, this the names)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import ROOT

PACKAGE = ROOT / "sandboxverify"
SOURCES = sorted(PACKAGE.rglob("*.py"))
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 450


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_no_function_is_longer_than_80_lines(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"  # type: ignore[operator]
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES  # type: ignore[operator]
    ]
    assert not long, f"split into named steps: {', '.join(long)}"


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_no_module_is_longer_than_450_lines(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_MODULE_LINES


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_no_private_name_of_another_module_is_imported(path: Path) -> None:
    """``from m import _helper`` reaches into ``m``; a private *module* is the import contract's
    business (it may be imported from inside its own package only)."""
    reached = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(
            "sandboxverify"
        ):
            continue
        for alias in node.names:
            private = alias.name.startswith("_") and not alias.name.startswith("__")
            module = ROOT.joinpath(*f"{node.module}.{alias.name}".split("."))
            is_module = module.with_suffix(".py").is_file() or (module / "__init__.py").is_file()
            if private and not is_module:
                reached.append(f"{node.module}.{alias.name}")
    assert not reached, f"name it without an underscore, or keep it in its module: {reached}"


#: what travels into sandboxes: the standard library's dataclasses, not the host side's records
_RUNTIME_SIDE = ("sandboxverify/runtime/", "sandboxverify/harness.py")


@pytest.mark.parametrize(
    "path", [p for p in SOURCES if not _name(p).startswith(_RUNTIME_SIDE)], ids=_name
)
def test_host_side_frozen_records_are_made_by_frozen(path: Path) -> None:
    """One way to make a frozen record on the host side (``sandboxverify._frozen``): compiling
    ``dataclass(frozen=True)``'s methods cost ~0.5 ms a class at every start."""
    compiled = [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "dataclass"
        and any(k.arg == "frozen" for k in node.keywords)
    ]
    assert not compiled, f"decorate with sandboxverify._frozen.frozen (lines {compiled})"
