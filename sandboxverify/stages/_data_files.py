"""``.py`` files a package ships as data: templates and scripts its application runs in its
users' projects, never imports. alembic's ``templates/generic/env.py`` is copied into a
project by ``alembic init`` and run by ``alembic upgrade`` with ``alembic.context`` set up;
imported alone it raises. Such a file lies in a directory without ``__init__.py`` inside a
regular package, and no module of the package imports it.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path

from sandboxverify.report import ExcusedModule
from sandboxverify.stages._wheel_imports import importers_of


def shipped_as_data(wheel: Path, modules: Sequence[str]) -> dict[str, ExcusedModule]:
    """Each of ``modules`` that is a data file of the wheel, as excused."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = set(archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return {}
    candidates: dict[str, str] = {}
    for module in modules:
        parts = module.split(".")
        directories = ["/".join(parts[:n]) for n in range(1, len(parts))]
        if f"{module.replace('.', '/')}/__init__.py" in members:
            continue  # a package's own __init__
        within = [d for d in directories if f"{d}/__init__.py" in members]
        without = [d for d in directories if f"{d}/__init__.py" not in members]
        # below a regular package, in a directory that is none
        if within and without and directories.index(without[0]) > directories.index(within[0]):
            candidates[module] = without[0]
    if not candidates:
        return {}
    importers = importers_of(wheel, list(candidates))
    return {
        module: ExcusedModule(
            module,
            "data",
            f"a file the package ships as data, not one of its modules: {directory}/ has no "
            "__init__.py and no module of the package imports it (a template or a script "
            "its application runs in its users' projects)",
        )
        for module, directory in candidates.items()
        if not importers.get(module)
    }
