"""Modules written for another release of a dependency the wheel requires.

A package that supports two major releases of its application often ships one module for each
and imports the one that fits the release installed (``hooks3`` for tox 3, ``hooks4`` for
tox 4). The plain install has the newest release, where the other module fails for a name that
release no longer has (``module 'tox' has no attribute 'hookimpl'``), or raises from a guard
naming that distribution (``only supports pydantic v1.x``); its users on the older release
import it. Such a module, which no entry point reaches, is imported again in a sandbox of its
own with the newest release of each older series the requirement allows (any release, for an
application the wheel does not require), newest first, and excused only if it imports with
one of them, and only if another module of the wheel imports it by name (``_wheel_imports``):
a module nothing selects is met by its users on the newest release. The distribution is one
the wheel requires, or the application of its plugins, which plugins often leave undeclared.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from sandboxverify._frozen import frozen
from sandboxverify.artifacts import Artifact
from sandboxverify.report import ExcusedModule
from sandboxverify.sandbox import RunContext, Sandbox, SandboxPaths, parallel_map
from sandboxverify.stages._extras import SANDBOXES_AT_ONCE, Extras, extra_sandbox, install_extra
from sandboxverify.stages._imports import Settled, run_imports
from sandboxverify.stages._test_support import is_test_module
from sandboxverify.stages._wheel_imports import importers_of


@frozen
class ReleaseRun:
    """The modules written for older releases of one distribution, each tried in a sandbox
    with the wheel and one older release, newest first, until every one imported."""

    #: the requirement as the wheel declares it (``tox>=3.28``)
    declared: str
    #: the releases installed beside the wheel, one sandbox each (``tox==3.28.0``), in turn;
    #: none: the requirement allows no older release with a wheel for this Python
    tried: tuple[str, ...]
    #: the version installed in the plain sandbox
    newest: str
    modules: tuple[str, ...]
    #: module -> the release it imported with
    imported_with: Mapping[str, str]
    #: module -> the runtime's result of the last release it failed with
    failed_with: Mapping[str, Mapping[str, Any]]
    #: the wheel requires it (else: installed as its plugins' application, any release)
    required: bool = True


def written_for_other_releases(
    failed: Sequence[Mapping[str, Any]],
    *,
    judged: Collection[str],
    own: Collection[str],
    extras: Extras,
    versions: Mapping[str, str],
    applications: Collection[str] = (),
) -> dict[str, list[str]]:
    """Each installed distribution (normalised) and the failed modules written for another
    release of it: not reached by an entry point, not ``judged`` otherwise (excused, or waiting
    for an extra), missing no distribution, and either lacking only names of that one (required,
    or one of ``applications``, the plugins' applications, often left undeclared) or, lacking
    no name, raising with a message that names one required distribution alone (a version
    guard: ``only supports pydantic v1.x``). ``versions``: what the plain sandbox installed."""
    found: dict[str, list[str]] = {}
    allowed = {*extras.base, *(str(canonicalize_name(name)) for name in applications)}
    others = {
        name for name in versions if name in allowed and name not in _TOOLS and name != extras.dist
    }
    for item in failed:
        module = str(item.get("module"))
        raw = item.get("cause")
        cause: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        if item.get("reached_by") or item.get("left_out") or module in judged:
            continue
        if cause.get("missing"):
            continue
        listed = cause.get("names")
        names: list[Any] = listed if isinstance(listed, list) else []
        tops = {
            str(canonicalize_name(str(pair[0]).split(".")[0]))
            for pair in names
            if isinstance(pair, list) and pair and str(pair[0]).split(".")[0] not in own
        }
        if not names:  # a guard of its own, or the release refusing its code: named in words
            tops = _named(item, own) & set(extras.base)
        if len(tops) == 1 and (top := next(iter(tops))) in others:
            found.setdefault(top, []).append(module)
    return found


#: installers' own distributions, in every sandbox and named in many messages
_TOOLS = frozenset({"pip", "setuptools", "wheel"})


def _named(item: Mapping[str, Any], own: Collection[str]) -> set[str]:
    """The distributions the failure's message names, as words (``pydantic`` in ``this
    module only supports pydantic v1.x``), the wheel's own names aside."""
    error = item.get("error")
    message = str(error.get("message") or "") if isinstance(error, Mapping) else ""
    words = {word for word in _WORD.findall(message.lower()) if word not in own}
    return {str(canonicalize_name(word)) for word in words}


