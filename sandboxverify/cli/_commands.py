"""The commands: ``check`` (build, sandbox and verify a package) and ``run`` (a playbook here,
against the installed plugins), each with its options and what it does. ``_main`` puts them in
the ``sandboxverify`` group and is where their errors end."""

from __future__ import annotations

import os
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO

import click

from sandboxverify._errors import EXIT_CHECK_FAILED, EXIT_OK, UsageError
from sandboxverify.artifacts._artifacts import ProjectTarget, classify
from sandboxverify.cli import _config
from sandboxverify.cli._options import (
    check_options,
    json_option,
    merge,
    reject_empty,
    seconds,
)
from sandboxverify.cli._output import (
    check_json_path,
    check_report_path,
    stdout_to_stderr,
    write_github,
    write_json,
    write_junit,
)
from sandboxverify.cli._render import Progress, render_report, render_smoke
from sandboxverify.pipeline._check import check as run_check
from sandboxverify.pipeline._options import (
    DEFAULT_INSTALL_TIMEOUT,
    DEFAULT_TIMEOUT,
    HOSTS,
    INSTALLERS,
)
from sandboxverify.report._redact import Redactor
from sandboxverify.runtime.harness._plugins import DIST_ENV, project_name
from sandboxverify.runtime.harness._plugins import HOSTS as SESSION_HOSTS
from sandboxverify.stages._smoke import load as load_playbook


