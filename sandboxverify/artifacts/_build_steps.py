"""What building from an sdist does, wherever it is built: the project's wheel from its sdist
(``_build``, ``_given``) and a dependency's (``_dependency``): the sdist unpacked safely, and a
failed build step said as a failure.
"""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

from sandboxverify.artifacts._archives import UnsafeArchive, extract_sdist
from sandboxverify.artifacts._artifacts import UNREADABLE
from sandboxverify.artifacts._backend import HookRun
from sandboxverify.artifacts._rules import REBUILD_HINT, Problem, unsafe_problems
from sandboxverify.report import Failure, reached_for_network, summarize
from sandboxverify.sandbox import NO_WHEEL_HINT, without_wheel

#: the last module a failed build could not import
_NO_MODULE = re.compile(r"No module named '([^']+)'(?![\s\S]*No module named ')")


def build_failure(step: str, hooks: HookRun, hint: str) -> Failure:
    outcome = hooks.failed
    if outcome is not None and outcome.timed_out:
        return Failure(
            "timeout",
            f"{step} {outcome.describe()}",
            hint="raise --install-timeout",
            details=outcome.tail,
        )
    if outcome is not None and not outcome.ok:
        cause = summarize(outcome.tail)
    else:
        cause = hooks.problem or "the build reported success but left no artifact"
    sdist_only = without_wheel(outcome.tail) if outcome is not None and not outcome.ok else None
    if sdist_only is not None and hooks.doing:
        # a build requirement without a wheel, which was built (confined) and not taken, or
        # did not build: the project's own sdist is not at fault
        cause = (
            f"the build requirement {sdist_only!r} has no wheel, only a source distribution, "
            + (
                f"and building a wheel of it here failed: {hooks.unbuilt}"
                if hooks.unbuilt
                else "and the wheel built of it here was not taken"
            )
        )
        hint = NO_WHEEL_HINT
    if hooks.doing:
        cause = f"{hooks.doing}: {cause}"
    missing = _NO_MODULE.search(outcome.tail) if outcome is not None and not outcome.ok else None
    if missing is not None and sdist_only is None:
        # an import the build's own code makes: a build tool it does not declare, or a part of
        # the project the tree left out
        hint = (
            f"the build imports {missing.group(1)}, which its build environment does not have: "
            "if the build uses it, declare it in [build-system] requires (without "
            f"pyproject.toml a build has setuptools alone); if it is the project's own: {hint}"
        )
    if outcome is not None and not outcome.ok and reached_for_network(outcome.tail):
        hint = (
            "the build backend downloads something while it builds (a toolchain such as "
            "Node.js, crates, or data) and could not reach the network: the OS sandbox has none "
            "unless you pass --network; or build where that host is reachable, or verify the "
            "published wheel (sandboxverify check dist/*.whl)"
        )
    return Failure(
        "build_failed",
        f"{step} failed: {cause}",
        hint=hint,
        details=outcome.tail if outcome is not None else None,
    )


def unpack_sdist(sdist: Path, destination: Path) -> Path | tuple[Failure, ...]:
    """The sdist unpacked by the one safe extraction (every member checked first): its
    top-level directory, or ``artifact_invalid`` failures when it must not be unpacked."""
    try:
        extract_sdist(sdist, destination)
    except UnsafeArchive as exc:
        problems = unsafe_problems(sdist.name, exc.reasons)
    except (tarfile.TarError, *UNREADABLE) as exc:
        problems = [Problem(f"{sdist.name}: not a readable archive: {exc}", REBUILD_HINT)]
    else:
        entries = [p for p in destination.iterdir() if p.is_dir()]
        return entries[0] if len(entries) == 1 else destination
    return tuple(Failure("artifact_invalid", p.message, hint=p.hint) for p in problems)
