"""Stage ``build`` and what it produces: the targets, a copy of the source tree, the sdist and
the wheel built from it (or the artifacts given), and the static rules every artifact must
satisfy before anything installs it (metadata, RECORD, contents).

Backends run through the sandbox room's process control; imports sandbox and report only.
"""

from __future__ import annotations

from sandboxverify.artifacts._artifacts import (
    Artifact,
    ArtifactProblem,
    ArtifactsTarget,
    ProjectTarget,
    Target,
    classify,
    fits,
    inspect_sdist,
    inspect_wheel,
    select_wheel,
)
from sandboxverify.artifacts._build import BuildResult, build_project
from sandboxverify.artifacts._cache import ArtifactCache, default_root
from sandboxverify.artifacts._compare import SDIST_LACKS, WHEEL_STALE, compare_wheels
from sandboxverify.artifacts._given import prepare_artifacts

__all__ = [
    "SDIST_LACKS",
    "WHEEL_STALE",
    "Artifact",
    "ArtifactCache",
    "ArtifactProblem",
    "ArtifactsTarget",
    "BuildResult",
    "ProjectTarget",
    "Target",
    "build_project",
    "classify",
    "compare_wheels",
    "default_root",
    "fits",
    "inspect_sdist",
    "inspect_wheel",
    "prepare_artifacts",
    "select_wheel",
]
