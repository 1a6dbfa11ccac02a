"""Stage ``build`` for given artifacts: verified as they are; a wheel is built only from an
sdist given without one."""

from __future__ import annotations

import time
from collections.abc import Sequence

from sandboxverify.artifacts._artifacts import ArtifactsTarget, same_release_named
from sandboxverify.artifacts._backend import BuildFrontend
from sandboxverify.artifacts._build import (
    BuildResult,
    build_failure,
    inspected,
    release_mismatch,
    unpack_sdist,
)
from sandboxverify.artifacts._cache import ArtifactCache
from sandboxverify.sandbox import RunContext, Workspace


def prepare_artifacts(
    target: ArtifactsTarget,
    workspace: Workspace,
    ctx: RunContext,
    *,
    cache: ArtifactCache | None = None,
    expect_files: Sequence[str] = (),
) -> BuildResult:
    """Verify given artifacts; only when no wheel is given is one built, from the sdist (with
    the build hints of ``cache``, when given). ``expect_files``: path globs every wheel must
    match."""
    started = time.perf_counter()
    same_release_named([*target.sdists, *target.wheels])
    given = [*target.sdists, *target.wheels]
    if target.wheels:
        return inspected(given, expect_files, built=False, started=started)
    checked = inspected(given, expect_files, built=False, started=started)
    if checked.failures or checked.sdist is None:
        return checked
    sdist = checked.sdist
    tree = unpack_sdist(sdist.path, workspace.root / "sdist")
    if isinstance(tree, tuple):
        return BuildResult(sdist, (), (), tree, time.perf_counter() - started, True)
    hooks = BuildFrontend(workspace, ctx, cache).build("wheel", tree)
    wheels = sorted(workspace.dist.glob("*.whl"))
    if not hooks.ok or len(wheels) != 1:
        failure = build_failure(
            f"building a wheel from {sdist.path.name}",
            hooks,
            "a file the build needs is probably missing from the sdist",
        )
        return BuildResult(sdist, (), (), (failure,), time.perf_counter() - started, True)
    wheel_result = inspected(wheels, expect_files, built=True, started=started)
    mismatch = release_mismatch([sdist, *wheel_result.wheels])
    return BuildResult(
        sdist,
        () if mismatch else wheel_result.wheels,
        wheel_result.built,
        (*wheel_result.failures, *([mismatch] if mismatch else [])),
        time.perf_counter() - started,
        True,
    )
