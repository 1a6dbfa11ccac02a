"""What a wheel installs into site-packages, judged as check-wheel-contents judges it (its kinds of
findings, re-implemented: it has no library API): bytecode, duplicate contents, common and
non-module top-level names, modules under ``src/``, unimportable paths, data-only directories,
and compiled code in a wheel tagged for every platform."""

from __future__ import annotations

import keyword
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Sequence

from packaging.tags import Tag

from sandboxverify.artifacts._rules import Problem, few, importable_path

#: top-level names check-wheel-contents calls common (W005): nobody's import name
COMMON_TOPLEVEL = frozenset(
    {
        ".eggs",
        ".nox",
        ".tox",
        ".venv",
        "app",
        "build",
        "cli",
        "data",
        "dist",
        "doc",
        "docs",
        "example",
        "examples",
        "lib",
        "scripts",
        "src",
        "venv",
    }
)
#: what a source layout's directory is called: code under it is installed one level too deep
_LAYOUT_DIRS = ("src", "lib")
_MODULES = (".py", ".so", ".pyd", ".pyi")
_COMPILED = (".so", ".pyd", ".dylib", ".dll")
#: contents check-wheel-contents does not call duplicates (W002): empty, a newline, a coding line
_TRIVIAL = frozenset(
    {b"", b"\n", b"\r\n", b"# -*- coding: utf-8 -*-\n", b"# -*- coding: utf-8 -*-\r\n"}
)
_LAYOUT_HINT = (
    "tell the build backend the code is under {layout}/: hatchling [tool.hatch.build.targets."
    'wheel] packages = ["{layout}/yourpkg"], setuptools [tool.setuptools.packages.find] '
    'where = ["{layout}"]'
)


def wheel_content_problems(
    filename: str, archive: zipfile.ZipFile, files: Sequence[str], tags: Iterable[Tag]
) -> list[Problem]:
    """Every finding about what the wheel installs (``files``: its members, no directories)."""
    library = [path for path in map(importable_path, files) if path is not None]
    found: list[Problem] = []

    def add(rule: str, message: str, hint: str) -> None:
        found.append(Problem(f"{filename}: {message}", hint, True, rule, filename))

    layout = [d for d in _LAYOUT_DIRS if _holds_code_one_level_down(d, library)]
    for directory in layout:
        add(
            "wheel-src-toplevel",
            f"the wheel installs its code under site-packages/{directory}/ "
            f"({few(_packages_below(directory, library))}): 'import' of those names fails",
            _LAYOUT_HINT.format(layout=directory),
        )
    if "__init__.py" in library:
        add(
            "wheel-toplevel-init",
            "the wheel installs __init__.py at the top of site-packages, where every other "
            "such project's lands",
            "build from the package's directory, not from the one that holds it",
        )
    bytecode = [f for f in files if f.endswith((".pyc", ".pyo"))]
    if bytecode:
        add(
            "wheel-bytecode",
            f"the wheel ships bytecode: {few(bytecode)}",
            "installers compile modules themselves: exclude __pycache__ and *.pyc from the "
            "build (and from the sdist it is built from)",
        )
    duplicates = duplicate_contents(archive, files)
    if duplicates:
        add(
            "wheel-duplicate-content",
            f"files with identical contents: {'; '.join(' = '.join(g) for g in duplicates[:3])}",
            "ship each file once (a copy left behind by a move, or a file included twice)",
        )
    found.extend(_toplevel_problems(filename, library, set(layout)))
    unimportable = [p for p in library if p.endswith(_MODULES[:3]) and not _importable(p)]
    if unimportable:
        add(
            "wheel-unimportable-path",
            f"modules under paths no import statement can reach: {few(unimportable)}",
            "name packages as Python identifiers (no '-', no keywords), or ship the files as "
            "data (a top-level package with a '-' is reached by importlib.import_module alone, "
            "as Sphinx imports conf.py's extensions)",
        )
    compiled = [f for f in files if _is_compiled(f)]
    if compiled and all(tag.platform == "any" for tag in tags):
        add(
            "wheel-binary-in-pure",
            f"the wheel is tagged for every platform but ships compiled code: {few(compiled)}",
            "build platform wheels for compiled code (cibuildwheel), or leave it out of the "
            "pure wheel",
        )
    return found


