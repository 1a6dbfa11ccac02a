"""Stage ``build`` for given artifacts: each verified as it is, and a given sdist by the wheel
built from it (beside given wheels, that wheel too is verified; ``_compare`` says where the two
differ)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from sandboxverify.artifacts._artifacts import Artifact, ArtifactsTarget, same_release_named
from sandboxverify.artifacts._backend import BuildFrontend
from sandboxverify.artifacts._build import (
    BuildResult,
    inspected,
    kept_findings,
    release_mismatch,
)
from sandboxverify.artifacts._build_steps import build_failure, unpack_sdist
from sandboxverify.artifacts._cache import ArtifactCache, cache_key
from sandboxverify.artifacts._dependency import build_dependency_wheel
from sandboxverify.artifacts._findings_kept import inspect, record_of
from sandboxverify.sandbox import RunContext, Workspace, build_inputs


def prepare_artifacts(
    target: ArtifactsTarget,
    workspace: Workspace,
    ctx: RunContext,
    *,
    cache: ArtifactCache | None = None,
    expect_files: Sequence[str] = (),
) -> BuildResult:
    """Verify given artifacts as they are; a given sdist also gets a wheel built from it,
    confined as a project's is (reused from ``cache``, when given, for the very same sdist).
    Beside given wheels, that wheel is verified too (``from_sdist``): what users of the sdist
    get must work as the given wheel does. ``expect_files``: path globs every wheel must
    match."""
    started = time.perf_counter()
    same_release_named([*target.sdists, *target.wheels])
    given = [*target.sdists, *target.wheels]
    checked = inspected(given, expect_files, built=False, started=started, publishing=False)
    sdist = checked.sdist
    if sdist is None or (checked.failures and not target.wheels):
        return checked
    from_sdist = _wheel_from_sdist(sdist, workspace, ctx, cache, expect_files)
    seconds = time.perf_counter() - started
    warnings = (*checked.warnings, *from_sdist.warnings)
    if not target.wheels:
        return replace(from_sdist, seconds=seconds, warnings=warnings)
    # its filename may be a given wheel's: say which wheel a problem is of
    of_sdist = tuple(
        replace(f, message=f"{f.message} (the wheel built from {sdist.path.name})")
        if f.code == "artifact_invalid"
        else f
        for f in from_sdist.failures
    )
    return BuildResult(
        sdist,
        checked.wheels,
        from_sdist.built,
        (*checked.failures, *of_sdist),
        seconds,
        True,
        reused=from_sdist.reused,
        from_sdist=from_sdist.wheels[0] if from_sdist.wheels else None,
        from_sdist_failures=of_sdist,
        warnings=warnings,
    )


def _wheel_from_sdist(
    sdist: Artifact,
    workspace: Workspace,
    ctx: RunContext,
    cache: ArtifactCache | None,
    expect_files: Sequence[str],
) -> BuildResult:
    """The wheel of ``sdist`` as sandboxverify unpacked it, inspected; or why there is none."""
    started = time.perf_counter()
    key = _cache_key(sdist, ctx)
    reused = cache.get(key, workspace.dist) if cache is not None else None
    if cache is not None and reused is not None:
        if len(reused.paths) == 1:
            outcomes = kept_findings(cache, key, reused, reused.paths)
            result = inspected(
                reused.paths,
                expect_files,
                built=True,
                started=started,
                publishing=False,
                outcomes=outcomes,
            )
            return replace(_of_release(sdist, result), reused=True)
        for path in reused.paths:  # an entry of another shape is no wheel of this sdist
            path.unlink(missing_ok=True)
    tree = unpack_sdist(sdist.path, workspace.root / "sdist")
    if isinstance(tree, tuple):
        return BuildResult(sdist, (), (), tree, time.perf_counter() - started, True)
    frontend = BuildFrontend(workspace, ctx, cache, build_requirement=build_dependency_wheel)
    try:
        hooks = frontend.build("wheel", tree)
    finally:  # its hook runner is kept for a next step: there is none
        frontend.close()
    frontend.keep_bytecode()
    wheels = sorted(workspace.dist.glob("*.whl"))
    if not hooks.ok or len(wheels) != 1:
        failure = build_failure(
            f"building a wheel from {sdist.path.name}",
            hooks,
            "a file the build needs is probably missing from the sdist",
        )
        return BuildResult(sdist, (), (), (failure,), time.perf_counter() - started, True)
    outcomes = [inspect(wheel) for wheel in wheels]
    result = _of_release(
        sdist,
        inspected(
            wheels, expect_files, built=True, started=started, publishing=False, outcomes=outcomes
        ),
    )
    if cache is not None and result.ok:
        cache.put(key, wheels, findings=record_of(wheels, outcomes))
    return replace(result, built_requirements=tuple(frontend.built_requirements))


def _of_release(sdist: Artifact, result: BuildResult) -> BuildResult:
    """The wheel built from ``sdist``, unless it is of another release (then a failure)."""
    mismatch = release_mismatch([sdist, *result.wheels])
    return BuildResult(
        sdist,
        () if mismatch else result.wheels,
        result.built,
        (*result.failures, *([mismatch] if mismatch else [])),
        result.seconds,
        True,
        warnings=result.warnings,
    )


def _cache_key(sdist: Artifact, ctx: RunContext) -> str:
    """What the wheel of ``sdist`` is cached under: the sdist's own bytes (never another
    file's, nor a project's tree), and what else steers the build."""
    index = {"index_url": ctx.index.index_url, "find_links": list(ctx.index.find_links)}
    return cache_key(
        f"sdist:{sdist.sha256}",
        frontend=ctx.toolchain.name,
        index=index,
        env=build_inputs(ctx.pass_env),
    )
