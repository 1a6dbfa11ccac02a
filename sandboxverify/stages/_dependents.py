"""The application that depends on its plugin: a plugin (or a module) that imports a package it
does not declare, because that package's distribution requires the plugin and users only ever
get the plugin through it (IPython and its inline backend, an editor and its console).

A failure counts when it is a ``ModuleNotFoundError`` for a top-level module no requirement of
the distribution (nor of its extras) names. The distribution named as that module (or whose name
ours extends and ends in it: ``mkdocs-material`` for ``mkdocs-material-extensions``'s
``material``) is fetched alone (a wheel, never built, as ``_applications`` fetches a candidate
application) and counts only if its METADATA requires ours (``Requires-Dist``, under any
marker or extra): then its users have the plugin with it, and the plugin is judged again with
it installed (``pipeline/_dependents``). So does the framework our distribution is named
for, as a word of its name (pytest-sanic imports Sanic, which its users' projects install).
Any other candidate confirms nothing: the undeclared import stays a failure.
"""

from __future__ import annotations

import ast
import shutil
import sys
import zipfile
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from sandboxverify._frozen import frozen
from sandboxverify.artifacts import Artifact
from sandboxverify.report import Failure, ImportsRecord, PluginRecord, summarize
from sandboxverify.runtime import name_words
from sandboxverify.sandbox import RunContext, Sandbox, fetch_alone
from sandboxverify.stages._extras import read_extras
from sandboxverify.stages._import_causes import NO_MODULE_NAMED
from sandboxverify.stages._runtime_call import safe_label

_METADATA_LIMIT = 4 * 1024 * 1024
_SOURCE_LIMIT = 4 * 1024 * 1024
#: at most this many distributions are fetched for one missing module
_CANDIDATES = 4


@frozen
class Missing:
    """A top-level module the distribution does not declare, and what failed for want of it."""

    module: str
    #: the plugins (by name) and modules that failed with it missing
    plugins: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    #: what to look for, in order: the missing module, then the other top-level modules the
    #: failing modules import and do not declare (the application may be imported after a
    #: library of its own, as ``docutils`` before ``sphinx``)
    candidates: tuple[str, ...] = ()

    @property
    def what(self) -> str:
        named = [f"plugin {p!r}" for p in self.plugins] + [f"module {m!r}" for m in self.modules]
        return ", ".join(named)


@frozen
class Confirmed:
    """The distribution named as a module, which requires ours: its users have us."""

    name: str
    version: str
    #: what was asked of the installer: the module's name, as the finder of applications asks
    requirement: str
    #: its ``Requires-Dist`` that names ours, as written; empty when ours is named for it
    requires: str


@frozen
class Dependent:
    """A confirmed dependent, and the failures it is installed for."""

    confirmed: Confirmed
    missing: Missing