@click.command()
@click.argument("targets", nargs=-1, metavar="[TARGET]...")
@click.option(
    "--host",
    type=click.Choice(HOSTS),
    help="Who judges the plugins. auto: each plugin by the application that loads its group "
    "(pytest11 → pytest, llm → llm, datasette → pluggy, flake8.extension → flake8, "
    "sphinx.html_themes → sphinx, mkdocs.plugins → mkdocs, sandboxverify.plugins → native, "
    "console scripts of an MCP SDK user → mcp, any other group → EntryPoint.load()); a "
    "distribution without plugins is verified as a library. [default: auto]",
)
@click.option(
    "--group",
    "group",
    multiple=True,
    metavar="NAME[:callable]",
    help="Entry-point group to verify (repeatable); NAME:callable when its entry points must "
    "name callables. [default: every group the distribution declares with --host auto, else "
    "the host's own: sandboxverify.plugins for native, llm for llm, console_scripts for mcp, "
    "pytest11 for pytest...]",
)
@click.option(
    "--hookspecs",
    multiple=True,
    metavar="GROUP=MODULE",
    help="The hookspecs module of a pluggy application sandboxverify does not know: its "
    "plugins' hook implementations are validated against it (repeatable).",
)
@click.option(
    "--server-command",
    metavar="COMMAND",
    help="With --host mcp: the command that starts the MCP server over stdio, e.g. "
    "'my-server --stdio' (its first word is looked up in the sandbox's bin/). "
    "[default: each console script of the distribution]",
)
@click.option(
    "--expect-tools",
    multiple=True,
    metavar="A,B,C",
    help="Tools that must be registered (repeatable, comma-separated).",
)
@click.option("--exact", is_flag=True, help="Fail on tools that are registered but not expected.")
@click.option(
    "--expect-plugins",
    type=click.IntRange(min=0),
    metavar="N",
    help="How many plugins the distribution must declare in the group(s).",
)
@click.option(
    "--python",
    "python",
    multiple=True,
    metavar="SPEC",
    help="Interpreter to verify on: a version (3.12), a path, 'min' (the lowest one here that "
    "requires-python allows) or 'all' (every one it allows); repeatable, runs in parallel. "
    "[default: the one running sandboxverify]",
)
@click.option(
    "--installer",
    type=click.Choice(INSTALLERS),
    help="Make build environments and sandboxes and install with uv or with virtualenv+pip; "
    "auto picks uv when it is installed. [default: auto]",
)
@click.option(
    "--index-url", metavar="URL", help="Package index for dependencies and build requirements."
)
@click.option(
    "--find-links",
    multiple=True,
    metavar="PATH|URL",
    help="Extra place to find packages (repeatable).",
)
@click.option(
    "--timeout",
    type=float,
    callback=seconds,
    metavar="SECONDS",
    help=f"How long each plugin may take to load. [default: {DEFAULT_TIMEOUT:g}]",
)
@click.option(
    "--install-timeout",
    type=float,
    callback=seconds,
    metavar="SECONDS",
    help="How long each build, sandbox or install step may take. "
    f"[default: {DEFAULT_INSTALL_TIMEOUT:g}]",
)
@click.option(
    "--pass-env",
    multiple=True,
    metavar="NAME",
    help="Environment variable (glob) passed to builds and plugin code (repeatable); "
    "nothing else from your environment reaches plugin code.",
)
@click.option(
    "--smoke",
    metavar="FILE",
    help="A .toml or .py playbook to run in every sandbox after the probe: a scripted model "
    "calls the plugins' tools for real.",
)
@click.option(
    "--expect-files",
    multiple=True,
    metavar="GLOB",
    help="A path glob inside the wheel that must match at least one file, e.g. "
    "'mypkg/data/*.json' (repeatable).",
)
@click.option(
    "--import-all/--no-import-all",
    default=None,
    help="Import every module the wheel ships, in the sandbox. [default: on]",
)
@click.option(
    "--import-skip",
    multiple=True,
    metavar="GLOB",
    help="Module glob the import-all check never imports, e.g. 'mypkg.windows' (a package's "
    "submodules are skipped with it; repeatable; *.__main__ is always skipped).",
)
@click.option(
    "--import-allow-fail",
    multiple=True,
    metavar="GLOB",
    help="Module glob that may fail to import (e.g. it needs an optional extra): reported, "
    "not a failure (repeatable).",
)
@click.option(
    "--skip-script-help",
    multiple=True,
    metavar="NAME",
    help="Console script (glob) not run with --help; it must still be installed "
    "(repeatable; '*' for all).",
)
@click.option(
    "--with",
    "with_requirements",
    multiple=True,
    metavar="REQUIREMENT",
    help="Also install this requirement next to the wheel (repeatable): the application that "
    "loads the plugins, when the distribution does not depend on it, e.g. --with pytest.",
)
@json_option("the JSON report")
@click.option(
    "--junit-xml",
    metavar="FILE",
    help="Write a JUnit XML report to FILE: one test case per check.",
)
@click.option(
    "--github/--no-github",
    default=None,
    help="Write GitHub Actions annotations and a step summary. [default: when GITHUB_ACTIONS=true]",
)
@click.option("--keep", is_flag=True, help="Keep the sandboxes and print where they are.")
@click.option(
    "--cache/--no-cache",
    default=None,
    help="Reuse the sdist and wheel of an earlier check when not one file of the project, its "
    "build requirements or sandboxverify changed (the sandbox is always new); the cache is in "
    "$SANDBOXVERIFY_CACHE_DIR or the user cache directory. [default: on]",
)
@click.option(
    "-v", "--verbose", count=True, help="Show commands and their output (-vv: all output)."
)
@click.option("-q", "--quiet", is_flag=True, help="Only failures and the verdict.")
@click.pass_context
def check(ctx: click.Context, /, targets: tuple[str, ...], **cli_values: Any) -> int:
    """Build TARGET, install it in fresh sandboxes, load its plugins and check their tools.

    TARGET is a project directory (default: .) or built artifacts (dist/*.whl dist/*.tar.gz),
    verified exactly as they are. Options can also be set in [tool.sandboxverify] of the
    project's pyproject.toml; the command line wins.

    Exit codes: 0 passed, 1 a check failed, 2 usage or configuration error.
    """
    if any(not value.strip() for value in targets):
        raise UsageError(
            "an empty TARGET was given (an unset variable?)",
            hint="pass a project directory or built artifacts; '.' means the current directory",
        )
    target = classify(targets)
    pyproject = _config.find_pyproject(target.path if isinstance(target, ProjectTarget) else None)
    file_values = _config.load(pyproject) if pyproject else {}
    values = merge(ctx, cli_values, file_values)
    json_out: str | None = values.get("json")
    junit_out: str | None = values.get("junit-xml")
    options = check_options(targets, values)
    check_json_path(json_out, targets)
    check_report_path("--junit-xml", junit_out, targets)
    verbose, quiet = int(values.get("verbose", 0)), bool(values.get("quiet", False))
    # every output goes through the redactor: the caller's secrets never leave in a report
    secrets = Redactor()
    human: TextIO = secrets.stream(sys.stderr if json_out == "-" else sys.stdout)
    tty = human.isatty()
    progress = Progress(human, tty=tty, verbose=verbose, quiet=quiet)
    try:
        report = run_check(options, progress)
    finally:
        progress.close()
    human.write(render_report(report, colour=tty, verbose=verbose, quiet=quiet) + "\n")
    human.flush()
    write_json(report.to_json(), json_out, secrets)
    if junit_out:
        write_junit(report, junit_out, secrets)
    github = values.get("github")
    if github or (github is None and os.environ.get("GITHUB_ACTIONS") == "true"):
        write_github(report, target, options, human, secrets)
    return EXIT_OK if report.ok else EXIT_CHECK_FAILED