_WORD = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")


def selected_candidates(
    found: Mapping[str, Sequence[str]], wheel: Artifact, versions: Mapping[str, str]
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """``found`` with only the modules another module of the wheel imports by name (a test
    module aside), and a hint for each of the others: no module selects it for the older
    release, so it is not tried with one."""
    modules = [module for listed in found.values() for module in listed]
    importers = importers_of(wheel.path, modules)
    candidates: dict[str, list[str]] = {}
    hints: dict[str, str] = {}
    for name, listed in found.items():
        for module in listed:
            if any(not is_test_module(importer) for importer in importers.get(module, ())):
                candidates.setdefault(name, []).append(module)
            else:
                hints[module] = (
                    f"it may be written for an older release of {name}, but no other module of "
                    "the package imports it, so nothing selects it for that release and its "
                    f"users on {name} {versions[name]} meet this failure: import it "
                    "from the module that chooses by release, or remove it"
                )
    return candidates, hints


def try_other_releases(
    candidates: Mapping[str, Sequence[str]],
    *,
    extras: Extras,
    versions: Mapping[str, str],
    sandbox: Sandbox,
    wheel: Artifact,
    also: Sequence[str],
    ctx: RunContext,
) -> list[ReleaseRun]:
    """For each distribution, its modules imported with the newest release of each older
    series the wheel's requirement allows (at most :data:`_SERIES_TRIED`), newest first."""

    def one(name: str, pinned: str, modules: Sequence[str]) -> dict[str, Mapping[str, Any]]:
        root = sandbox.paths.root
        paths = SandboxPaths(root.parent / f"{root.name}-release-{pinned.replace('==', '-')}")
        shutil.rmtree(paths.root, ignore_errors=True)  # each judging starts afresh
        paths.make()
        other, _, _ = extra_sandbox(sandbox.interpreter, paths, ctx)
        if other is None:
            return {}
        installed, _, _ = install_extra(
            other, wheel.path, str(wheel.name), ctx, also=[*also, pinned]
        )
        if not installed:
            return {}
        ran = run_imports(other, wheel=wheel, skip=(), exclude={}, ctx=ctx, only=modules)
        return {str(item["module"]): item for item in ran.result.get("results") or ()}

    def attempt(name: str) -> ReleaseRun:
        declared = extras.base.get(name, name)  # an undeclared application: any release
        newest, modules = versions[name], tuple(candidates[name])
        pins = _older_series(declared, newest, sandbox, ctx)
        imported_with: dict[str, str] = {}
        failed_with: dict[str, Mapping[str, Any]] = {}
        for pinned in pins:
            left = [module for module in modules if module not in imported_with]
            if not left:
                break
            results = one(name, pinned, left)
            for module in left:
                result = results.get(module)
                if result is not None and result.get("ok") is True:
                    imported_with[module] = pinned
                else:
                    failed_with[module] = result or {}
        return ReleaseRun(
            declared, pins, newest, modules, imported_with, failed_with, name in extras.base
        )

    return parallel_map(attempt, sorted(candidates), SANDBOXES_AT_ONCE)


def release_excuses(runs: Sequence[ReleaseRun]) -> list[ExcusedModule]:
    """The modules that imported with the older release; the others stay failed as they
    failed in the plain install."""
    excused = []
    for run in runs:
        for module, pinned in run.imported_with.items():
            name = pinned.split("==")[0]
            excused.append(
                ExcusedModule(
                    module,
                    "release",
                    f"written for another release of {name}: it imports with {pinned} "
                    + (
                        f"(the requirement {run.declared} allows it)"
                        if run.required
                        else f"(the wheel does not require {name}: installed as the application "
                        "of its plugins, any release may be)"
                    )
                    + f", and fails only with {name} {run.newest}, installed here",
                )
            )
    return excused


def release_hints(runs: Sequence[ReleaseRun]) -> dict[str, str]:
    """What to say of the modules tried with an older release that still failed."""
    hints = {}
    for run in runs:
        tried = " and ".join(run.tried)
        for module in run.modules:
            result = run.failed_with.get(module)
            if not run.tried:
                hints[module] = (
                    f"{run.declared} allows no release older than {run.newest}'s major version "
                    "with a wheel for this Python, so it was not tried with another release"
                )
            elif module in run.imported_with or result is None:
                continue
            elif not result:
                hints[module] = f"it could not be tried with {tried}: that did not install"
            else:
                hints[module] = (
                    f"it fails with {tried} too, not only with {run.newest}" + _error_of(result)
                )
    return hints


def _error_of(result: Mapping[str, Any]) -> str:
    """`` (there: <type>: <first line>)``: what stopped it with the older release, which may
    be another cause (a dependency of that release too new for it)."""
    error = result.get("error")
    if not isinstance(error, Mapping) or not error.get("type"):
        return ""
    first = str(error.get("message") or "").strip().splitlines()[:1]
    return f" (there: {error['type']}" + (f": {first[0]}" if first else "") + ")"


def _older_series(declared: str, newest: str, sandbox: Sandbox, ctx: RunContext) -> tuple[str, ...]:
    """``name==version`` of the newest release of each series before ``newest``'s that the
    requirement allows and that has a wheel for the sandbox's Python, newest first, at most
    :data:`_SERIES_TRIED` of them."""
    from sandboxverify.artifacts import FetchError, PackageIndex  # noqa: PLC0415 - rarely

    try:
        requirement, installed = Requirement(declared), Version(newest)
        python = Version(".".join(str(part) for part in sandbox.interpreter.version_info))
    except (InvalidRequirement, InvalidVersion):
        return ()
    index = PackageIndex(ctx.index.index_url, ctx.index.find_links)
    pins: dict[tuple[int, ...], str] = {}
    try:
        for version in index.releases(requirement, python):  # newest first
            series = _series(version)
            if len(pins) == _SERIES_TRIED:
                break
            older = series < _series(installed) and series not in pins
            if older and index.has_wheel(requirement.name, version, python):
                pins[series] = f"{requirement.name}=={version}"
    except FetchError:
        return tuple(pins.values())
    return tuple(pins.values())


#: how many older series a module is tried with, the newest first
_SERIES_TRIED = 3


def _series(version: Version) -> tuple[int, ...]:
    """A release series: its major version, or ``0.minor`` before 1.0 (where each minor
    release may break what the one before had)."""
    return (version.major,) if version.major else (0, version.minor)


@frozen
class OtherReleases:
    """What modules are tried with older releases with: the wheel's requirements (``extras``),
    the plain sandbox's distributions and their versions (``installed``), ``--with``."""

    extras: Extras
    installed: Mapping[str, str]
    also: Sequence[str]
    ctx: RunContext
    #: the applications the plugins were loaded in (distributions' names)
    applications: Collection[str] = ()

    def judge(
        self,
        settled: Settled,
        failed: Sequence[Mapping[str, Any]],
        judged: Collection[str],
        sandbox: Sandbox,
        wheel: Artifact,
    ) -> Settled:
        """``settled``, with the modules not ``judged`` yet that import with an older
        release of a requirement excused."""
        versions = {str(canonicalize_name(k)): v for k, v in self.installed.items()}
        found = written_for_other_releases(
            failed,
            judged=judged,
            own=wheel.top_level,
            extras=self.extras,
            versions=versions,
            applications=self.applications,
        )
        candidates, unselected = selected_candidates(found, wheel, versions)
        settled = replace(settled, hints={**settled.hints, **unselected})
        if not candidates:
            return settled
        runs = try_other_releases(
            candidates,
            extras=self.extras,
            versions=versions,
            sandbox=sandbox,
            wheel=wheel,
            also=self.also,
            ctx=self.ctx,
        )
        excused = [*settled.excused, *release_excuses(runs)]
        return replace(
            settled,
            excused=tuple(sorted(excused, key=lambda e: e.module)),
            hints={**settled.hints, **release_hints(runs)},
        )
