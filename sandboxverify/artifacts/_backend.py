"""The build frontend: one isolated build environment and one hook runner for both steps.

A build environment is made by the toolchain (``uv venv`` or virtualenv) from the interpreter
running sandboxverify and gets ``build-system.requires`` only; ``runtime/_pep517`` runs the
steps in it, ``get_requires_for_build_*`` and then ``build_*``, with the backend imported once
for both (each hook in a process forked from the runner, see there; the modules the hooks
imported last time are imported before the first fork, a hint kept with the cache). The
environment and its runner serve the sdist and then the wheel from the unpacked sdist, unless
the sdist's own ``[build-system]`` differs: then the wheel gets an environment of its own; an
in-tree backend gets a runner per request. Requirements a backend asks for are installed here,
while the runner waits, and it is asked again.

A build is split at the trust boundary. The environment and the requirements put into it are
trusted: the installer runs as it is, with the user's index settings and credentials. The hook
runner runs the project's own code (its backend, ``setup.py``), so it runs confined, like every
other process that runs code from the package (``sandbox/_isolation``): in the OS sandbox only
the trees it builds (the project's copy, and where its sdist is unpacked) and the output
directory are writable, the build environment and the runner are read-only, HOME and TMPDIR are
private and empty, and its environment holds no installer settings and no credentials
(``backend_env``). Its answers come on a pipe, never from a file it could have written.
Build requirements, ``build-system.requires`` and what a backend asks for alike, are names and
version ranges only, never a URL or a path: the installer would build what one points at
outside the sandbox (and it installs wheels only).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import Version

from sandboxverify._frozen import frozen
from sandboxverify._toml import tomllib
from sandboxverify.artifacts._bytecode import BytecodeCache
from sandboxverify.artifacts._cache import ArtifactCache
from sandboxverify.artifacts._wheelless import install_building_wheelless
from sandboxverify.report import Failure
from sandboxverify.sandbox import (
    Command,
    CommandServer,
    Confined,
    Confinement,
    Launcher,
    Outcome,
    RunContext,
    Workspace,
    backend_env,
    direct_references,
    installer_env,
    interpreter_roots,
    without_wheel,
)


class RequirementBuilder(Protocol):
    """Builds a wheel of ``name`` from its sdist into ``into``: its file name, or why not."""

    def __call__(
        self, name: str, python: Version, into: Path, ctx: RunContext
    ) -> tuple[str | None, Failure | None]: ...


#: PEP 517: a project without ``build-backend`` is built by setuptools' legacy backend.
_DEFAULT_REQUIRES = ("setuptools>=40.8.0",)
_DEFAULT_BACKEND = "setuptools.build_meta:__legacy__"
#: Runner invocations for one step: a backend may ask for more requirements, then more again.
_MAX_INVOCATIONS = 4
#: build requirements published only as sdists built for one build at most
_REQUIREMENTS_BUILT = 2


@frozen
class BuildSystem:
    """``[build-system]`` of a tree (PEP 517/518 defaults when it has none)."""

    requires: tuple[str, ...]
    backend: str
    backend_path: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "requires": list(self.requires),
            "build-backend": self.backend,
            "backend-path": list(self.backend_path),
        }


class BuildSystemError(Exception):
    """A ``pyproject.toml`` no frontend can build from."""


def build_system(tree: Path) -> BuildSystem:
    pyproject = tree / "pyproject.toml"
    if not pyproject.is_file():
        return BuildSystem(_DEFAULT_REQUIRES, _DEFAULT_BACKEND)
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BuildSystemError(f"pyproject.toml cannot be read: {exc}") from None
    table = data.get("build-system")
    if table is None:
        return BuildSystem(_DEFAULT_REQUIRES, _DEFAULT_BACKEND)
    requires = table.get("requires") if isinstance(table, dict) else None
    if not isinstance(requires, list) or not all(isinstance(r, str) for r in requires):
        raise BuildSystemError("[build-system] requires must be a list of requirement strings")
    backend = table.get("build-backend", _DEFAULT_BACKEND)
    backend_path = table.get("backend-path", [])
    if not isinstance(backend, str) or not isinstance(backend_path, list):
        raise BuildSystemError("[build-system] build-backend must be a string")
    return BuildSystem(tuple(requires), backend, tuple(str(p) for p in backend_path))


@dataclass
class HookRun:
    """What a step built (``done``: the artifact's file name), or what stopped it: the command
    whose output explains it, what was being done when it was not the backend itself."""

    done: str | None = None
    failed: Outcome | None = None
    #: what failed, when it was not the backend itself: ``installing its build requirements``
    doing: str | None = None
    problem: str | None = None
    #: why a build requirement published only as an sdist was not built (its build's failure)
    unbuilt: str | None = None

    @property
    def ok(self) -> bool:
        return self.failed is None and self.problem is None


class BuildFrontend:
    """The build environments and hook runs of one build (the sdist, then its wheel); ``close``
    it when the build is over. ``cache``: where the modules a backend imported are remembered
    (``None``: ``--no-cache``)."""

    def __init__(
        self,
        workspace: Workspace,
        ctx: RunContext,
        cache: ArtifactCache | None = None,
        *,
        build_requirement: RequirementBuilder | None = None,
    ) -> None:
        self.workspace = workspace
        self.ctx = ctx
        self.cache = cache
        #: builds a build requirement published only as an sdist (``_dependency``, confined),
        #: to offer it; ``None`` where this build is itself a dependency's (never a chain)
        self.build_requirement = build_requirement
        self.runner = workspace.install_hook_runner()
        self.home = workspace.root / "build-home"
        self.tmp = workspace.root / "build-tmp"
        #: where the wheel's tree, the unpacked sdist, goes: the runner kept from the sdist step
        #: can write in it from the start
        self.unpacked = workspace.root / "sdist"
        for path in (self.home, self.tmp, self.unpacked, workspace.dist):
            path.mkdir(parents=True, exist_ok=True)
        self.commands = 0
        #: the wheels built of build requirements published only as sdists, and why the
        #: last one that did not build did not
        self.built_requirements: list[str] = []
        self.unbuilt: str | None = None
        # in process isolation the build's code could write the cache these come from
        confined = cache is not None and ctx.isolation.name != "process"
        self.bytecode = BytecodeCache(cache.bytecode) if confined and cache else None
        #: build environments whose sources the bytecode cache lacked some of
        self.uncompiled: list[Path] = []
        self.system: BuildSystem | None = None
        self.python: Path | None = None
        self.hooks: CommandServer | None = None

    def build(self, step: str, tree: Path) -> HookRun:
        """``step`` (``sdist`` or ``wheel``) of ``tree``; the artifact goes to
        ``workspace.dist``. The environment of an earlier step, and its hook runner, are reused
        when ``tree`` has the same ``[build-system]``."""
        state = HookRun()
        try:
            system = build_system(tree)
        except BuildSystemError as exc:
            state.problem = str(exc) if step == "sdist" else f"the sdist's {exc}"
            return state
        if self.python is None or system != self.system:
            self.close()
            self.system, self.python = system, self._environment(system, state)
        python = self.python
        if python is None:
            return state
        ready = False
        cache = self.cache
        preload = cache.preload(system.to_json()) if cache is not None else []
        for _ in range(_MAX_INVOCATIONS):
            request = self._request(system, step, tree, ready=ready, preload=preload)
            result = self._runner(python, system, tree).ask(request)
            if result is None or "error" in result:
                state.failed = self.close()
                if result is None and state.failed is not None and state.failed.ok:
                    state.problem = "the hook runner gave no answer"
                return state
            if not _kept(system):  # hooks that ran in the runner itself: it is not reused
                self.close()
            imported = {str(name) for name in result.get("imported") or ()}
            if cache is not None and not imported <= set(preload):
                preload = sorted(imported.union(preload))
                cache.remember_preload(system.to_json(), preload)
            if not result.get("need"):
                state.done = str(result.get("done"))
                return state
            need, problem = _requirements(result["need"])
            if problem is not None:
                state.problem = problem
                return state
            # installed while the runner waits: the next hook, forked from it, finds them
            install = self._install(python, need)
            if not install.ok:
                state.failed, state.doing = install, f"installing {', '.join(need)}"
                state.unbuilt = self.unbuilt
                return state
            ready = True
        state.problem = f"the backend asked for requirements {_MAX_INVOCATIONS} times"
        return state

    def _request(
        self, system: BuildSystem, step: str, tree: Path, *, ready: bool, preload: list[str]
    ) -> dict[str, Any]:
        """What the hook runner is asked for one step (``ready``: its requirements are in)."""
        return {
            "backend": system.backend,
            "backend_path": list(system.backend_path),
            "step": step,
            "source": str(tree),
            "out": str(self.workspace.dist),
            "ready": ready,
            "preload": preload,
        }

    def close(self) -> Outcome | None:
        """End the hook runner, if one runs: how it went."""
        hooks, self.hooks = self.hooks, None
        return hooks.close() if hooks is not None else None

    def keep_bytecode(self) -> None:
        """Compile, for later builds, what the bytecode cache lacked of this build's
        environments (once per backend version: then their modules import from bytecode)."""
        uncompiled, self.uncompiled = self.uncompiled, []
        for environment in uncompiled:
            if self.bytecode is not None:
                self.bytecode.remember(environment)

    def _environment(self, system: BuildSystem, state: HookRun) -> Path | None:
        """A new build environment with ``system.requires`` installed, or None (``state``
        says why)."""
        builder = self.ctx.toolchain
        number = len(list(self.workspace.root.glob("build-env*")))
        dest = self.workspace.root / ("build-env" + (f"-{number + 1}" if number else ""))
        created = self._run(builder.sandbox.create(builder.interpreter, dest), "build-env")
        python = dest / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
        if not created.ok or not python.exists():
            state.failed, state.doing = created, "creating its build environment"
            return None
        refused = direct_references(system.requires)
        if refused:
            state.problem = f"[build-system] requires {', '.join(map(repr, refused))}: {_BY_NAME}"
            return None
        if system.requires:
            installed = self._install(python, list(system.requires))
            if not installed.ok:
                state.failed, state.unbuilt = installed, self.unbuilt
                state.doing = f"installing its build requirements ({', '.join(system.requires)})"
                return None
        if self.bytecode is not None and self.bytecode.restore(dest):
            self.uncompiled.append(dest)
        return python

    def _install(self, python: Path, requirements: list[str]) -> Outcome:
        """``requirements`` installed in the build environment; one the installer stops at for
        want of a wheel is built from its sdist as a dependency of the project is
        (``_dependency``: confined) and offered with ``--find-links`` (a few at most)."""
        installer = self.ctx.toolchain.installer
        outcome, _ = install_building_wheelless(
            lambda index: self._run(
                installer.install_requirements(python, requirements, index), "build-requires"
            ),
            lambda outcome: (
                None
                if outcome.ok or self.build_requirement is None
                else without_wheel(outcome.tail)
            ),
            lambda name: self._built_wheels if self._build_requirement(name) else None,
            self.ctx.index,
            at_most=_REQUIREMENTS_BUILT,
        )
        return outcome

    @property
    def _built_wheels(self) -> Path:
        return self.workspace.root / "build-requirement-wheels"

    def _build_requirement(self, name: str) -> bool:
        if self.build_requirement is None:
            return False
        python = Version(".".join(map(str, sys.version_info[:3])))  # the builds' interpreter
        wheel, failure = self.build_requirement(name, python, self._built_wheels, self.ctx)
        if wheel is not None:
            self.built_requirements.append(wheel)
        self.unbuilt = failure.message if failure is not None else None
        return wheel is not None

    def _runner(self, python: Path, system: BuildSystem, tree: Path) -> CommandServer:
        """The hook runner, confined: the project's backend runs in it. One that is kept for
        the wheel (see ``_kept``) can write in the tree it builds first and where the sdist
        will be unpacked; else only in ``tree``."""
        if self.hooks is not None:
            return self.hooks
        env_dir = python.parent.parent
        trees = (tree, self.unpacked) if _kept(system) and tree != self.unpacked else (tree,)
        confinement = Confinement(
            cwd=tree,
            read_only=(
                env_dir,
                self.runner.parent,
                *interpreter_roots(
                    self.ctx.toolchain.interpreter, python, prefixes=self.ctx.toolchain.prefixes
                ),
            ),
            writable=(*trees, self.workspace.dist),
            private=(self.home, self.tmp),
        )
        env = backend_env(python.parent, self.home, self.tmp, self.ctx.pass_env)
        launcher = Confined(self.ctx.isolation, confinement)
        self.commands += 1
        command = Command(
            argv=[str(python), str(self.runner)],
            env=env,
            cwd=self.workspace.root,
            timeout=self.ctx.install_timeout,
            log_path=self.workspace.logs / f"{self.commands:02d}-build.log",
            label="build",
            launcher=launcher,
        )
        self.hooks = CommandServer(command, self.ctx)
        return self.hooks

    def _run(
        self,
        argv: list[str],
        label: str,
        env: dict[str, str] | None = None,
        launcher: Launcher | None = None,
    ) -> Outcome:
        """A command of the build: trusted (the installer, with its settings) unless a
        ``launcher`` confines it."""
        self.commands += 1
        if env is None:
            env = installer_env(self.workspace.root / "tmp", self.ctx.pass_env)
            env.update(self.ctx.index.pip_env())
        command = Command(
            argv=argv,
            env=env,
            cwd=self.workspace.root,
            timeout=self.ctx.install_timeout,
            log_path=self.workspace.logs / f"{self.commands:02d}-{label}.log",
            label=label,
            launcher=launcher,
        )
        return self.ctx.run(command)


def _kept(system: BuildSystem) -> bool:
    """Whether the hook runner serves the next step too: where its hooks run in children forked
    from it, so nothing one leaves behind reaches the next. An in-tree backend runs in the
    runner itself (its code comes from the tree), as every backend does without ``fork``."""
    return hasattr(os, "fork") and not system.backend_path


#: why a build requirement with a URL or a path is refused
_BY_NAME = (
    "build requirements are installed by name and version range only, never from a URL or "
    "a path (the installer, outside the sandbox, would build or read what it points at)"
)


def _requirements(asked: object) -> tuple[list[str], str | None]:
    """What a backend's ``get_requires_for_build_*`` asked for, if it may reach the installer:
    requirement strings only (never an installer option in disguise), by name and version (the
    installer is not confined: ``x @ file:///home/...`` would bring a file of the user's into
    the build environment, where the backend can read it, and an sdist's URL would be built
    outside the sandbox)."""
    if not isinstance(asked, list):
        return [], f"the backend asked for {asked!r}, not a list of requirements"
    wanted: list[str] = []
    for item in asked:
        problem = None
        if not isinstance(item, str):
            problem = "not a string"
        else:
            try:
                requirement = Requirement(item)
            except InvalidRequirement as exc:
                problem = f"not a requirement: {str(exc).splitlines()[0]}"
            else:
                if requirement.url:
                    problem = f"a URL or a path: {_BY_NAME}"
        if problem is not None:
            return [], f"the backend asked for {item!r}, {problem}"
        wanted.append(str(item))
    return wanted, None