@click.command("run")
@click.argument("playbook", metavar="PLAYBOOK")
@click.option(
    "--plugin",
    "plugins",
    multiple=True,
    metavar="SPEC",
    help="A plugin to load: 'module:attr' or an entry-point name; with --host mcp, a server "
    "command (repeatable). "
    "[default: the playbook's plugins, else every plugin of --dist]",
)
@click.option(
    "--dist",
    metavar="NAME",
    help="The installed distribution whose plugins load by default "
    "[default: [project] name of ./pyproject.toml]",
)
@click.option(
    "--host",
    type=click.Choice(SESSION_HOSTS),
    default="native",
    show_default=True,
    help="How plugins are loaded; with mcp, --plugin is the command that starts the server.",
)
@click.option(
    "--group",
    metavar="NAME",
    help="Entry-point group of the plugins. [default: the host's group]",
)
@click.option("--trace", metavar="FILE", help="Write the session's trace (JSONL) to FILE.")
@click.option(
    "--timeout",
    type=float,
    callback=seconds,
    metavar="SECONDS",
    help="How long the whole run may take.",
)
@json_option("the result as JSON")
@click.option("-v", "--verbose", count=True, help="Show full tracebacks of failures.")
def run_playbook(
    *,
    playbook: str,
    plugins: tuple[str, ...],
    dist: str | None,
    host: str,
    group: str | None,
    trace: str | None,
    timeout: float | None,
    json_out: str | None,
    verbose: int,
) -> int:
    """Run a smoke PLAYBOOK (.toml or .py) here, against the installed plugins.

    The fast inner loop while writing a playbook: no build, no sandbox. 'check --smoke' runs
    the same playbook in fresh sandboxes. Exit codes: 0 passed, 1 the run diverged from the
    playbook, 2 a malformed playbook or bad option.
    """
    reject_empty({"--plugin": plugins, "--dist": dist, "--group": group, "--trace": trace})
    check_json_path(json_out, (playbook,))
    loaded = load_playbook(playbook)
    request: dict[str, Any] = {"group": group, "dist": dist, "host": host}
    if loaded.spec is not None:
        if not plugins and not loaded.spec.get("plugins"):
            _check_default_plugins(dist)
        request.update(
            spec=loaded.spec, plugins=list(plugins) or None, run_timeout=timeout, trace=trace
        )
    elif plugins or trace:
        raise UsageError(
            "--plugin and --trace apply to .toml playbooks; a .py playbook creates its own sessions"
        )
    else:
        request["script"] = str(loaded.path)
    # the in-process harness: only this command pays for importing it
    from sandboxverify.runtime._smoke import smoke as run_smoke_here  # noqa: PLC0415

    started = time.perf_counter()
    with stdout_to_stderr(json_out == "-"):  # plugin code prints; the JSON owns stdout
        outcome = run_smoke_here(request)
    result = {
        "playbook": loaded.name,
        **outcome,
        "seconds": round(time.perf_counter() - started, 3),
    }
    secrets = Redactor()
    human = secrets.stream(sys.stderr if json_out == "-" else sys.stdout)
    human.write(render_smoke(result, colour=human.isatty(), verbose=verbose) + "\n")
    human.flush()
    write_json(result, json_out, secrets)
    return EXIT_OK if result.get("ok") else EXIT_CHECK_FAILED


def _check_default_plugins(dist: str | None) -> None:
    """A playbook that names no plugins runs the distribution's: there must be one, installed
    here. Without it, a usage error in the command line's words (not the harness's)."""
    where = f"--dist {dist}" if dist else None
    name = dist
    if name is None and os.environ.get(DIST_ENV):
        name = os.environ[DIST_ENV]
        where = f"{DIST_ENV}={name}"
    if name is None:
        name = project_name(Path.cwd())
        where = f"the project here ({name})"
    hint = (
        "pass --plugin module:attr (or an entry-point name) or --dist NAME, or run from the "
        "project's directory with the project installed (pip install -e .)"
    )
    if name is None:
        raise UsageError(
            "no plugins to run: the playbook names none, no --plugin or --dist was given, and "
            "there is no project here (no pyproject.toml with a [project] name)",
            hint=hint,
        )
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        raise UsageError(
            f"no plugins to run: {where} is not installed in this environment", hint=hint
        ) from None
