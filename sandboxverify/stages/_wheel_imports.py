"""What a wheel's modules say in their source, read and never run: which of the wheel's own
modules the others import, and which define a function an application calls.

A package that ships a module for each release of a dependency selects one from another of
its modules (``from .hooks3 import *`` under tox 3); a module nothing of the package imports is
selected by nothing, so its users meet its failure when they import it themselves.
"""

from __future__ import annotations

import ast
import zipfile
from collections.abc import Collection, Iterator
from pathlib import Path

#: what is read of the wheel's sources at most, in all and of one module
_TOTAL_LIMIT = 64 * 1024 * 1024
_SOURCE_LIMIT = 4 * 1024 * 1024


def importers_of(wheel: Path, modules: Collection[str]) -> dict[str, tuple[str, ...]]:
    """Each of ``modules`` and the other modules of the wheel that import it by name: in an
    import statement anywhere in their code (a function's too, absolute or relative, the
    module itself or one of its submodules), or as a string equal to its dotted name
    (``importlib.import_module("pkg.hooks3")``). A module's own submodules do not count."""
    wanted = set(modules)
    found: dict[str, list[str]] = {module: [] for module in modules}
    unparsed: list[tuple[str, bytes]] = []
    for importer, names in _named_imports(wheel, unparsed):
        for module in wanted:
            if importer == module or importer.startswith(f"{module}."):
                continue
            if any(name == module or name.startswith(f"{module}.") for name in names):
                found[module].append(importer)
    # a module this interpreter cannot parse may import any it names
    for importer, source in unparsed:
        for module in wanted:
            inside = importer == module or importer.startswith(f"{module}.")
            if not inside and module.rpartition(".")[2].encode() in source:
                found[module].append(importer)
    return {module: tuple(sorted(importers)) for module, importers in found.items()}


def modules_defining(wheel: Path, function: str, arguments: int) -> list[str]:
    """The wheel's modules that define ``function`` at their top level, callable with
    ``arguments`` positional arguments (Sphinx calls an extension's ``setup(app)``), or import
    it from one that does: the package whose ``__init__`` re-exports a submodule's is the name
    users write, and stands for that submodule."""
    defined: list[str] = []
    imported: dict[str, str] = {}  # module -> where its top level takes the function from
    for module, package, tree in parsed_modules(wheel, containing=function.encode()):
        base = module if package else module.rpartition(".")[0]
        modules: dict[str, str] = {}  # a name bound at the top level -> the module it may be
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == function:
                if _takes(node.args, arguments):
                    defined.append(module)
                break
            if isinstance(node, ast.ImportFrom):
                source = resolved_import(node, base)
                if source and any(
                    alias.name == function and alias.asname in (None, function)
                    for alias in node.names
                ):
                    imported[module] = source
                for alias in node.names if source else ():
                    modules[alias.asname or alias.name] = f"{source}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        modules[alias.asname] = alias.name
            elif (bound := _binds_attribute(node, function)) is not None and bound in modules:
                # ``register = plugin.register`` (pylint-django): the submodule's function
                imported[module] = modules[bound]
    standing_in = {imported[m]: m for m in imported if imported[m] in defined}
    return sorted({standing_in.get(module, module) for module in defined})


def _binds_attribute(node: ast.stmt, function: str) -> str | None:
    """``name`` when ``node`` is ``function = name.function``."""
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == function
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == function
        and isinstance(node.value.value, ast.Name)
    ):
        return node.value.value.id
    return None


def _takes(args: ast.arguments, count: int) -> bool:
    positional = [*args.posonlyargs, *args.args]
    required = len(positional) - len(args.defaults)
    return required <= count and (len(positional) >= count or args.vararg is not None)


def _named_imports(
    wheel: Path, unparsed: list[tuple[str, bytes]] | None = None
) -> Iterator[tuple[str, set[str]]]:
    """Each ``.py`` module of the wheel and the dotted names it imports or spells out."""
    for module, package, tree in parsed_modules(wheel, unparsed=unparsed):
        yield module, _names(tree, module if package else module.rpartition(".")[0])


def parsed_modules(
    wheel: Path,
    containing: bytes = b"",
    containing_any: Collection[bytes] = (),
    unparsed: list[tuple[str, bytes]] | None = None,
) -> Iterator[tuple[str, bool, ast.Module]]:
    """Each ``.py`` module of the wheel that parses (and whose source holds ``containing``,
    and one of ``containing_any`` if given): its dotted name, whether it is a package's
    ``__init__``, its syntax tree. ``unparsed`` collects the others' names and sources (newer
    syntax than this interpreter's), which a caller must not read as importing nothing."""
    budget = _TOTAL_LIMIT
    try:
        with zipfile.ZipFile(wheel) as archive:
            for info in archive.infolist():
                module, package = _module_of(info.filename)
                if module is None or info.file_size > _SOURCE_LIMIT or info.file_size > budget:
                    continue
                budget -= info.file_size
                source = archive.read(info)
                if containing not in source or (
                    containing_any and not any(part in source for part in containing_any)
                ):
                    continue
                try:
                    tree = ast.parse(source)
                except (SyntaxError, ValueError):
                    if unparsed is not None:
                        unparsed.append((module, source))
                    continue
                yield module, package, tree
    except (OSError, zipfile.BadZipFile):
        return


def module_names(wheel: Path) -> list[str]:
    """The dotted names of the wheel's ``.py`` modules, read from its listing alone."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return []
    return [name for name in (_module_of(member)[0] for member in members) if name]


def _module_of(member: str) -> tuple[str | None, bool]:
    """The dotted module a wheel's member is, and whether it is a package's ``__init__``;
    ``None`` for anything else (metadata, data, another language's file)."""
    if not member.endswith(".py"):
        return None, False
    parts = member[: -len(".py")].split("/")
    # ``.dist-info``, ``.data`` and a dash below the top are reached by no import; a top-level
    # name with a dash (``sphinx-prompt``) is, by importlib.import_module, as Sphinx imports
    # the names of conf.py's extensions
    top_reached = "." not in parts[0] and parts[0].isprintable() and len(parts) > 1
    if any(not part.isidentifier() for part in parts[1:]) or not (
        parts[0].isidentifier() or top_reached
    ):
        return None, False
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]) or None, True
    return ".".join(parts), False


def _names(tree: ast.Module, package: str) -> set[str]:
    """The dotted names ``tree`` imports (``from a import b``: ``a`` and ``a.b``), relative
    ones resolved against ``package``, and its strings that look like a dotted name."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = resolved_import(node, package)
            if base:
                names.add(base)
                names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Constant) and _dotted(node.value):
            names.add(str(node.value))
    return names


def _dotted(value: object) -> bool:
    """``value`` is a string spelling a dotted module name (``pkg.hooks3``)."""
    return isinstance(value, str) and "." in value and all(map(str.isidentifier, value.split(".")))


def resolved_import(node: ast.ImportFrom, package: str) -> str | None:
    """The module ``from ... import`` names, a relative one resolved against ``package``."""
    if not node.level:
        return node.module
    parts = package.split(".") if package else []
    if node.level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base) or None
