"""Stages ``venv`` and ``install``: a throwaway environment; the wheel and declared deps only."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from sandboxverify._frozen import frozen
from sandboxverify.report import Failure, summarize
from sandboxverify.sandbox._context import RunContext
from sandboxverify.sandbox._environment import installer_env, plugin_env
from sandboxverify.sandbox._interpreters import Interpreter
from sandboxverify.sandbox._isolation import Confined, Confinement, Isolation, interpreter_roots
from sandboxverify.sandbox._subprocess import Command, Outcome, format_argv
from sandboxverify.sandbox._templates import copy_template, keep_template, template_for
from sandboxverify.sandbox._toolchain import direct_references
from sandboxverify.sandbox._workspace import SandboxPaths


@frozen
class Sandbox:
    interpreter: Interpreter
    paths: SandboxPaths

    @property
    def bin(self) -> Path:
        return self.paths.venv / ("Scripts" if sys.platform == "win32" else "bin")

    @property
    def python(self) -> Path:
        return self.bin / ("python.exe" if sys.platform == "win32" else "python")

    def confined(
        self,
        isolation: Isolation,
        *,
        read_only: Sequence[Path] = (),
        writable: Sequence[Path] = (),
    ) -> Confined:
        """How a process that runs the sandbox's interpreter (and so the installed packages'
        code, if only their ``.pth`` files) starts: the environment and the interpreter
        read-only, with ``read_only`` more; a private empty HOME, TMPDIR and working directory;
        ``writable`` (a step's own result directory) the only place it can leave anything."""
        paths = self.paths
        roots = interpreter_roots(
            self.interpreter.path, self.python, prefixes=self.interpreter.prefixes
        )
        return Confined(
            isolation,
            Confinement(
                cwd=paths.work,
                read_only=(paths.venv, *roots, *read_only),
                writable=tuple(writable),
                private=(paths.home, paths.tmp, paths.work),
            ),
        )


def learn_interpreter(sandbox: Sandbox, ctx: RunContext) -> None:
    """Have the installer learn the fresh sandbox's interpreter now rather than at the install
    (see ``Installer.learn_interpreter``); if it fails, the install learns it."""
    argv = ctx.toolchain.installer.learn_interpreter(sandbox.python)
    if argv is not None:
        _run(argv, sandbox, "installer-learns-interpreter", ctx)


def create_sandbox(
    interpreter: Interpreter, paths: SandboxPaths, ctx: RunContext
) -> tuple[Sandbox, Failure | None]:
    sandbox = Sandbox(interpreter, paths)
    backend = ctx.toolchain.sandbox
    argv = backend.create(interpreter.path, paths.venv)
    template = None
    # kept only where the path is used again: a slot (a kept workspace's is never reused)
    if ctx.venv_templates is not None and backend.self_contained and paths.venv_at is not None:
        template = template_for(ctx.venv_templates, argv, installer_env(paths.tmp, ctx.pass_env))
    if template is not None and copy_template(template, paths.venv):
        paths.logs.mkdir(parents=True, exist_ok=True)
        (paths.logs / "venv.log").write_text(
            f"copied from {template}, what `{format_argv(argv)}` made for an earlier check\n",
            encoding="utf-8",
        )
        return sandbox, None
    outcome = _run(argv, sandbox, "venv", ctx)
    if outcome.ok and sandbox.python.exists():
        if template is not None:
            keep_template(paths.venv, template)
        return sandbox, None
    return sandbox, Failure(
        "timeout" if outcome.timed_out else "venv_failed",
        f"creating the sandbox with {backend.name} {outcome.describe()}: {summarize(outcome.tail)}",
        python=interpreter.version,
        hint=f"check that {interpreter.path} can create virtual environments",
        details=outcome.tail,
    )


def install_wheel(
    sandbox: Sandbox,
    wheel: Path,
    ctx: RunContext,
    *,
    extra: tuple[str, ...] = (),
    requires_python: str | None = None,
    requirements: bool = True,
) -> list[Failure]:
    """Install the wheel with its declared dependencies (and ``extra`` requirements: the
    application that hosts the plugins), then make the installer check them, if there are any
    (``requirements``): with none, the wheel alone is installed, and nothing can conflict.

    The wheel's ``requires_python`` is enforced here, before any installer runs: pip refuses a
    wheel whose Requires-Python excludes the interpreter, but ``uv pip install <path>`` installs
    it anyway, and both installers must reach the same verdict."""
    version = sandbox.interpreter.version
    installer = ctx.toolchain.installer
    refused = direct_references(extra)
    if refused:
        return [
            Failure(
                "install_failed",
                f"installing {wheel.name} with {installer.name} refused: "
                + ", ".join(map(repr, refused))
                + " is not a name and a version range (an installer would fetch and build what "
                "it points at, outside the sandbox)",
                python=version,
                hint=_DIRECT_HINT,
            )
        ]
    refusal = _requires_python_refusal(wheel, requires_python, sandbox.interpreter)
    if refusal is not None:
        return [
            Failure(
                "install_failed",
                f"installing {wheel.name} with {installer.name} refused: {refusal}",
                python=version,
                hint=_install_hint(refusal, version),
            )
        ]
    argv = installer.install(sandbox.python, wheel, ctx.index, extra)
    outcome = _run(argv, sandbox, "install", ctx)
    if not outcome.ok:
        cause = summarize(outcome.tail)
        sdist_only = without_wheel(outcome.tail)
        if sdist_only is not None and not outcome.timed_out:
            cause = (
                f"the dependency {sdist_only!r} has no wheel for Python {version}, only a source "
                "distribution, and the installer here builds nothing (its build code would run "
                "outside the sandbox)"
            )
        return [
            Failure(
                "timeout" if outcome.timed_out else "install_failed",
                f"installing {wheel.name} with {installer.name} {outcome.describe()}: {cause}",
                python=version,
                hint=NO_WHEEL_HINT if sdist_only else _install_hint(cause, version),
                details=outcome.tail,
            )
        ]
    return _broken_requirements(sandbox, ctx) if requirements or extra else []


def fetch_alone(sandbox: Sandbox, requirement: str, target: Path, ctx: RunContext) -> Outcome:
    """Unpack ``requirement``'s wheel alone into ``target`` with the trusted installer, for the
    sandbox's interpreter (nothing is built, nothing of the sandbox changes): a candidate
    application, read before it is installed."""
    argv = ctx.toolchain.installer.fetch(sandbox.python, requirement, target, ctx.index)
    return _run(argv, sandbox, f"fetch-{target.name}", ctx)


#: what to do about a dependency that has no wheel
NO_WHEEL_HINT = (
    "build a wheel of it yourself (pip wheel --no-deps NAME==VERSION, or python -m build "
    "--wheel in its source) into a directory and pass that with --find-links, or ask its "
    "maintainers to publish a wheel"
)
_DIRECT_HINT = (
    "name requirements by name and version range (e.g. --with 'pytest>=8'); put a wheel of your "
    "own in a directory and pass that with --find-links"
)
#: uv's words when a dependency has only an sdist (``--no-build``)
_UV_NO_WHEEL = re.compile(
    r"wheels are required for `([^`]+)`|building source distributions for `([^`]+)` is disabled",
    re.IGNORECASE,
)


def without_wheel(output: str) -> str | None:
    """The dependency the installer found no wheel of, when it says so (uv does; pip says only
    that nothing matched, see ``_install_hint``), with the versions it wanted when it says
    which (``namedentities==1.5.2``: a dependent pins it, so no other release will do)."""
    match = _UV_NO_WHEEL.search(output)
    if not match:
        return None
    name = match[1] or match[2]
    words = "[-_.]+".join(map(re.escape, re.split(r"[-_.]+", name)))
    wanted = re.search(
        rf"(?<![\w.-]){words}((?:[<>=!~]=?=?[^\s,]+)(?:,\s*[<>=!~]=?=?[^\s,]+)*) "
        r"(?:has|have) no usable wheels",
        output,
        re.IGNORECASE,
    )
    return f"{name}{wanted[1].replace(' ', '')}" if wanted else name


def _broken_requirements(sandbox: Sandbox, ctx: RunContext) -> list[Failure]:
    """What the installer's check of the installed requirements found."""
    check = _check(sandbox, ctx)
    if check.ok:
        return []
    conflicts = [
        line.strip()
        for line in check.tail.splitlines()
        if line.strip() and not line.startswith(("Using Python", "Checked"))
    ]
    return [
        Failure(
            "timeout" if check.timed_out else "dependency_conflict",
            f"{ctx.toolchain.installer.name} check found broken requirements: "
            + "; ".join(conflicts[:5]),
            python=sandbox.interpreter.version,
            hint="a declared dependency range is incompatible with what got installed; "
            "tighten or loosen the ranges in [project] dependencies",
            details=check.tail,
        )
    ]


def _requires_python_refusal(
    wheel: Path, requires_python: str | None, interpreter: Interpreter
) -> str | None:
    """pip's own words when ``requires_python`` excludes ``interpreter`` (as pip decides: the
    full X.Y.Z, pre-releases of Python included)."""
    if not requires_python:
        return None
    try:
        allowed = SpecifierSet(requires_python)
    except InvalidSpecifier:
        return f"its Requires-Python {requires_python!r} is not a valid version specifier"
    full = ".".join(map(str, interpreter.version_info))
    if allowed.contains(full, prereleases=True):
        return None
    name = wheel.name.split("-", 1)[0]
    return f"Package {name!r} requires a different Python: {full} not in {requires_python!r}"


def _install_hint(cause: str, version: str) -> str:
    lowered = cause.lower()
    if "requires a different python" in lowered or re.search(
        r"python version .* does not satisfy", lowered
    ):
        return (
            f"requires-python excludes Python {version}: widen requires-python, "
            "or stop verifying on this interpreter"
        )
    if (
        "no matching distribution" in lowered
        or "not found in the package registry" in lowered
        or "no solution found" in lowered
        or "could not find a version" in lowered
    ):
        return (
            "a declared dependency cannot be resolved: check its name and version range, "
            "or point at your index with --index-url/--find-links; sandboxverify installs "
            "wheels only, so if it has only a source distribution, " + NO_WHEEL_HINT
        )
    if "not a supported wheel" in lowered or "platform" in lowered:
        return "the wheel's tags do not match this interpreter; build one for it"
    return "see the installer output below (-v shows it while running)"


def _check(sandbox: Sandbox, ctx: RunContext) -> Outcome:
    """``pip check`` (or uv's). pip's runs the sandbox's interpreter, which runs the ``.pth``
    files of what was just installed: that is package code, so it runs confined, with nothing of
    the installer's environment (it needs no index). uv's reads metadata, never runs Python."""
    argv = ctx.toolchain.installer.check(sandbox.python)
    if argv[0] != str(sandbox.python):
        return _run(argv, sandbox, "pip-check", ctx)
    env = plugin_env(sandbox.bin, sandbox.paths.home, sandbox.paths.tmp, ctx.pass_env)
    launcher = sandbox.confined(ctx.isolation)
    return _run(argv, sandbox, "pip-check", ctx, env=env, launcher=launcher)


def _run(
    argv: list[str],
    sandbox: Sandbox,
    label: str,
    ctx: RunContext,
    *,
    env: dict[str, str] | None = None,
    launcher: Confined | None = None,
) -> Outcome:
    """A step of the sandbox: trusted (the installer, with its settings) unless a ``launcher``
    confines it; bounded by ``--install-timeout``."""
    command = Command(
        argv=argv,
        env=installer_env(sandbox.paths.tmp, ctx.pass_env) if env is None else env,
        cwd=sandbox.paths.work,
        timeout=ctx.install_timeout,
        log_path=sandbox.paths.logs / f"{label}.log",
        label=label,
        launcher=launcher,
    )
    return ctx.run(command)
