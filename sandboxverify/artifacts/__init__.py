"""Stage ``build`` and what it produces: the targets, a copy of the source tree, the sdist and
the wheel built from it (or the artifacts given), and the static rules every artifact must
satisfy before anything installs it (metadata, RECORD, contents).

Backends run through the sandbox room's process control; imports sandbox and report only.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    shared_namespace,
)
from sandboxverify.artifacts._build import BuildResult, build_project
from sandboxverify.artifacts._cache import ArtifactCache, default_root
from sandboxverify.artifacts._compare import SDIST_LACKS, WHEEL_STALE, compare_wheels
from sandboxverify.artifacts._findings import promoted, unknown_warning_codes
from sandboxverify.artifacts._given import prepare_artifacts
from sandboxverify.artifacts._keep import KeepFailed, keep_artifacts
from sandboxverify.artifacts._pyproject_validator import pyproject_validator
from sandboxverify.artifacts._wheelless import install_building_wheelless

if TYPE_CHECKING:
    from sandboxverify.artifacts._dependency import build_dependency_wheel
    from sandboxverify.artifacts._index import FetchError, IndexFile, PackageIndex

__all__ = [
    "SDIST_LACKS",
    "WHEEL_STALE",
    "Artifact",
    "ArtifactCache",
    "ArtifactProblem",
    "ArtifactsTarget",
    "BuildResult",
    "FetchError",
    "IndexFile",
    "KeepFailed",
    "PackageIndex",
    "ProjectTarget",
    "Target",
    "build_dependency_wheel",
    "build_project",
    "classify",
    "compare_wheels",
    "default_root",
    "fits",
    "inspect_sdist",
    "inspect_wheel",
    "install_building_wheelless",
    "keep_artifacts",
    "prepare_artifacts",
    "promoted",
    "pyproject_validator",
    "select_wheel",
    "shared_namespace",
    "unknown_warning_codes",
]

#: releases on an index, fetched as they are (``survey``): imported when a survey asks, so a
#: check never pays for the HTTP and HTML machinery
_IMPORTED_ON_FIRST_USE = {
    "FetchError": "_index",
    "IndexFile": "_index",
    "PackageIndex": "_index",
    "build_dependency_wheel": "_dependency",
}


def __getattr__(name: str) -> Any:
    module = _IMPORTED_ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
