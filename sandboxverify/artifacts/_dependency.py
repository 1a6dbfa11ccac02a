"""A dependency published only as an sdist, built into a wheel the way the project is built.

Installers build such a dependency for users, running its build code as them; sandboxverify's
installer never builds anything, so the install stopped there. Instead its sdist is fetched
from the index (its sha256 checked), unpacked by the one safe extraction, and built by the same
frontend as the project, its hooks confined as the project's are, in a workspace of its own; the
wheel is offered to the installer with ``--find-links``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import Version

from sandboxverify.artifacts._backend import BuildFrontend
from sandboxverify.artifacts._build_steps import build_failure, unpack_sdist
from sandboxverify.report import Failure
from sandboxverify.sandbox import RunContext, Workspace


def build_dependency_wheel(
    name: str, python: Version, into: Path, ctx: RunContext
) -> tuple[str | None, Failure | None]:
    """The file name of the wheel built into ``into`` from the sdist of ``name``'s newest
    release on the check's index (or ``--find-links``), or why it could not be built."""
    from sandboxverify.artifacts._index import FetchError, PackageIndex  # noqa: PLC0415 - rarely

    links = tuple(link for link in ctx.index.find_links if Path(link) != into)
    index = PackageIndex(ctx.index.index_url, links)
    try:
        chosen = index.choose(Requirement(name), python)
    except (FetchError, InvalidRequirement) as exc:
        return None, _cannot(name, str(exc))
    if chosen.kind != "sdist":
        return None, _cannot(name, f"its newest release has no sdist either ({chosen.filename})")
    with Workspace() as workspace:
        try:
            sdist = index.download(chosen, workspace.root / "download")
        except FetchError as exc:
            return None, _cannot(name, str(exc))
        tree = unpack_sdist(sdist, workspace.root / "source")
        if isinstance(tree, tuple):
            return None, tree[0]
        frontend = BuildFrontend(workspace, ctx)
        try:
            hooks = frontend.build("wheel", tree)
        finally:
            frontend.close()
        wheels = sorted(workspace.dist.glob("*.whl"))
        if not hooks.ok or len(wheels) != 1:
            return None, build_failure(
                f"building a wheel of the dependency {name} from {chosen.filename}",
                hooks,
                "its users' installers build it too, and fail the same way unless their "
                "machine has what its build needs (a compiler, system libraries): say so in "
                "your README, or depend on a release that publishes wheels",
            )
        into.mkdir(parents=True, exist_ok=True)
        shutil.copy2(wheels[0], into / wheels[0].name)
        return wheels[0].name, None


def _cannot(name: str, why: str) -> Failure:
    return Failure(
        "install_failed",
        f"the dependency {name!r} has no wheel for this Python, and its sdist could not be "
        f"fetched to build one: {why}",
        hint="check --index-url and --find-links, or pass a wheel of it with --find-links",
    )
