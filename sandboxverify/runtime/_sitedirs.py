"""The sandbox's site-packages directories, and the directories their ``.pth`` files add to
``sys.path``.

Both ``discover`` (which explains an isolation leak with them) and ``imports`` (which checks
where every loaded module comes from) need them; a module of their own keeps ``discover`` from
compiling the whole ``imports`` action in every check.
"""

from __future__ import annotations

import os
import sysconfig

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (~10 ms in every sandbox process)
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any


def site_packages() -> list[str]:
    """The sandbox's own site-packages directories (purelib and platlib may differ)."""
    paths = sysconfig.get_paths()
    return list(dict.fromkeys(os.path.realpath(paths[key]) for key in ("purelib", "platlib")))


def is_pth(path: str) -> bool:
    """Whether ``path`` names a ``.pth`` file (``PurePath.suffix``, without ``pathlib``)."""
    return os.path.splitext(os.path.basename(path))[1] == ".pth"


def path_sources(site_dirs: Sequence[str], own: Iterable[str] = ()) -> dict[str, dict[str, Any]]:
    """Directories ``.pth`` files in site-packages put on ``sys.path``, each with the file
    (``pth``) and whether the distribution under test ships it (``shipped``)."""
    shipped = {os.path.realpath(path) for path in own}
    sources: dict[str, dict[str, Any]] = {}
    for site_dir in site_dirs:
        try:
            pth_files = sorted(name for name in os.listdir(site_dir) if name.endswith(".pth"))
        except OSError:
            continue
        for name in pth_files:
            path = os.path.join(site_dir, name)
            source = {"pth": name, "shipped": os.path.realpath(path) in shipped}
            for directory in _pth_directories(site_dir, path):
                sources.setdefault(directory, source)
    return sources


def _pth_directories(site_dir: str, path: str) -> list[str]:
    """What ``site`` adds to ``sys.path`` for one ``.pth`` file (import lines run code instead)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        text = line.rstrip()
        if not text or text.startswith(("#", "import ", "import\t")):
            continue
        directory = os.path.realpath(os.path.join(site_dir, text))
        if os.path.isdir(directory):
            found.append(directory)
    return found
