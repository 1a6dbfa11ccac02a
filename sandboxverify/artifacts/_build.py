"""Stage ``build``: the sdist, then the wheel from the unpacked sdist (given artifacts: ``_given``).

The project is copied first: build backends write into the tree they build (``*.egg-info``,
``build/``), and the user's source tree must stay byte-for-byte unchanged, also where a symbolic
link leads out of it.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from sandboxverify._frozen import frozen
from sandboxverify.artifacts._artifacts import (
    Artifact,
    ArtifactProblem,
    ProjectTarget,
)
from sandboxverify.artifacts._backend import BuildFrontend
from sandboxverify.artifacts._build_steps import build_failure, unpack_sdist
from sandboxverify.artifacts._cache import ArtifactCache, CachedBuild, cache_key, tree_digest
from sandboxverify.artifacts._copy import OutsideLinks, copy_problem, copy_source
from sandboxverify.artifacts._dependency import build_dependency_wheel
from sandboxverify.artifacts._findings_kept import Outcome, inspect, read_back, record_of
from sandboxverify.artifacts._rules import (
    Problem,
    missing_expected_files,
    top_level_names,
)
from sandboxverify.artifacts._vcs import sdist_members, tracked_files, vcs_problems
from sandboxverify.report import Failure, ReportWarning
from sandboxverify.sandbox import (
    RunContext,
    Workspace,
    build_inputs,
)

#: what the static rules fail with: the wheel still installs (``Problem.installable`` decides)
_STATIC_CODES = ("artifact_invalid", "pyproject_invalid", "sdist_incomplete")


@frozen
class BuildResult:
    """What the build stage produced: artifacts to verify, or a failure."""

    sdist: Artifact | None
    wheels: tuple[Artifact, ...]
    built: tuple[Path, ...]
    failures: tuple[Failure, ...]
    seconds: float
    ran: bool
    #: the artifacts of an earlier build of the very same tree, from the cache
    reused: bool = False
    #: given wheels and an sdist: the wheel built from that sdist, verified beside them (never
    #: among ``wheels``, which are the given ones)
    from_sdist: Artifact | None = None
    #: what building ``from_sdist`` failed with (also among ``failures``): the given wheels are
    #: verified all the same
    from_sdist_failures: tuple[Failure, ...] = ()
    #: what the static rules found worth fixing that fails nothing
    warnings: tuple[ReportWarning, ...] = ()
    #: wheels built of build requirements published only as sdists (confined, as a
    #: dependency's)
    built_requirements: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.failures and bool(self.wheels)

    @property
    def installable(self) -> bool:
        """A wheel is left to install, and nothing failed but ``artifact_invalid``: a wheel
        whose only problems leave it installable (a stray ``tests`` package) is installed and
        its plugins loaded, so the report still says whether they work; the check fails all
        the same. (A wheel with a broken RECORD or metadata is never among ``wheels``.) Given
        wheels are installed also when no wheel could be built from the given sdist."""
        return bool(self.wheels) and all(
            f.code in _STATIC_CODES or f in self.from_sdist_failures for f in self.failures
        )

    @property
    def artifacts(self) -> tuple[Artifact, ...]:
        built = (self.from_sdist,) if self.from_sdist else ()
        return ((self.sdist,) if self.sdist else ()) + self.wheels + built


def build_project(
    target: ProjectTarget,
    workspace: Workspace,
    ctx: RunContext,
    *,
    cache: ArtifactCache | None = None,
    expect_files: Sequence[str] = (),
    follow_external_links: bool = False,
    on_building: Callable[[], None] | None = None,
) -> BuildResult:
    """The sdist of a copy of the project, then the wheel from it; reused from ``cache`` (when
    given) for an unchanged tree. ``expect_files``: path globs every wheel must match;
    ``follow_external_links``: what links out of the project point at is copied, not refused;
    ``on_building``: called once it is known that the backend will run (nothing reused)."""
    started = time.perf_counter()
    failure = _copy_failure(target.path, workspace.src, follow_external_links)
    if failure is not None:
        return BuildResult(None, (), (), (failure,), time.perf_counter() - started, True)
    key = _cache_key(workspace.src, ctx) if cache is not None else None
    if cache is not None and key is not None:
        reused = cache.get(key, workspace.dist)
        if reused is not None:  # sdists first, as built
            paths = sorted(reused.paths, key=lambda path: (path.name.endswith(".whl"), path.name))
            outcomes = kept_findings(cache, key, reused, paths)
            result = inspected(paths, expect_files, built=True, started=started, outcomes=outcomes)
            return _with_vcs(replace(result, reused=True), target.path, workspace, ctx)
    if on_building is not None:
        on_building()
    frontend = BuildFrontend(workspace, ctx, cache, build_requirement=build_dependency_wheel)
    try:
        built = _sdist_then_wheel(frontend, workspace, started)
    finally:
        frontend.close()
    frontend.keep_bytecode()
    if isinstance(built, BuildResult):
        return replace(built, built_requirements=tuple(frontend.built_requirements))
    paths = [*built[0], *built[1]]
    outcomes = [inspect(path) for path in paths]
    if cache is not None and key is not None:
        cache.put(key, paths, findings=record_of(paths, outcomes))
    result = inspected(paths, expect_files, built=True, started=started, outcomes=outcomes)
    result = replace(result, built_requirements=tuple(frontend.built_requirements))
    return _with_vcs(result, target.path, workspace, ctx)


def kept_findings(
    cache: ArtifactCache, key: str, reused: CachedBuild, paths: Sequence[Path]
) -> list[Outcome]:
    """What the static rules found in a cache entry's files: as recorded by the same code, or
    found now (and recorded)."""
    outcomes = read_back(reused.findings, paths, reused.digests)
    if outcomes is None:
        outcomes = [inspect(path) for path in paths]
        cache.remember_findings(key, record_of(paths, outcomes))
    return outcomes


def _with_vcs(
    result: BuildResult, project: Path, workspace: Workspace, ctx: RunContext
) -> BuildResult:
    """The sdist compared with what git tracks, when the project is a git checkout."""
    if result.sdist is None:
        return result
    tracked = tracked_files(project, workspace, ctx)
    members = sdist_members(result.sdist.path) if tracked is not None else None
    if tracked is None or members is None:
        return result
    packages = sorted({name for wheel in result.wheels for name in top_level_names(wheel.files)})
    found = vcs_problems(result.sdist.path.name, members, tracked, packages)
    errors = tuple(as_failure(p) for p in found if p.severity == "error")
    warnings = tuple(as_warning(p) for p in found if p.severity == "warning")
    return replace(result, failures=result.failures + errors, warnings=result.warnings + warnings)


def _copy_failure(project: Path, copy: Path, follow_external_links: bool) -> Failure | None:
    """Why the project could not be copied to be built, if it could not."""
    try:
        copy_source(project, copy, follow_external=follow_external_links)
    except OutsideLinks as exc:
        listed = ", ".join(f"{link} -> {target}" for link, target in exc.links[:5])
        more = f" (and {len(exc.links) - 5} more)" if len(exc.links) > 5 else ""
        return Failure(
            "build_failed",
            f"the project has symbolic links that lead out of it: {listed}{more}",
            hint="the build reads what a link points at and may ship it in the package, so "
            "sandboxverify never follows a link out of the project: point the links inside it "
            "or replace them with the files; if what they point at belongs in the build, pass "
            "--follow-external-links (never anything under /proc, /sys or /dev)",
        )
    except (shutil.Error, OSError) as exc:
        return Failure(
            "build_failed",
            f"cannot copy the project to build it: {copy_problem(exc)}",
            hint="sandboxverify builds from a copy so your tree stays untouched; make every "
            "file in the project readable, and no symbolic link point at a directory that "
            "holds it (or remove them)",
        )
    return None


def _sdist_then_wheel(
    frontend: BuildFrontend, workspace: Workspace, started: float
) -> BuildResult | tuple[list[Path], list[Path]]:
    """The sdist of the copy, then the wheel of the sdist as unpacked here: their paths, or
    the failed build."""
    hooks = frontend.build("sdist", workspace.src)
    sdists = sorted(workspace.dist.glob("*.tar.gz"))
    if not hooks.ok or len(sdists) != 1:
        failure = build_failure(
            "building the sdist",
            hooks,
            "the project itself does not build; run the same build by hand to see the full log",
        )
        return BuildResult(None, (), (), (failure,), time.perf_counter() - started, True)
    strays = sorted(path.name for path in frontend.unpacked.iterdir())
    if strays:  # the wheel must come from the sdist alone
        failure = Failure(
            "build_failed",
            f"building the sdist wrote where its sdist is unpacked ({frontend.unpacked}): "
            + ", ".join(strays[:5]),
            hint="a build backend may write in the tree it builds and in the output directory "
            "only; look for code in the build that writes to a parent directory",
        )
        return BuildResult(None, (), (), (failure,), time.perf_counter() - started, True)
    # the wheel is built from the sdist as sandboxverify unpacked it, never as a frontend would
    tree = unpack_sdist(sdists[0], frontend.unpacked)
    if isinstance(tree, tuple):
        return BuildResult(None, (), (), tree, time.perf_counter() - started, True)
    hooks = frontend.build("wheel", tree)
    wheels = sorted(workspace.dist.glob("*.whl"))
    if not hooks.ok or len(wheels) != 1:
        failure = build_failure(
            "building the wheel from the sdist",
            hooks,
            "the sdist builds but a wheel cannot be built from it: a file the build needs "
            "is probably missing from the sdist (check your sdist include/exclude settings)",
        )
        return BuildResult(None, (), (), (failure,), time.perf_counter() - started, True)
    return sdists, wheels


def _cache_key(tree: Path, ctx: RunContext) -> str | None:
    """What the copy of the project builds to is cached under (``None``: not cacheable)."""
    try:
        digest = tree_digest(tree)
    except OSError:
        return None
    if digest is None:
        return None
    index = {"index_url": ctx.index.index_url, "find_links": list(ctx.index.find_links)}
    return cache_key(
        digest, frontend=ctx.toolchain.name, index=index, env=build_inputs(ctx.pass_env)
    )


def inspected(
    paths: Sequence[Path],
    expect_files: Sequence[str],
    *,
    built: bool,
    started: float,
    publishing: bool = True,
    outcomes: Sequence[Outcome] | None = None,
) -> BuildResult:
    """Static checks of every artifact; every problem of every artifact becomes a failure, or
    a warning. ``publishing``: the files are built from the project to be published; else
    they were given (or built from a given sdist), and upload refusals are warnings.
    ``outcomes``: each path's inspection, when already known."""
    sdist: Artifact | None = None
    wheels: list[Artifact] = []
    failures: list[Failure] = []
    warnings: list[ReportWarning] = []
    for path, outcome in zip(paths, [inspect(p) for p in paths] if outcomes is None else outcomes):
        is_wheel = path.name.endswith(".whl")
        artifact: Artifact | None
        if isinstance(outcome, ArtifactProblem):
            found = [*outcome.problems, *outcome.warnings]
            files, artifact = outcome.files, outcome.artifact
        else:
            artifact, found, files = outcome, list(outcome.warnings), outcome.files
        if is_wheel and (artifact is not None or files):
            found.extend(missing_expected_files(path.name, files, expect_files))
        if built:  # a compiled project's own wheel is of this machine: its sdist is published
            found = [_as_local(problem) for problem in found]
        if not publishing:
            found = [replace(problem, given=True) for problem in found]
        problems = [p for p in found if p.severity == "error"]
        failures.extend(as_failure(p) for p in problems)
        warnings.extend(as_warning(p) for p in found if p.severity == "warning")
        if artifact is None or not all(problem.installable for problem in problems):
            continue
        if artifact.kind == "wheel":
            wheels.append(artifact)
        else:
            sdist = artifact
    mismatch = release_mismatch(([sdist] if sdist else []) + wheels)
    if mismatch is not None:
        failures.append(mismatch)
    return BuildResult(
        sdist,
        tuple(wheels),
        tuple(paths) if built else (),
        tuple(failures),
        time.perf_counter() - started,
        built,
        warnings=tuple(warnings),
    )


def _as_local(problem: Problem) -> Problem:
    if problem.rule != "wheel-platform-tag":
        return problem
    return replace(
        problem,
        rule="wheel-platform-local",
        hint="publish the sdist, and wheels built for PyPI's platforms (cibuildwheel, or "
        "auditwheel repair), not this one",
    )


def as_failure(problem: Problem) -> Failure:
    return Failure(problem.code, problem.message, hint=problem.hint, rule=problem.rule)


def as_warning(problem: Problem) -> ReportWarning:
    return ReportWarning(problem.rule or "", problem.message, problem.file, problem.hint)


def release_mismatch(artifacts: Sequence[Artifact]) -> Failure | None:
    """Artifacts built in one run must be one release (given ones are checked by filename
    before anything runs)."""
    if len({(a.name, a.version) for a in artifacts}) <= 1:
        return None
    return Failure(
        "artifact_invalid",
        "the build produced artifacts of different releases: "
        + ", ".join(f"{a.path.name} ({a.name} {a.version})" for a in artifacts),
        hint="the sdist and the wheel must come from one [project] name and version: a dynamic "
        "version that changes between the two builds does this (e.g. a version computed from "
        "the time or from a VCS checkout the sdist lacks)",
    )
