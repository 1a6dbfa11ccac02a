"""``--dist-dir``: the verified sdist and wheel(s) written where the publish step takes them,
byte for byte. A build is not reproducible (setuptools wheels differ on every build), so the
files published must be these very files, not a rebuild."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from sandboxverify.artifacts._artifacts import Artifact, sha256_of


class KeepFailed(Exception):
    """A verified artifact could not be written to the directory, or was not written intact."""


def keep_artifacts(artifacts: Sequence[Artifact], directory: Path) -> dict[Path, Path]:
    """Each artifact copied into ``directory`` (made if missing), checked against the sha256 it
    was verified with: where each one was written, by its verified path."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise KeepFailed(f"cannot create {directory}: {exc.strerror or exc}") from None
    kept: dict[Path, Path] = {}
    for artifact in artifacts:
        destination = directory / artifact.path.name
        partial = directory / f".{artifact.path.name}.partial"
        try:
            shutil.copyfile(artifact.path, partial)
            if sha256_of(partial) != artifact.sha256:
                partial.unlink()
                raise KeepFailed(f"{artifact.path.name} changed after it was verified")
            os.replace(partial, destination)  # never half a file under the published name
        except OSError as exc:
            raise KeepFailed(
                f"cannot write {artifact.path.name} to {directory}: {exc.strerror or exc}"
            ) from None
        kept[artifact.path] = destination
    return kept
