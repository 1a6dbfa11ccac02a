"""Modules a package imports only on other Pythons: read from its source, never run.

A package that uses what a newer Python adds keeps that code in a module of its own and imports
it under a test of the version (robotframework's ``typealiasresolver``, which needs
``typing.TypeAliasType``, under ``if sys.version_info >= (3, 12):``). On an older Python the
package never imports it, so its failure there is met by nobody. Imports under
``if TYPE_CHECKING:`` never run either. A test this module cannot evaluate counts as taken: the
module is then judged as any other.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from sandboxverify._frozen import frozen
from sandboxverify.report import ExcusedModule
from sandboxverify.stages._wheel_imports import parsed_modules, resolved_import

_TYPE_CHECKING = "TYPE_CHECKING"
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


@frozen
class _Import:
    #: the module that imports
    importer: str
    #: the dotted name imported, or spelled out as a string
    name: str
    #: the test, false here, of a branch the import sits in (its source); ``""``: taken here
    untaken: str
    #: it sits in a ``try`` whose handler catches its failure (``except ImportError``)
    guarded: bool = False
    #: only spelled out as a string (a loader's table of dotted names), not an import statement
    by_name: bool = False


def _found_imports(
    wheel: Path, modules: Collection[str], version: tuple[int | str, ...]
) -> dict[str, list[_Import]]:
    """Each of ``modules`` and the imports of it in the wheel's other modules."""
    wanted = set(modules)
    if not wanted:
        return {}
    # sys.version_info is five long: ``== (3, 11, 7)`` is false and ``> (3, 11, 7)`` true
    version = (*version[:3], "final", 0) if len(version) == 3 else version
    flags = _version_flags(wheel, version)
    found: dict[str, list[_Import]] = {module: [] for module in wanted}
    tails = {module.rpartition(".")[2].encode() for module in wanted}
    unparsed: list[tuple[str, bytes]] = []
    for importer, package, tree in parsed_modules(wheel, containing_any=tails, unparsed=unparsed):
        base = importer if package else importer.rpartition(".")[0]
        tests = _Tests(version, flags, _bound(tree, base))
        tests.local.update(flags.get(importer, {}))
        for item in _imports(tree, importer, base, tests):
            for module in wanted:
                if importer == module or importer.startswith(f"{module}."):
                    continue
                if item.name == module or item.name.startswith(f"{module}."):
                    found[module].append(item)
    # a module this interpreter cannot read may import any that it names: taken, unguarded
    for importer, source in unparsed:
        for module in wanted:
            inside = importer == module or importer.startswith(f"{module}.")
            if not inside and module.rpartition(".")[2].encode() in source:
                found[module].append(_Import(importer, module, ""))
    return found


def importers_here(
    wheel: Path,
    modules: Collection[str],
    version: tuple[int | str, ...],
    *,
    statements_only: bool = False,
) -> dict[str, tuple[str, ...]]:
    """Each of ``modules`` and the other modules of the wheel whose import of it runs on
    Python ``version`` and lets its failure through: not under a test false here, not in a
    ``try`` that catches it (distributed imports its bokeh dashboard in ``try: ... except
    ImportError``, and goes on without it). ``statements_only``: an import statement, not a
    dotted name spelled out in a string (a loader's table, read when a user asks for it)."""
    found = _found_imports(wheel, modules, version)
    return {
        module: tuple(
            dict.fromkeys(
                i.importer
                for i in items
                if not i.untaken and not i.guarded and not (statements_only and i.by_name)
            )
        )
        for module, items in found.items()
    }


def imported_elsewhere_only(
    wheel: Path, modules: Collection[str], version: tuple[int | str, ...]
) -> dict[str, str]:
    """Each of ``modules`` that other modules of the wheel import, every one of them under a
    test false on Python ``version`` (``if sys.version_info >= (3, 12):``, ``if PY312:``
    with ``PY312`` a version test, the ``else`` of ``if sys.version_info < (3, 12):``, or
    ``if TYPE_CHECKING:``), and the excuse in words, naming each importer and its test. A
    module's own submodules do not count; a module nothing imports, or one import of which
    is taken here, is not listed."""
    found = _found_imports(wheel, modules, version)
    gated: dict[str, str] = {}
    for module, items in found.items():
        if items and all(item.untaken for item in items):
            where = "; ".join(
                dict.fromkeys(f"{item.importer}, under `{item.untaken}`" for item in items)
            )
            if all(_TYPE_CHECKING in item.untaken for item in items):
                gated[module] = f"the package imports it only for type checkers ({where})"
            else:
                gated[module] = (
                    f"the package imports it only on other Pythons ({where}), which this "
                    "check does not run: check on one with --python"
                )
    return gated


