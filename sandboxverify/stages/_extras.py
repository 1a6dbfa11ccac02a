"""The extras a wheel declares, and a module verified with one: its own sandbox, the wheel
installed as ``dist[extra]`` with the check's toolchain, index and isolation, and the modules
that need it imported there.

A module that fails only because a dependency an extra declares is missing works for every
user who installs that extra; it is judged there, not in the plain install.
"""

from __future__ import annotations

import re
import shutil
import time
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from sandboxverify._frozen import frozen
from sandboxverify.artifacts import Artifact, install_building_wheelless
from sandboxverify.report import ExcusedModule, ExtraRecord, Failure, summarize
from sandboxverify.sandbox import (
    Command,
    Interpreter,
    RunContext,
    Sandbox,
    SandboxPaths,
    create_sandbox,
    installer_env,
    without_wheel,
)
from sandboxverify.stages._configured import django_apps, not_set_up
from sandboxverify.stages._import_names import distributions_of, extra_names_in
from sandboxverify.stages._imports import run_imports
from sandboxverify.stages._wheel_imports import module_names

#: an extra's name as PEP 685 normalises it; anything else is not used (it names a directory)
_EXTRA_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")
#: words that make an extra one for the project's own development, not for its users
_DEVELOPMENT_WORDS = frozenset({"test", "tests", "testing", "dev", "develop", "development", "ci"})
#: at most this many extras are tried for a missing module no extra names
FALLBACK_EXTRAS = 3
_METADATA_LIMIT = 4 * 1024 * 1024


@frozen
class Extras:
    """The extras of a wheel: each with the distributions it adds, normalised; and what the
    wheel requires with no extra (``base``: each distribution's requirement, as written)."""

    dist: str
    requirements: Mapping[str, tuple[str, ...]]
    base: Mapping[str, str] = field(default_factory=dict)

    def providing(self, module: str) -> list[str]:
        """The extras that add a distribution that may install ``module``'s top-level name (named
        as it is, with a customary affix, or a well-known other name: ``_import_names``), the
        smallest first (the one a user would install for it)."""
        wanted = distributions_of(module)
        found = [extra for extra, names in self.requirements.items() if wanted & set(names)]
        return sorted(found, key=lambda extra: (len(self.requirements[extra]), extra))

    def for_users(self, module: str) -> list[str]:
        """:meth:`providing`, without the extras for the project's own development."""
        return [extra for extra in self.providing(module) if not development_extra(extra)]

    def not_installed(self, installed: Iterable[str], *, near: Iterable[str] = ()) -> list[str]:
        """Extras that would add something the plain install lacks: first those of the family
        of a module ``near`` (named, or adding a distribution named, as its root or a member:
        the extra ``langchain`` for ``langchain_core``, which ``langchain`` brings), then the
        smallest."""
        have = {canonicalize_name(name) for name in installed}
        found = [e for e, names in self.requirements.items() if set(names) - have - {self.dist}]
        wanted = {canonicalize_name(name.split(".", 1)[0]) for name in near}

        def kin(extra: str) -> bool:
            names = {canonicalize_name(extra), *self.requirements[extra]}
            return any(_of_a_family(a, b) for a in names for b in wanted)

        return sorted(found, key=lambda e: (not kin(e), len(self.requirements[e]), e))


def fallback_extras(
    lacking: Mapping[str, Sequence[str]],
    taken: Iterable[str],
    extras: Extras,
    installed: Iterable[str],
) -> tuple[str, ...]:
    """The extras modules that lack packages no extra names (``lacking``) are tried with,
    besides those ``taken`` already: each extra named as a part of such a module's name,
    below its root (the extra ``starlite`` for ``sentry_sdk.integrations.starlite``, which
    lacks the ``pydantic`` that ``starlite`` brings): what its users install for it; then
    their missing packages' families', then the smallest, :data:`FALLBACK_EXTRAS` at most."""
    near = [name for names in lacking.values() for name in names]
    taken = set(taken)
    found = [e for e in extras.not_installed(installed, near=near) if e not in taken]
    parts = {part for module in lacking for part in extra_names_in(module)}
    named = [e for e in found if e in parts and not development_extra(e)]
    return (*named, *[e for e in found if e not in named][:FALLBACK_EXTRAS])


def _of_a_family(one: str, other: str) -> bool:
    """Whether two normalised names are one, or one the other's root (``langchain``,
    ``langchain-core``)."""
    return one == other or family_member(one, other) or family_member(other, one)


