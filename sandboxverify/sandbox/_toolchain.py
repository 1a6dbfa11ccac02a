"""Which tools create sandboxes and build environments and install: virtualenv + pip, or uv.

Each piece sits behind a small Protocol that only *describes* commands (argv lists); the stages
run them through the one subprocess helper. uv is the fast path when it is available, never a
requirement.

Installers are trusted and run outside the sandbox, so they never build anything: every sdist
is the package's (or a dependency's) code. uv installs with ``--no-build``, pip with
``--only-binary :all:``; and since pip still builds what a direct reference
(``name @ file:///...tar.gz``, ``name @ https://...``) points at, no requirement with a URL or
a path is ever handed to an installer (``direct_references``).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from typing import Literal, Protocol

from sandboxverify._errors import UsageError
from sandboxverify._frozen import frozen

InstallerChoice = Literal["auto", "pip", "uv"]
INSTALLER_CHOICES: tuple[InstallerChoice, ...] = ("auto", "pip", "uv")


@frozen
class IndexOptions:
    """Where dependencies come from, passed to the build frontend and the installer alike."""

    index_url: str | None = None
    find_links: tuple[str, ...] = field(default_factory=tuple)

    def pip_env(self) -> dict[str, str]:
        env: dict[str, str] = {}
        if self.index_url:
            env["PIP_INDEX_URL"] = self.index_url
        if self.find_links:
            env["PIP_FIND_LINKS"] = " ".join(self.find_links)
        return env

    def flags(self) -> list[str]:
        flags: list[str] = []
        if self.index_url:
            flags += ["--index-url", self.index_url]
        for link in self.find_links:
            flags += ["--find-links", link]
        return flags


class SandboxBackend(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def self_contained(self) -> bool:
        """Whether the command line, its program's file and the interpreter's say all that
        decides what :meth:`create` makes (a copy of an earlier one is then as good)."""

    def create(self, interpreter: Path, dest: Path) -> list[str]: ...


class Installer(Protocol):
    @property
    def name(self) -> str: ...

    def install(
        self,
        python: Path,
        wheel: Path,
        index: IndexOptions,
        extra: Sequence[str] = (),
    ) -> list[str]:
        """Install the wheel and ``extra`` requirements, building nothing: every dependency comes
        as a wheel."""

    def fetch(self, python: Path, requirement: str, target: Path, index: IndexOptions) -> list[str]:
        """Unpack ``requirement``'s wheel alone (no dependencies, nothing built) into the
        directory ``target``, for ``python``: a candidate application, read before it is
        installed."""

    def check(self, python: Path) -> list[str]: ...

    def learn_interpreter(self, python: Path) -> list[str] | None:
        """A command that has the installer learn a fresh environment's interpreter before
        anything is installed in it (while the build runs), or ``None``: nothing to learn."""

    def install_requirements(
        self, python: Path, requirements: Sequence[str], index: IndexOptions
    ) -> list[str]:
        """Install requirement strings (a build environment's ``build-system.requires``)."""


@frozen
class VirtualenvBackend:
    name: str = "virtualenv"
    #: what it makes also depends on the versions of virtualenv and of the seeds it carries
    self_contained: bool = False

    def create(self, interpreter: Path, dest: Path) -> list[str]:
        # pip is seeded because it installs; setuptools is not: a package that imports it without
        # declaring it must fail here as it would for a user of a modern installer.
        return [
            sys.executable,
            "-m",
            "virtualenv",
            "--no-periodic-update",
            "--no-setuptools",
            "--python",
            str(interpreter),
            str(dest),
        ]


@frozen
class UvVenvBackend:
    uv: Path
    name: str = "uv venv"
    #: one static binary
    self_contained: bool = True

    def create(self, interpreter: Path, dest: Path) -> list[str]:
        return [
            str(self.uv),
            "venv",
            "--no-python-downloads",
            "--no-project",
            "--python",
            str(interpreter),
            str(dest),
        ]


@frozen
class PipInstaller:
    name: str = "pip"

    def install(
        self,
        python: Path,
        wheel: Path,
        index: IndexOptions,
        extra: Sequence[str] = (),
    ) -> list[str]:
        return [
            str(python),
            "-m",
            "pip",
            "install",
            "--no-input",
            "--disable-pip-version-check",
            *_PIP_NO_BUILD,
            *index.flags(),
            str(wheel),
            *extra,
        ]

    def fetch(self, python: Path, requirement: str, target: Path, index: IndexOptions) -> list[str]:
        return [
            str(python),
            "-m",
            "pip",
            "install",
            "--no-input",
            "--disable-pip-version-check",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--target",
            str(target),
            *index.flags(),
            "--",
            requirement,
        ]

    def check(self, python: Path) -> list[str]:
        return [str(python), "-m", "pip", "check", "--disable-pip-version-check"]

    def learn_interpreter(self, python: Path) -> list[str] | None:
        return None  # pip runs in the environment's own interpreter

    def install_requirements(
        self, python: Path, requirements: Sequence[str], index: IndexOptions
    ) -> list[str]:
        return [
            str(python),
            "-m",
            "pip",
            "install",
            "--no-input",
            "--disable-pip-version-check",
            *_PIP_NO_BUILD,
            *index.flags(),
            "--",
            *requirements,
        ]


@frozen
class UvInstaller:
    uv: Path
    #: ``copy`` when plugin code could write to what is installed (process isolation): uv
    #: hard-links files from its cache by default, and a plugin editing an installed file would
    #: change the cached one every later install uses
    link_mode: str | None = None
    name: str = "uv"

    def install(
        self,
        python: Path,
        wheel: Path,
        index: IndexOptions,
        extra: Sequence[str] = (),
    ) -> list[str]:
        return [
            str(self.uv),
            "pip",
            "install",
            "--no-python-downloads",
            "--python",
            str(python),
            *_link_mode(self.link_mode),
            "--no-build",
            *index.flags(),
            str(wheel),
            *extra,
        ]

    def fetch(self, python: Path, requirement: str, target: Path, index: IndexOptions) -> list[str]:
        return [
            str(self.uv),
            "pip",
            "install",
            "--no-python-downloads",
            "--python",
            str(python),
            "--no-deps",
            "--no-build",
            "--target",
            str(target),
            "--link-mode",
            "copy",
            *index.flags(),
            "--",
            requirement,
        ]

    def check(self, python: Path) -> list[str]:
        return [str(self.uv), "pip", "check", "--python", str(python)]

    def learn_interpreter(self, python: Path) -> list[str] | None:
        # uv asks an interpreter it has not met what it is (~40 ms of an install) and keeps
        # the answer; listing the empty environment is the cheapest way to make it ask
        return [str(self.uv), "pip", "list", "--python", str(python)]

    def install_requirements(
        self, python: Path, requirements: Sequence[str], index: IndexOptions
    ) -> list[str]:
        return [
            str(self.uv),
            "pip",
            "install",
            "--no-python-downloads",
            "--python",
            str(python),
            *_link_mode(self.link_mode),
            "--no-build",
            *index.flags(),
            "--",
            *requirements,
        ]


@frozen
class Toolchain:
    """How sandboxes and build environments are made (``sandbox``) and filled (``installer``).
    Build environments come from the interpreter running sandboxverify; the PEP 517 hooks run
    in them through ``runtime/_pep517``, confined: never here."""

    sandbox: SandboxBackend
    installer: Installer

    @property
    def name(self) -> str:
        return self.installer.name

    @property
    def interpreter(self) -> Path:
        """The interpreter build environments are made from."""
        return Path(sys.executable)

    @property
    def prefixes(self) -> tuple[str, ...]:
        """Its base prefixes, which build environments made from it share."""
        return (sys.base_prefix, sys.base_exec_prefix)


def find_uv() -> Path | None:
    """uv next to our interpreter (``pip install sandboxverify[uv]``) or on PATH."""
    scripts = Path(sys.executable).parent
    for name in ("uv", "uv.exe"):
        candidate = scripts / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    located = shutil.which("uv")
    return Path(located) if located else None


#: pip installs wheels only (a flag: ``PIP_ONLY_BINARY`` of the caller's cannot undo it)
_PIP_NO_BUILD = ("--only-binary", ":all:")


def direct_references(requirements: Sequence[str]) -> list[str]:
    """The requirements that point at a URL or a path (``name @ file:///...``), which no
    installer may get: pip builds what one points at even with ``--only-binary :all:``. A
    string that is no PEP 508 requirement counts too: pip takes ``./evil.tar.gz`` or a bare
    URL as one."""
    # imported when asked: --help imports this module for the installer choices
    from packaging.requirements import InvalidRequirement, Requirement  # noqa: PLC0415

    found = []
    for text in requirements:
        try:
            if Requirement(text).url:
                found.append(text)
        except InvalidRequirement:
            found.append(text)
    return found


def _link_mode(mode: str | None) -> list[str]:
    return ["--link-mode", mode] if mode else []


def choose_toolchain(installer: InstallerChoice, *, writable_installs: bool = False) -> Toolchain:
    """``writable_installs``: untrusted code can write to what gets installed (no OS sandbox
    keeps the environments read-only), so nothing installed may be shared with a cache."""
    uv = find_uv() if installer in ("auto", "uv") else None
    if installer == "uv" and uv is None:
        raise UsageError(
            "--installer uv was asked for, but uv is not installed",
            hint="pip install 'sandboxverify[uv]' (or uv itself), or use --installer pip",
        )
    if uv is not None:
        link_mode = "copy" if writable_installs else None
        return Toolchain(UvVenvBackend(uv), UvInstaller(uv, link_mode))
    return Toolchain(VirtualenvBackend(), PipInstaller())