def other_python_excuse(
    module: str, cause: Mapping[str, Any], gated: Mapping[str, str], own: Collection[str]
) -> ExcusedModule | None:
    """Code for other Pythons: the package imports it only under a version test false here,
    or it refused this Python from its own test at import (unless it is what users import,
    the wheel's top level: that refusal is a ``Requires-Python`` that admits too much)."""
    if module in gated:
        return ExcusedModule(module, "python", gated[module])
    if cause["python_test"] and module not in own:
        return ExcusedModule(
            module,
            "python",
            f"says at import that it needs another Python (`{cause['python_test']}`)",
        )
    return None


class _Tests:
    """Evaluates an ``if``'s test on Python ``version``: ``True``, ``False``, or ``None`` for
    a test that is not about the version alone."""

    def __init__(
        self,
        version: tuple[int | str, ...],
        flags: Mapping[str, Mapping[str, bool]],
        bound: Mapping[str, tuple[str, str]],
    ) -> None:
        self.version = version
        #: module -> its top-level names bound to a version test's value
        self.flags = flags
        #: this module's names -> (the module, the name) it took them from
        self.bound = bound
        self.local: dict[str, bool] = {}

    def value(self, test: ast.expr) -> bool | None:
        if isinstance(test, ast.BoolOp):
            values = [self.value(v) for v in test.values]
            if isinstance(test.op, ast.And):
                return False if False in values else (None if None in values else True)
            return True if True in values else (None if None in values else False)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.value(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.Compare):
            return self._compare(test)
        if isinstance(test, ast.Constant) and isinstance(test.value, bool):
            return test.value
        return self._flag(test)

    def _flag(self, test: ast.expr) -> bool | None:
        if isinstance(test, ast.Name):
            if test.id == _TYPE_CHECKING:
                return False
            if test.id in self.local:
                return self.local[test.id]
            module, name = self.bound.get(test.id, ("", ""))
            return self.flags.get(module, {}).get(name)
        if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name):
            if test.attr == _TYPE_CHECKING:
                return False
            module, name = self.bound.get(test.value.id, ("", ""))
            return self.flags.get(f"{module}.{name}" if name else module, {}).get(test.attr)
        return None

    def _compare(self, test: ast.Compare) -> bool | None:
        operands = [test.left, *test.comparators]
        values = [self._operand(operand) for operand in operands]
        if any(value is None for value in values) or not any(
            self._is_version(operand) for operand in operands
        ):
            return None
        for op, left, right in zip(test.ops, values, values[1:]):
            compare = _COMPARE.get(type(op))
            if compare is None:
                return None
            try:
                if not compare(left, right):
                    return False
            except TypeError:
                return None
        return True

    def _operand(self, node: ast.expr) -> object:
        if self._is_version(node):
            return self._version_part(node)
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        ok = isinstance(value, int) or (
            isinstance(value, tuple) and all(isinstance(part, int) for part in value)
        )
        return value if ok else None

    def _is_version_info(self, node: ast.expr) -> bool:
        """``sys.version_info``, or ``version_info`` taken from sys."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            name = node.value.id
            return node.attr == "version_info" and (
                name == "sys" or self.bound.get(name) == ("sys", "")
            )
        return isinstance(node, ast.Name) and self.bound.get(node.id) == ("sys", "version_info")

    def _is_version(self, node: ast.expr) -> bool:
        if self._is_version_info(node):
            return True
        if isinstance(node, ast.Attribute) and node.attr in ("major", "minor"):
            return self._is_version_info(node.value)
        return isinstance(node, ast.Subscript) and self._is_version_info(node.value)

    def _version_part(self, node: ast.expr) -> object:
        """``sys.version_info``, a slice or an index of it, or ``.major``/``.minor``."""
        version = self.version
        if self._is_version_info(node):
            return version
        if isinstance(node, ast.Attribute):
            return {"major": version[0], "minor": version[1]}.get(node.attr)
        if isinstance(node, ast.Subscript):
            try:
                index = ast.literal_eval(node.slice)
            except (ValueError, TypeError, SyntaxError):
                index = None
            if isinstance(index, int) and 0 <= index < len(version):
                return version[index]
            part = node.slice
            if isinstance(part, ast.Slice) and part.lower is None and part.step is None:
                upper = _literal_int(part.upper)
                return version[:upper] if upper is not None else None
        return None


def _literal_int(node: ast.expr | None) -> int | None:
    try:
        value = ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError):
        return None
    return value if isinstance(value, int) else None


def _version_flags(wheel: Path, version: tuple[int | str, ...]) -> dict[str, dict[str, bool]]:
    """Each module's top-level names bound to a version test (``PY312 = sys.version_info >=
    (3, 12)``), and their value on ``version``."""
    flags: dict[str, dict[str, bool]] = {}
    for module, package, tree in parsed_modules(wheel, containing=b"version_info"):
        tests = _Tests(version, {}, _bound(tree, module if package else module.rpartition(".")[0]))
        for node in tree.body:
            target, value = _assigned(node)
            if target is not None and value is not None:
                result = tests.value(value)
                if result is not None:
                    tests.local[target] = result
                    flags.setdefault(module, {})[target] = result
    return flags


def _assigned(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return (target.id, node.value) if isinstance(target, ast.Name) else (None, None)
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    return None, None


def _bound(tree: ast.Module, base: str) -> dict[str, tuple[str, str]]:
    """The names the module's top level imports: each -> (the module, the name taken from
    it; ``""`` for a module itself)."""
    bound: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            source = resolved_import(node, base)
            for alias in node.names if source else ():
                bound[alias.asname or alias.name] = (str(source), alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = (alias.name, "")
    return bound


def _imports(tree: ast.Module, importer: str, base: str, tests: _Tests) -> Iterator[_Import]:
    """What ``tree`` imports or spells out, each with the untaken test it sits under: an
    ``if`` branch not taken here, or what follows ``if <test>: return`` (or ``raise``) where
    the test is true here (pyview-web returns early below 3.14, then imports)."""

    def walk_body(
        statements: list[ast.stmt], untaken: str, guarded: bool = False
    ) -> Iterator[_Import]:
        for statement in statements:
            yield from walk(statement, untaken, guarded)
            if untaken or not isinstance(statement, ast.If) or statement.orelse:
                continue
            last = statement.body[-1] if statement.body else None
            if isinstance(last, (ast.Return, ast.Raise)) and tests.value(statement.test):
                kind = "return" if isinstance(last, ast.Return) else "raise"
                untaken = f"after if {ast.unparse(statement.test)}: {kind}"

    def walk(node: ast.AST, untaken: str, guarded: bool = False) -> Iterator[_Import]:
        if isinstance(node, ast.If):
            value = tests.value(node.test)
            test = ast.unparse(node.test) if value is not None else ""
            yield from walk_body(
                node.body, untaken or (f"if {test}" if value is False else ""), guarded
            )
            yield from walk_body(
                node.orelse, untaken or (f"else of if {test}" if value is True else ""), guarded
            )
            return
        if isinstance(node, ast.Try) and _catches_import_errors(node.handlers):
            yield from walk_body(node.body, untaken, True)
            for part in (*node.handlers, *node.orelse, *node.finalbody):
                yield from walk(part, untaken, guarded)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield _Import(importer, alias.name, untaken, guarded)
        elif isinstance(node, ast.ImportFrom):
            source = resolved_import(node, base)
            if source:
                yield _Import(importer, source, untaken, guarded)
                for alias in node.names:
                    if alias.name != "*":
                        yield _Import(importer, f"{source}.{alias.name}", untaken, guarded)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield _Import(importer, node.value, untaken, guarded, by_name=True)
        for _, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield from walk_body(value, untaken, guarded)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        yield from walk(item, untaken, guarded)
            elif isinstance(value, ast.AST):
                yield from walk(value, untaken, guarded)

    yield from walk(tree, "")


#: what a handler catches when it catches an import's failure
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _catches_import_errors(handlers: Sequence[ast.ExceptHandler]) -> bool:
    """A bare ``except:``, or one naming ImportError (or what it derives from)."""
    for handler in handlers:
        caught = handler.type
        if caught is None:
            return True
        names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
        for name in names:
            last = name.attr if isinstance(name, ast.Attribute) else getattr(name, "id", "")
            if last in _IMPORT_ERRORS:
                return True
    return False