def _toplevel_problems(filename: str, library: Sequence[str], layout: set[str]) -> list[Problem]:
    tops: dict[str, list[str]] = defaultdict(list)
    loose: list[str] = []
    for path in library:
        head, _, rest = path.partition("/")
        if rest:
            tops[head].append(rest)
        elif not head.endswith((*_MODULES, ".pth")) and head != "__init__.py":
            loose.append(head)
    found: list[Problem] = []
    common = sorted(name for name in tops if name in COMMON_TOPLEVEL and name not in layout)
    if common:
        found.append(
            Problem(
                f"{filename}: the wheel installs common top-level names into site-packages, "
                f"where other projects' land too: {', '.join(common)}",
                "keep docs, examples, scripts and build output out of the wheel; put code "
                "inside the package",
                True,
                "wheel-common-toplevel",
                filename,
            )
        )
    if loose:
        found.append(
            Problem(
                f"{filename}: files at the top of site-packages that are no module: {few(loose)}",
                "move them into the package (package data), or into the .dist-info (license-files)",
                True,
                "wheel-toplevel-file",
                filename,
            )
        )
    data_only = sorted(
        name
        for name, below in tops.items()
        if not name.endswith((".libs", ".dylibs"))
        and name not in COMMON_TOPLEVEL
        and not any(part.endswith(_MODULES) for part in below)
    )
    if data_only:
        found.append(
            Problem(
                f"{filename}: top-level directories without a module: {', '.join(data_only)}",
                "put data inside the package that reads it (package data)",
                True,
                "wheel-dataonly-toplevel",
                filename,
            )
        )
    return found


def _holds_code_one_level_down(directory: str, library: Sequence[str]) -> bool:
    """``src/`` that is no package itself but holds packages or modules: a layout slip."""
    if f"{directory}/__init__.py" in library:
        return False
    return bool(_packages_below(directory, library))


def _packages_below(directory: str, library: Sequence[str]) -> list[str]:
    names: set[str] = set()
    for path in library:
        parts = path.split("/")
        if len(parts) >= 3 and parts[0] == directory and parts[-1] == "__init__.py":
            names.add(parts[1])
        elif len(parts) == 2 and parts[0] == directory and parts[1].endswith(".py"):
            names.add(parts[1][:-3])
    return sorted(names)


def _importable(path: str) -> bool:
    *directories, module = path.split("/")
    stem = module.split(".", 1)[0]
    return all(part.isidentifier() and not keyword.iskeyword(part) for part in [*directories, stem])


def _is_compiled(member: str) -> bool:
    name = member.rsplit("/", 1)[-1]
    return name.endswith(_COMPILED) or ".so." in name


def duplicate_contents(archive: zipfile.ZipFile, files: Sequence[str]) -> list[list[str]]:
    """Groups of files (outside the .dist-info) with identical bytes: the zip directory's size
    and CRC first, then the bytes of those that agree."""
    candidates: dict[tuple[int, int], list[str]] = defaultdict(list)
    for name in files:
        if name.split("/", 1)[0].endswith(".dist-info"):
            continue
        info = archive.getinfo(name)
        small = info.file_size <= len(b"# -*- coding: utf-8 -*-\r\n")
        if small and archive.read(name) in _TRIVIAL:
            continue
        candidates[(info.file_size, info.CRC)].append(name)
    groups: list[list[str]] = []
    for names in candidates.values():
        if len(names) < 2:
            continue
        by_bytes: dict[bytes, list[str]] = defaultdict(list)
        for name in names:
            by_bytes[archive.read(name)].append(name)
        groups.extend(sorted(same) for same in by_bytes.values() if len(same) > 1)
    return sorted(groups)
