"""One PEP 517 build, split at the trust boundary.

The trusted half runs as it is: a fresh build environment, and the installer putting the build's
requirements into it (with the user's index settings and credentials). The untrusted half, the
backend's hooks (``get_requires_for_build_*``, ``build_*``), is the project's own code: it runs
confined (the OS sandbox or process isolation), with an environment that holds no installer
settings and a private, empty HOME and TMPDIR; in the OS sandbox only the tree being built, the
output directory and the hook's own exchange directory are writable, and the build environment
is read-only. pypa/build drives the hooks; they reach us through its ``runner``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from build import BuildBackendException, BuildException, ProjectBuilder
from packaging.requirements import InvalidRequirement, Requirement

from sandboxverify.sandbox._environment import backend_env, installer_env
from sandboxverify.sandbox._isolation import Confined, Confinement, Isolation, interpreter_roots
from sandboxverify.sandbox._subprocess import Command, Observer, Outcome, format_argv, run
from sandboxverify.sandbox._toolchain import Builder, IndexOptions

Distribution = Literal["sdist", "wheel"]


class BuildStepFailed(Exception):
    """A build step failed; its output is in the build's log, ``outcome`` if a command ran."""

    def __init__(self, message: str, outcome: Outcome | None = None) -> None:
        super().__init__(message)
        self.outcome = outcome

    @property
    def timed_out(self) -> bool:
        return self.outcome is not None and self.outcome.timed_out


@dataclass(frozen=True)
class BuildPlace:
    """Where one build works: ``root`` holds its environments, home, temporary directory and
    the hook script; ``log`` collects the output of every step (its tail explains a failure)."""

    root: Path
    log: Path


@dataclass(frozen=True)
class BuildTools:
    builder: Builder
    index: IndexOptions
    pass_env: tuple[str, ...]
    timeout: float
    isolation: Isolation
    observer: Observer | None


def build_distribution(
    kind: Distribution, source: Path, out: Path, place: BuildPlace, tools: BuildTools
) -> Path:
    """Build ``kind`` from the tree ``source`` into ``out``; raises :class:`BuildStepFailed`."""
    return _Build(kind, source, out, place, tools).run()


class _Build:
    def __init__(
        self, kind: Distribution, source: Path, out: Path, place: BuildPlace, tools: BuildTools
    ) -> None:
        self.kind = kind
        self.source = source
        self.out = out
        self.place = place
        self.tools = tools
        self.env = place.root / f"env-{kind}"
        self.home = place.root / "home"
        self.tmp = place.root / "tmp"
        self.hooks = place.root / "hooks"
        self.last: Outcome | None = None

    @property
    def python(self) -> Path:
        return self.env / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")

    @property
    def scripts(self) -> Path:
        return self.python.parent

    def run(self) -> Path:
        for path in (self.home, self.tmp, self.hooks, self.out):
            path.mkdir(parents=True, exist_ok=True)
        self._trusted(self.tools.builder.environment(self.env), "environment")
        try:
            builder = ProjectBuilder(self.source, python_executable=str(self.python), runner=self)
            self._install(builder.build_system_requires, "build-system.requires")
            self._install(
                builder.get_requires_for_build(self.kind), f"get_requires_for_build_{self.kind}"
            )
            built = Path(builder.build(self.kind, self.out))
        except BuildBackendException as exc:
            self._note(f"ERROR {exc}")
            raise BuildStepFailed(str(exc), self.last) from None
        except BuildException as exc:
            self._note(f"ERROR {exc}")
            raise BuildStepFailed(str(exc)) from None
        if not built.is_file() or built.resolve().parent != self.out.resolve():
            message = f"the backend reported {built.name!r} as its {self.kind}: no such file"
            self._note(f"ERROR {message}")
            raise BuildStepFailed(message)
        return built

    def __call__(
        self,
        cmd: Sequence[str],
        cwd: str | None = None,
        extra_environ: Mapping[str, str] | None = None,
    ) -> None:
        """pypa/build's runner: one backend hook, confined. ``cmd`` is ``[python, script, hook,
        exchange directory]``; the script (pyproject_hooks' ``_in_process.py``) is copied out of
        our installation, which the OS sandbox never shows."""
        python, script, hook, exchange = cmd[0], Path(cmd[1]), cmd[2], Path(cmd[3])
        local = self.hooks / script.name
        if not local.is_file():
            shutil.copyfile(script, local)
        env = backend_env(self.scripts, self.home, self.tmp, self.tools.pass_env)
        env.update(extra_environ or {})
        where = Path(cwd) if cwd else self.source
        confinement = Confinement(
            cwd=where,
            read_only=(self.env, self.hooks, *interpreter_roots(Path(sys.executable), self.python)),
            writable=(self.source, self.out, exchange),
            private=(self.home, self.tmp),
        )
        outcome = self._command(
            [python, str(local), hook, str(exchange)],
            env,
            hook,
            where,
            launcher=Confined(self.tools.isolation, confinement),
        )
        if not outcome.ok:
            raise subprocess.CalledProcessError(outcome.returncode or 1, list(cmd))

    def _install(self, requirements: Iterable[object], what: str) -> None:
        """Install requirements that came from the project (its pyproject.toml or a hook): only
        valid requirement strings reach the installer, never an option in disguise."""
        wanted: list[str] = []
        for requirement in sorted(requirements, key=str):
            problem = None
            if not isinstance(requirement, str):
                problem = "not a string"
            else:
                try:
                    Requirement(requirement)
                except InvalidRequirement as exc:
                    problem = f"not a requirement: {exc}"
            if problem is not None or not isinstance(requirement, str):
                message = f"{what} lists {requirement!r}, {problem}"
                self._note(f"ERROR {message}")
                raise BuildStepFailed(message)
            wanted.append(requirement)
        if wanted:
            argv = self.tools.builder.requirements(self.python, wanted, self.tools.index)
            self._trusted(argv, f"install-{self.kind}")

    def _trusted(self, argv: list[str], step: str) -> None:
        env = installer_env(self.place.root / "installer-tmp", self.tools.pass_env)
        env.update(self.tools.index.pip_env())
        outcome = self._command(argv, env, step, self.place.root)
        if not outcome.ok:
            raise BuildStepFailed(f"{step} {outcome.describe()}", outcome)

    def _command(
        self,
        argv: list[str],
        env: dict[str, str],
        step: str,
        cwd: Path,
        launcher: Confined | None = None,
    ) -> Outcome:
        log = self.place.root / "logs" / f"{self.kind}-{step}.log"
        command = Command(
            argv=argv,
            env=env,
            cwd=cwd,
            timeout=self.tools.timeout,
            log_path=log,
            label=f"build-{self.kind}-{step}",
            launcher=launcher,
        )
        self._note(f"$ {format_argv(argv)}")
        outcome = run(command, self.tools.observer)
        self.last = outcome
        try:
            output = log.read_bytes()
        except OSError:
            output = b""
        with self.place.log.open("ab") as combined:
            combined.write(output)
        if not outcome.ok:
            self._note(f"({step} {outcome.describe()})")
        return outcome

    def _note(self, line: str) -> None:
        self.place.log.parent.mkdir(parents=True, exist_ok=True)
        with self.place.log.open("a", encoding="utf-8") as combined:
            combined.write(line + "\n")
