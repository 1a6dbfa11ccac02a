"""The files themselves, sdist and wheel alike: their names and tags as PyPI accepts them (PEP 625
sdist names, normalized wheel names, platform tags), their size, and pydistcheck's kinds of
hygiene findings (CI and editor junk, paths that differ only in case, unportable paths)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from packaging.tags import Tag
from packaging.utils import NormalizedName
from packaging.version import Version

from sandboxverify.artifacts._rules import Problem, few

#: PyPI's default limit for one file
PYPI_FILE_LIMIT = 100 * 1024 * 1024
_PATH_LIMIT = 200
#: directories nothing installs or builds from: VCS, CI, editors, caches
JUNK_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".github",
        ".gitlab",
        ".circleci",
        ".appveyor",
        ".binder",
        ".idea",
        ".vscode",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".venv",
        "__pycache__",
    }
)
#: files of CI services, editors and the desktop (``.gitignore`` is not among them: hatchling
#: ships it in every sdist, and it is harmless there)
JUNK_FILES = frozenset(
    {
        ".DS_Store",
        "Thumbs.db",
        ".travis.yml",
        "appveyor.yml",
        ".appveyor.yml",
        "azure-pipelines.yml",
        ".azure-pipelines.yml",
        ".cirrus.yml",
        ".cirrus.star",
        "codecov.yml",
        ".codecov.yml",
        ".gitpod.yml",
        ".hadolint.yaml",
        ".lycheeignore",
        ".readthedocs.yaml",
        ".readthedocs.yml",
        "vsts-ci.yml",
        ".vsts-ci.yml",
        ".gitlab-ci.yml",
    }
)
#: the platform tags PyPI accepts (warehouse's list, as patterns)
_PYPI_PLATFORMS = re.compile(
    r"^(any|win32|win_amd64|win_arm64|win_ia64"
    r"|manylinux1_(x86_64|i686)|manylinux2010_(x86_64|i686)"
    r"|manylinux2014_(x86_64|i686|aarch64|armv7l|ppc64|ppc64le|s390x)"
    r"|manylinux_\d+_\d+_(x86_64|i686|aarch64|armv7l|ppc64|ppc64le|s390x|riscv64)"
    r"|musllinux_\d+_\d+_(x86_64|i686|aarch64|armv7l|ppc64le|s390x|riscv64)"
    r"|macosx_\d+_\d+_(x86_64|arm64|universal2|intel|i386|ppc|ppc64|fat|fat3|fat64|universal)"
    r"|ios_\d+_\d+_(arm64|x86_64)_(iphoneos|iphonesimulator)"
    r"|android_\d+_(armeabi_v7a|arm64_v8a|x86|x86_64)"
    r"|pyemscripten_\d+_\d+_wasm32|emscripten_\d+_\d+_\d+_wasm32"
    r"|linux_armv6l|linux_armv7l)$"
)


def normalized_stem(name: NormalizedName, version: Version) -> str:
    """``{name}-{version}`` as PEP 625 and the wheel specification spell a filename."""
    return f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}"


def filename_problems(
    path: Path, name: NormalizedName, version: Version, tags: Iterable[Tag] = ()
) -> list[Problem]:
    """The file's name and size as PyPI judges them."""
    filename = path.name
    found: list[Problem] = []

    def refuse(rule: str, message: str, hint: str) -> None:
        found.append(Problem(f"{filename}: {message}", hint, True, rule, filename))

    stem = normalized_stem(name, version)
    if filename.endswith(".whl"):
        if not filename.startswith(f"{stem}-"):
            refuse(
                "wheel-filename",
                f"PyPI takes a wheel named {stem}-*.whl (the normalized name and version)",
                "build it with a current build backend (python -m build, uv build); never "
                "rename a wheel by hand",
            )
        refused = sorted({tag.platform for tag in tags if not _PYPI_PLATFORMS.match(tag.platform)})
        if refused:
            refuse(
                "wheel-platform-tag",
                f"PyPI refuses the platform tag(s) {', '.join(refused)}",
                "repair a Linux wheel into a manylinux or musllinux one (auditwheel repair), "
                "or build it with cibuildwheel",
            )
    elif filename != f"{stem}.tar.gz":
        refuse(
            "sdist-filename",
            f"PyPI takes an sdist named {stem}.tar.gz (PEP 625)",
            "build it with a current build backend (setuptools >= 69.3, hatchling, flit-core "
            ">= 3.9, uv build); a .zip sdist is refused too",
        )
    size = path.stat().st_size
    if size > PYPI_FILE_LIMIT:
        refuse(
            "artifact-too-large",
            f"the file takes {size / (1 << 20):.0f} MiB; PyPI takes 100 MiB unless the "
            "project's limit was raised",
            "leave large data out of the package (download it at run time), or ask PyPI to "
            "raise the project's limit",
        )
    return found


def hygiene_problems(filename: str, members: Sequence[str]) -> list[Problem]:
    """Junk and unportable paths among an archive's members (an sdist's without its top-level
    directory)."""
    found: list[Problem] = []

    def warn(rule: str, message: str, hint: str) -> None:
        found.append(Problem(f"{filename}: {message}", hint, True, rule, filename))

    junk = junk_paths(members)
    if junk:
        warn(
            "junk-files",
            f"ships files no user needs: {few(junk)}",
            "exclude them from the build: hatchling [tool.hatch.build] exclude, setuptools "
            "MANIFEST.in prune/exclude (or stop including everything with graft .)",
        )
    by_case: dict[str, list[str]] = defaultdict(list)
    for member in members:
        by_case[member.lower()].append(member)
    collisions = sorted(
        " = ".join(sorted(set(same))) for same in by_case.values() if len(set(same)) > 1
    )
    if collisions:
        warn(
            "path-case-collision",
            f"paths that differ only in case (one overwrites the other on macOS and Windows): "
            f"{few(collisions)}",
            "rename one of each pair",
        )
    odd = [m for m in members if " " in m or not m.isascii() or len(m) > _PATH_LIMIT]
    if odd:
        warn(
            "path-unportable",
            f"paths with spaces, non-ASCII characters or over {_PATH_LIMIT} characters: {few(odd)}",
            "rename them: some installers, file systems and tools mishandle such paths",
        )
    return found


def junk_paths(members: Sequence[str]) -> list[str]:
    """The members that are junk, a junk directory named once."""
    found: dict[str, None] = {}
    for member in members:
        parts = member.rstrip("/").split("/")
        directory = next((i for i, part in enumerate(parts[:-1]) if part in JUNK_DIRECTORIES), None)
        if directory is not None:
            found["/".join(parts[: directory + 1]) + "/"] = None
        elif parts[-1] in JUNK_FILES or parts[-1] in JUNK_DIRECTORIES:
            found[member.rstrip("/") + ("/" if parts[-1] in JUNK_DIRECTORIES else "")] = None
    return list(found)