def undeclared_missing(
    failures: Sequence[Failure],
    plugins: Sequence[PluginRecord],
    imports: ImportsRecord | None,
    *,
    wheel: Artifact,
    python: Sequence[int],
) -> list[Missing]:
    """The top-level modules whose absence alone made a plugin's load or a module's import
    fail (``failures``), or that a module only its users import lacks (excused with
    ``lacks``), that are not the wheel's own and that no requirement of it nor of its extras
    (for an interpreter of version ``python``) names."""
    own, dependencies = wheel.top_level, wheel.dependencies
    extras = read_extras(wheel.path, str(wheel.name), python)

    def undeclared(top: str) -> bool:
        # declared for users: if it is still missing, that is another problem
        key = canonicalize_name(top)
        return top not in own and key not in dependencies and not extras.for_users(top)

    errors = {p.name: p for p in plugins if p.error is not None}
    failed = {f.module: (f.type, f.message) for f in (imports.failed if imports else ())}
    found: dict[str, tuple[list[str], list[str], list[str]]] = {}
    for failure in failures:
        if failure.code == "plugin_load_failed" and failure.plugin in errors:
            record = errors[failure.plugin]
            assert record.error is not None
            top, at = missing_top(record.error.type, record.error.message), 0
            name, module = record.name, record.value.split(":")[0]
        elif failure.code == "import_failed" and failure.module in failed:
            top, at = missing_top(*failed[failure.module]), 1
            name = module = str(failure.module)
        else:
            continue
        if top is None or not undeclared(top):
            continue
        # the name ours extends first: more ours than the module's bare name, which PyPI may
        # give to an unrelated project
        entry = found.setdefault(top, ([], [], [*named_after(str(wheel.name), top), top]))
        if name not in entry[at]:
            entry[at].append(name)
        entry[2].extend(t for t in imported_tops(wheel, module) if undeclared(t))
    # a module only its users import, excused for what it lacks: its application may bring it
    for excused in imports.excused if imports else ():
        for top in excused.lacks:
            if undeclared(top):
                entry = found.setdefault(top, ([], [], [*named_after(str(wheel.name), top), top]))
                entry[1].append(excused.module)
    return [
        Missing(top, tuple(p), tuple(m), tuple(dict.fromkeys(c))[:_CANDIDATES])
        for top, (p, m, c) in found.items()
    ]


def named_after(dist: str, module: str) -> list[str]:
    """The distributions whose name ours extends and which end in ``module``'s name: an
    application whose module is not named as its distribution, with our name made of its own
    and a suffix (``mkdocs-material-extensions`` imports ``material``, from ``mkdocs-material``)."""
    words = canonicalize_name(dist).split("-")
    wanted = canonicalize_name(module).split("-")
    size = len(wanted)
    return [
        "-".join(words[:end])
        for end in range(size + 1, len(words))
        if words[end - size : end] == wanted
    ]


def imported_tops(wheel: Artifact, module: str) -> list[str]:
    """The top-level modules ``module``'s source in the wheel imports absolutely, in order
    (read, never run); none when it is not a ``.py`` file of the wheel or does not parse."""
    base = module.replace(".", "/")
    names = [f"{base}.py", f"{base}/__init__.py"]
    try:
        with zipfile.ZipFile(wheel.path) as archive:
            member = next((n for n in names if n in archive.namelist()), None)
            if member is None:
                return []
            with archive.open(member) as handle:
                tree = ast.parse(handle.read(_SOURCE_LIMIT))
    except (OSError, zipfile.BadZipFile, SyntaxError, ValueError):
        return []
    tops: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            tops += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops.append(node.module.split(".")[0])
    stdlib: Collection[str] = getattr(sys, "stdlib_module_names", frozenset())
    return [top for top in dict.fromkeys(tops) if top not in stdlib]


def missing_top(kind: str, message: str) -> str | None:
    """The top-level module a ``ModuleNotFoundError`` says is missing."""
    if kind != "ModuleNotFoundError":
        return None
    match = NO_MODULE_NAMED.match(message)
    return match[1].split(".")[0] if match else None


def confirm_dependent(sandbox: Sandbox, dist: str, module: str, ctx: RunContext) -> Confirmed | str:
    """The distribution named as ``module``, fetched alone next to ``sandbox``, if it requires
    ``dist``; else why not (never a guess: a fetch that fails confirms nothing)."""
    target = sandbox.paths.root / "dependents" / safe_label(canonicalize_name(module))
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    outcome = fetch_alone(sandbox, module, target, ctx)
    if not outcome.ok:
        return f"not installable as a wheel ({outcome.describe()}): {summarize(outcome.tail)}"
    metadata = _metadata(target)
    if metadata is None:
        return "its wheel holds no distribution metadata"
    name, version, requires = metadata
    if canonicalize_name(name) != canonicalize_name(module):
        return f"its wheel is {name} {version}, not a distribution of that name"
    naming = requiring(requires, dist)
    if naming is None and not named_for(dist, name):
        return f"{name} {version} does not require {dist}: its users do not get {dist} with it"
    return Confirmed(name, version, module, naming or "")