def family_member(name: str, root: str) -> bool:
    """Whether the normalised ``name`` is of the family named after ``root``: the root, a
    dash, more (``opentelemetry-distro`` of ``opentelemetry``)."""
    return name.startswith(f"{root}-")


def development_extra(extra: str) -> bool:
    return bool(set(extra.split("-")) & _DEVELOPMENT_WORDS)


def read_extras(wheel: Path, dist: str, python: Sequence[int]) -> Extras:
    """The extras the wheel's METADATA declares, their requirements' markers evaluated for an
    interpreter of version ``python`` on this machine."""
    text = metadata_text(wheel)
    return parse_extras(text, dist, python) if text else Extras(dist, {})


def metadata_text(wheel: Path) -> str:
    """The wheel's METADATA (``""``: none, or no readable wheel)."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            member = next(
                (n for n in archive.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)),
                None,
            )
            if member is None:
                return ""
            with archive.open(member) as handle:
                return handle.read(_METADATA_LIMIT).decode("utf-8", "replace")
    except (OSError, zipfile.BadZipFile):
        return ""


def parse_extras(metadata: str, dist: str, python: Sequence[int]) -> Extras:
    import email.parser  # noqa: PLC0415 - ~10 ms: only where an import failed

    message = email.parser.Parser().parsestr(metadata, headersonly=True)
    requirements = [str(value) for value in message.get_all("Requires-Dist") or ()]
    declared = [str(value) for value in message.get_all("Provides-Extra") or ()]
    declared += [m for text in requirements for m in _EXTRA_MARKER.findall(text)]
    names = {canonicalize_name(extra) for extra in declared}
    version = ".".join(str(part) for part in python[:2])
    full = ".".join(str(part) for part in python[:3])
    adds: dict[str, list[Requirement]] = {}
    for extra in sorted(name for name in names if _EXTRA_NAME.match(name)):
        environment = {"extra": extra, "python_version": version, "python_full_version": full}
        adds[extra] = [
            requirement
            for requirement in _requirements(requirements)
            if requirement.marker is not None
            and _applies(requirement, environment)
            and not _applies(requirement, {**environment, "extra": ""})
        ]
    own = canonicalize_name(dist)
    found = {e: got for e in adds if (got := tuple(dict.fromkeys(_brought(e, adds, own))))}
    plain = {"extra": "", "python_version": version, "python_full_version": full}
    base = {
        str(canonicalize_name(requirement.name)): str(requirement)
        for requirement in _requirements(requirements)
        if requirement.marker is None or _applies(requirement, plain)
    }
    return Extras(canonicalize_name(dist), found, base)


def _brought(extra: str, adds: Mapping[str, list[Requirement]], own: str) -> Iterable[str]:
    """The distributions ``extra`` adds, through the distribution's own extras it names
    (pydantic-ai-slim's ``openai-realtime = ["pydantic-ai-slim[openai,realtime]"]``) too."""
    seen, todo = {extra}, [extra]
    while todo:
        for requirement in adds.get(todo.pop(0), ()):
            name = canonicalize_name(requirement.name)
            named = [canonicalize_name(e) for e in sorted(requirement.extras)]
            yield from [name] if name != own else ()
            todo += [e for e in named if name == own and e not in seen]
            seen.update(todo)


def _requirements(texts: Iterable[str]) -> Iterable[Requirement]:
    for text in texts:
        try:
            yield Requirement(text)
        except InvalidRequirement:
            continue  # the artifact rules report invalid metadata


def _applies(requirement: Requirement, environment: dict[str, str]) -> bool:
    assert requirement.marker is not None
    try:
        return requirement.marker.evaluate(environment)
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return False


#: the extras' (and older releases') sandboxes made and filled at once: installs are mostly
#: waiting on the network
SANDBOXES_AT_ONCE = 2
#: what a module whose extra did not install failed with: that is the extra's failure
EXTRA_NOT_INSTALLED = "ExtraNotInstalled"


@frozen
class ExtraRun:
    """A sandbox with ``dist[extra]`` installed and the modules tried there."""

    extra: str
    #: the requirement installed (``name[extra] @ file:///…``, shown without the URL)
    requirement: str
    #: the modules it was made for (those no extra names ride along: ``tried``)
    modules: tuple[str, ...]
    tried: tuple[str, ...]
    installed: bool
    #: why the install failed, in the installer's words
    error: str | None = None
    details: str | None = None
    #: the runtime's results, by module
    results: Mapping[str, Mapping[str, Any]] | None = None
    #: why the import run there stopped before it imported them all (it crashed or hung)
    stopped: str | None = None
    seconds: float = 0.0

    def imported(self, module: str) -> bool:
        """Whether ``module`` imported in this sandbox (never where the extra did not
        install: nothing was imported there)."""
        result = (self.results or {}).get(module)
        return result is not None and result.get("ok") is True


def install_extra(
    sandbox: Sandbox,
    wheel: Path,
    requirement: str,
    ctx: RunContext,
    *,
    also: Sequence[str] = (),
) -> tuple[bool, str, str]:
    """``requirement`` (``name[extra] @ <the wheel>``) and ``also`` (``--with``) installed
    with the check's installer: trusted, outside the OS sandbox, as the plain install is. A
    dependency it stops at for want of a wheel is built from its sdist, confined as the
    project's build is (``artifacts._dependency``), and offered with ``--find-links``, as the
    plain install's are (at most :data:`_BUILT_AT_MOST`)."""
    place = sandbox.paths.root / "dependency-wheels"
    unbuilt: list[Failure] = []

    def build(name: str) -> Path | None:
        from sandboxverify.artifacts import build_dependency_wheel  # noqa: PLC0415 - rarely

        python = Version(".".join(map(str, sandbox.interpreter.version_info)))
        _, failure = build_dependency_wheel(name, python, place, ctx)
        unbuilt.extend([failure] if failure is not None else [])
        return place if failure is None else None

    (installed, cause, tail), _ = install_building_wheelless(
        lambda index: _install_once(sandbox, wheel, requirement, replace(ctx, index=index), also),
        lambda result: None if result[0] else without_wheel(result[2]),
        build,
        ctx.index,
        at_most=_BUILT_AT_MOST,
    )
    if unbuilt:
        cause = f"{cause}; building it from its sdist failed: {unbuilt[0].message}"
    return installed, cause, tail


#: dependencies without a wheel built for one extra's install at most
_BUILT_AT_MOST = 2


def _install_once(
    sandbox: Sandbox, wheel: Path, requirement: str, ctx: RunContext, also: Sequence[str]
) -> tuple[bool, str, str]:
    argv = ctx.toolchain.installer.install_requirements(
        sandbox.python, [f"{requirement} @ {wheel.resolve().as_uri()}", *also], ctx.index
    )
    label = "install-extra"
    outcome = ctx.run(
        Command(
            argv=argv,
            env=installer_env(sandbox.paths.tmp, ctx.pass_env),
            cwd=sandbox.paths.work,
            timeout=ctx.install_timeout,
            log_path=sandbox.paths.logs / f"{label}.log",
            label=label,
        )
    )
    if outcome.ok:
        return True, "", ""
    cause = f"{outcome.describe()}: {summarize(outcome.tail)}"
    return False, cause, outcome.tail


def extra_sandbox(
    interpreter: Interpreter, paths: SandboxPaths, ctx: RunContext
) -> tuple[Sandbox | None, str, float]:
    """A fresh sandbox for one extra, or why it could not be made."""
    started = time.perf_counter()
    sandbox, failure = create_sandbox(interpreter, paths, ctx)
    if failure is not None:
        return None, failure.message, time.perf_counter() - started
    return sandbox, "", time.perf_counter() - started


def run_extra(
    extra: str,
    modules: Sequence[str],
    tried: Sequence[str],
    *,
    interpreter: Interpreter,
    paths: SandboxPaths,
    wheel: Artifact,
    also: Sequence[str],
    ctx: RunContext,
) -> ExtraRun:
    """``extra``'s sandbox: made, ``dist[extra]`` installed, ``modules`` and ``tried``
    imported there (each alone, as in the plain install)."""
    requirement = extra_requirement(wheel, extra)
    started = time.perf_counter()
    base = ExtraRun(extra, requirement, tuple(modules), tuple(tried), installed=False)
    sandbox, cause, tail = with_extra_installed(
        extra, interpreter=interpreter, paths=paths, wheel=wheel, also=also, ctx=ctx
    )
    if sandbox is None:
        return replace(base, error=cause, details=tail or None, seconds=_since(started))
    ran = run_imports(sandbox, wheel=wheel, skip=(), exclude={}, ctx=ctx, only=[*modules, *tried])
    results = {str(item["module"]): item for item in ran.result.get("results") or ()}
    stopped = ran.failures[0].message if ran.failures else None
    # the extra brought Django (hypothesis[django]): its modules import once it is set up
    waiting = [m for m, item in results.items() if not_set_up(item)]
    if waiting and stopped is None:
        setup = {"django": django_apps(module_names(wheel.path))}
        again = run_imports(
            sandbox, wheel=wheel, skip=(), exclude={}, ctx=ctx, only=waiting, configure=setup
        )
        results.update({str(i["module"]): i for i in again.result.get("results") or ()})
    return replace(base, installed=True, results=results, stopped=stopped, seconds=_since(started))


def extra_requirement(wheel: Artifact, extra: str) -> str:
    """``dist[extra]``, as users install it and as the report names it."""
    return f"{wheel.name}[{extra}]"


def fresh_paths(beside: Sandbox, name: str) -> SandboxPaths:
    """The paths of a sandbox named ``name`` beside ``beside``'s, emptied first: a check may
    judge the same modules again (with an application that depends on the wheel)."""
    root = beside.paths.root
    paths = SandboxPaths(root.parent / f"{root.name}-{name}")
    shutil.rmtree(paths.root, ignore_errors=True)
    paths.make()
    return paths


def with_extra_installed(
    extra: str,
    *,
    interpreter: Interpreter,
    paths: SandboxPaths,
    wheel: Artifact,
    also: Sequence[str],
    ctx: RunContext,
) -> tuple[Sandbox | None, str, str]:
    """A sandbox at ``paths`` with ``dist[extra]`` installed; else ``None``, why, and the
    installer's output."""
    sandbox, why, _ = extra_sandbox(interpreter, paths, ctx)
    if sandbox is None:
        return None, why, ""
    requirement = extra_requirement(wheel, extra)
    installed, cause, tail = install_extra(sandbox, wheel.path, requirement, ctx, also=also)
    return (sandbox, "", "") if installed else (None, cause, tail)


def extra_record(run: ExtraRun, excused: Sequence[ExcusedModule]) -> ExtraRecord:
    verified = tuple(e.module for e in excused if e.reason == "extra" and e.extra == run.extra)
    return ExtraRecord(
        name=run.extra,
        requirement=run.requirement,
        modules=run.modules,
        tried=run.tried,
        installed=run.installed,
        imported=verified,
        error=run.error,
        seconds=round(run.seconds, 3),
    )


def _since(started: float) -> float:
    return time.perf_counter() - started


def not_built(run: ExtraRun, dist: str) -> list[ExcusedModule] | None:
    """The modules of an extra that did not install only because one of its requirements has
    no wheel and its sdist did not build here (a compiler, a system library this sandbox
    lacks), excused as not verified: users' installers build it. ``None``: it failed
    otherwise."""
    requirement = without_wheel(f"{run.error or ''}\n{run.details or ''}")
    if requirement is None:
        return None
    _, _, why = (run.error or "").partition("; building it from its sdist failed: ")
    detail = (
        f"not verified: the extra {run.extra!r} ({dist}[{run.extra}]) requires {requirement}, "
        "published only as a source distribution, which pip and uv build for users; "
        + (f"building it here failed: {why}" if why else "it was not built here")
    )
    return [ExcusedModule(module, "unbuilt", detail, extra=run.extra) for module in run.modules]


def install_failure(run: ExtraRun, dist: str, python: str) -> Failure:
    needed = ", ".join(run.modules)
    return Failure(
        "install_failed",
        f"the extra {run.extra!r} ({dist}[{run.extra}]), which module(s) {needed} need, does "
        f"not install: {run.error}",
        python=python,
        hint=f"users who install {dist}[{run.extra}] meet this: fix the requirements of the "
        f"extra {run.extra!r} ([project.optional-dependencies]) so they resolve and install "
        "on this Python",
        details=run.details or None,
        module=run.modules[0] if run.modules else None,
    )


def failed_with_extra(
    module: str, run: ExtraRun, dist: str, python: str, error: Mapping[str, Any]
) -> Failure:
    kind, message = str(error["type"]), str(error["message"])
    first = message.splitlines()[0] if message else ""
    return Failure(
        "import_failed",
        f"module {module!r} failed to import with the extra {run.extra!r} installed "
        f"({dist}[{run.extra}]): {kind}" + (f": {first}" if first else ""),
        python=python,
        hint=f"{module} needs the extra {run.extra!r}, and fails even with it: fix its import "
        f"(traceback in details), or declare what it imports in the extra {run.extra!r}",
        details=str(error.get("traceback") or "") or None,
        module=module,
    )
