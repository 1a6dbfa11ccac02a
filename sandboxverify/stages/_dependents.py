"""The application that depends on its plugin: a plugin (or a module) that imports a package it
does not declare, because that package's distribution requires the plugin and users only ever
get the plugin through it (IPython and its inline backend, an editor and its console).

A failure counts when it is a ``ModuleNotFoundError`` for a top-level module no requirement of
the distribution (nor of its extras) names. The distribution named as that module is fetched
alone (a wheel, never built, as ``_applications`` fetches a candidate application) and counts
only if its METADATA requires ours (``Requires-Dist``, under any marker or extra): then its users
have the plugin with it, and the plugin is judged again with it installed
(``pipeline/_dependents``). One that does not require ours confirms nothing: the undeclared
import stays a failure.
"""

from __future__ import annotations

import email.parser
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from sandboxverify.artifacts import Artifact
from sandboxverify.report import Failure, ImportsRecord, PluginRecord, summarize
from sandboxverify.sandbox import RunContext, Sandbox, fetch_alone
from sandboxverify.stages._extras import read_extras
from sandboxverify.stages._runtime_call import safe_label

#: the interpreter's words for a module not found; the name may be a submodule's
_NOT_FOUND = re.compile(r"^No module named '([^']+)'")
_METADATA_LIMIT = 4 * 1024 * 1024


@dataclass(frozen=True)
class Missing:
    """A top-level module the distribution does not declare, and what failed for want of it."""

    module: str
    #: the plugins (by name) and modules that failed with it missing
    plugins: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()

    @property
    def what(self) -> str:
        named = [f"plugin {p!r}" for p in self.plugins] + [f"module {m!r}" for m in self.modules]
        return ", ".join(named)


@dataclass(frozen=True)
class Dependent:
    """The distribution that provides a missing module and requires ours: its users have us."""

    name: str
    version: str
    #: what was asked of the installer (the module's name, as the finder of applications asks)
    requirement: str
    missing: Missing
    #: its ``Requires-Dist`` that names ours, as written
    requires: str


def undeclared_missing(
    failures: Sequence[Failure],
    plugins: Sequence[PluginRecord],
    imports: ImportsRecord | None,
    *,
    wheel: Artifact,
    python: Sequence[int],
) -> list[Missing]:
    """The top-level modules whose absence alone made a plugin's load or a module's import
    fail (``failures``), that are not the wheel's own and that no requirement of it nor of
    its extras (for an interpreter of version ``python``) names."""
    own, dependencies = wheel.top_level, wheel.dependencies
    extras = read_extras(wheel.path, str(wheel.name), python)
    errors = {p.name: (p.error.type, p.error.message) for p in plugins if p.error is not None}
    failed = {f.module: (f.type, f.message) for f in (imports.failed if imports else ())}
    by_module: dict[str, tuple[list[str], list[str]]] = {}
    for failure in failures:
        if failure.code == "plugin_load_failed" and failure.plugin in errors:
            top, at = _missing_top(*errors[failure.plugin]), 0
            name = str(failure.plugin)
        elif failure.code == "import_failed" and failure.module in failed:
            top, at = _missing_top(*failed[failure.module]), 1
            name = str(failure.module)
        else:
            continue
        if top is None or top in own:
            continue
        key = canonicalize_name(top)
        if key in dependencies or extras.for_users(top):
            continue  # declared for users: if it is still missing, that is another problem
        entry = by_module.setdefault(top, ([], []))
        if name not in entry[at]:
            entry[at].append(name)
    return [Missing(top, tuple(p), tuple(m)) for top, (p, m) in by_module.items()]


def _missing_top(kind: str, message: str) -> str | None:
    if kind != "ModuleNotFoundError":
        return None
    match = _NOT_FOUND.match(message)
    return match[1].split(".")[0] if match else None


def find_dependent(
    sandbox: Sandbox, dist: str, missing: Missing, ctx: RunContext
) -> Dependent | str:
    """The distribution named as ``missing``'s module, fetched alone next to ``sandbox``, if it
    requires ``dist``; else why not (never a guess: a fetch that fails confirms nothing)."""
    requirement = missing.module
    target = sandbox.paths.root / "dependents" / safe_label(canonicalize_name(requirement))
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    outcome = fetch_alone(sandbox, requirement, target, ctx)
    if not outcome.ok:
        return f"not installable as a wheel ({outcome.describe()}): {summarize(outcome.tail)}"
    metadata = _metadata(target)
    if metadata is None:
        return "its wheel holds no distribution metadata"
    name, version, requires = metadata
    if canonicalize_name(name) != canonicalize_name(requirement):
        return f"its wheel is {name} {version}, not a distribution of that name"
    naming = requiring(requires, dist)
    if naming is None:
        return f"{name} {version} does not require {dist}: its users do not get {dist} with it"
    return Dependent(name, version, requirement, missing, naming)


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


def _metadata(target: Path) -> tuple[str, str, list[str]] | None:
    """Name, version and ``Requires-Dist`` of the one distribution unpacked in ``target``."""
    found = sorted(target.glob("*.dist-info/METADATA"))
    if len(found) != 1:
        return None
    with found[0].open("rb") as handle:
        text = handle.read(_METADATA_LIMIT).decode("utf-8", "replace")
    message = email.parser.Parser().parsestr(text, headersonly=True)
    name, version = message.get("Name"), message.get("Version")
    if not name or not version:
        return None
    return str(name), str(version), [str(v) for v in message.get_all("Requires-Dist") or ()]


def dependent_notes(dist: str, confirmed: Sequence[Dependent]) -> list[str]:
    """What the report says of each dependent installed to judge the plugin again."""
    return [
        f"{d.missing.what} judged with {d.name} {d.version} installed: {dist} does not declare "
        f"{d.missing.module!r}, but {d.name} requires {dist} ({d.requires}), so its users have it"
        for d in confirmed
    ]


def refused_notes(dist: str, refused: Mapping[str, str]) -> list[str]:
    """What the report says of each missing module whose distribution confirmed nothing."""
    return [
        f"{module!r}, which {dist} imports without declaring it, was looked for as an "
        f"application that requires {dist}: {why}; the failure stands"
        for module, why in refused.items()
    ]