def named_for(dist: str, application: str) -> bool:
    """Is ``dist`` named for ``application``, as a word of its name (``pytest-sanic`` for
    Sanic): a plugin of the framework it names, which its users' projects bring?"""
    wanted = canonicalize_name(application)
    return wanted != canonicalize_name(dist) and wanted in name_words(dist)


def as_installed(sandbox: Sandbox, found: Confirmed, dist: str) -> Confirmed | str:
    """``found`` as the installer put it in ``sandbox`` (it may have chosen an older version,
    one that accepts ``dist``'s): confirmed again from its installed METADATA, or why not."""
    venv = sandbox.paths.venv
    wanted = canonicalize_name(found.name)
    for path in [*venv.glob("*/*/site-packages"), *venv.glob("*/site-packages")]:
        for info in sorted(path.glob("*.dist-info")):
            metadata = _metadata(info.parent, info.name)
            if metadata is None or canonicalize_name(metadata[0]) != wanted:
                continue
            name, version, requires = metadata
            naming = requiring(requires, dist)
            if naming is None and not named_for(dist, name):
                return f"{name} {version}, which the installer chose, does not require {dist}"
            return Confirmed(name, version, found.requirement, naming or "")
    return f"{found.name} is not in the sandbox after its install"


def requiring(requires: Iterable[str], dist: str) -> str | None:
    """The first of ``requires`` (``Requires-Dist`` lines) that names ``dist``, whatever its
    marker or extra."""
    wanted = canonicalize_name(dist)
    for line in requires:
        try:
            if canonicalize_name(Requirement(line).name) == wanted:
                return line
        except InvalidRequirement:
            continue
    return None


def _metadata(target: Path, info: str = "*.dist-info") -> tuple[str, str, list[str]] | None:
    """Name, version and ``Requires-Dist`` of the one distribution unpacked in ``target``
    (``info``: its ``.dist-info`` directory, or a pattern)."""
    found = sorted(target.glob(f"{info}/METADATA"))
    if len(found) != 1:
        return None
    with found[0].open("rb") as handle:
        text = handle.read(_METADATA_LIMIT).decode("utf-8", "replace")
    import email.parser  # noqa: PLC0415 - ~10 ms: only for a plugin judged again

    message = email.parser.Parser().parsestr(text, headersonly=True)
    name, version = message.get("Name"), message.get("Version")
    if not name or not version:
        return None
    return str(name), str(version), [str(v) for v in message.get_all("Requires-Dist") or ()]


def dependent_notes(dist: str, dependents: Sequence[Dependent]) -> list[str]:
    """What the report says of each dependent installed to judge the plugin again."""
    notes = []
    for dependent in dependents:
        found, missing = dependent.confirmed, dependent.missing
        imports = repr(found.requirement)
        if found.requirement in named_after(dist, missing.module):
            imports = f"{missing.module!r}, which {found.name} brings,"
        elif canonicalize_name(found.requirement) != canonicalize_name(missing.module):
            imports += f" (and missed {missing.module!r}, which {found.name} brings)"
        why = (
            f"{found.name} requires {dist} ({found.requires}), so its users have it"
            if found.requires
            else f"{dist} is named for {found.name}: a plugin of it, which its users' projects "
            "install"
        )
        notes.append(
            f"{missing.what} judged with {found.name} {found.version} installed: {dist} imports "
            f"{imports} without declaring it, but {why}"
        )
    return notes


def refused_notes(dist: str, refused: Mapping[str, Sequence[str]]) -> list[str]:
    """What the report says of each missing module for which nothing was confirmed: each
    candidate tried, with why not."""
    return [
        f"{module!r}, which {dist} imports without declaring it, was looked for as an "
        f"application that requires {dist} ({'; '.join(whys)}): judged without it"
        for module, whys in refused.items()
    ]
