"""The command line. Its ``main`` is the one error boundary: ``ERROR ...`` + hint + exit code."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any, Callable, NoReturn, TextIO, TypeVar

import click
from click.core import ParameterSource

from sandboxverify._errors import (
    EXIT_CHECK_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    SandboxVerifyError,
    UsageError,
)
from sandboxverify._version import __version__
from sandboxverify.artifacts._artifacts import ProjectTarget, Target, classify
from sandboxverify.cli import _config
from sandboxverify.cli._render import Progress, render_report, render_smoke
from sandboxverify.pipeline._check import check as run_check
from sandboxverify.pipeline._options import (
    DEFAULT_INSTALL_TIMEOUT,
    DEFAULT_TIMEOUT,
    HOSTS,
    INSTALLERS,
    CheckOptions,
    split_commas,
)
from sandboxverify.report._model import Report
from sandboxverify.runtime.harness._plugins import HOSTS as SESSION_HOSTS
from sandboxverify.stages._smoke import load as load_playbook

EXIT_INTERNAL = 3
F = TypeVar("F", bound=Callable[..., Any])
_ARTIFACT_SUFFIXES = (".whl", ".tar.gz", ".zip", ".py", ".toml")


class _Terminated(KeyboardInterrupt):
    """SIGTERM, delivered like Ctrl-C so every ``finally`` and cleanup runs."""


def _json_option(what: str) -> Callable[[F], F]:
    """``--json [FILE]``: an optional value, ``-`` (stdout) when given bare."""
    return click.option(
        "--json",
        "json_out",
        is_flag=False,
        flag_value="-",
        metavar="[FILE]",
        help=f"Write {what} to FILE, or to stdout with '-' or no value "
        "(then the text output goes to stderr).",
    )


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="sandboxverify")
def cli() -> None:
    """Prove a package works when a stranger installs it."""


@cli.command()
@click.argument("targets", nargs=-1, metavar="[TARGET]...")
@click.option("--host", type=click.Choice(HOSTS), help="How plugins are loaded. [default: native]")
@click.option(
    "--group",
    "group",
    multiple=True,
    metavar="NAME",
    help="Entry-point group to verify (repeatable). [default: sandboxverify.plugins for native, "
    "llm for llm, console_scripts for mcp]",
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
    help="Build, sandbox and install with uv or with build+virtualenv+pip; auto picks "
    "uv when it is installed. [default: auto]",
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
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help=f"How long each plugin may take to load. [default: {DEFAULT_TIMEOUT:g}]",
)
@click.option(
    "--install-timeout",
    type=click.FloatRange(min=0, min_open=True),
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
@_json_option("the JSON report")
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
    values = _merge(ctx, cli_values, file_values)
    json_out: str | None = values.get("json")
    junit_out: str | None = values.get("junit-xml")
    _check_json_path(json_out, targets)
    _check_report_path("--junit-xml", junit_out, targets)
    options = CheckOptions(
        targets=targets or (".",),
        host=values.get("host", "native"),
        groups=tuple(values.get("group", ())),
        expect_tools=split_commas(values.get("expect-tools", ())),
        exact=bool(values.get("exact", False)),
        expect_plugins=values.get("expect-plugins"),
        python=tuple(values.get("python", ())),
        installer=values.get("installer", "auto"),
        index_url=values.get("index-url"),
        find_links=tuple(values.get("find-links", ())),
        timeout=float(values.get("timeout", DEFAULT_TIMEOUT)),
        install_timeout=float(values.get("install-timeout", DEFAULT_INSTALL_TIMEOUT)),
        keep=bool(values.get("keep", False)),
        pass_env=tuple(values.get("pass-env", ())),
        smoke=values.get("smoke"),
        server_command=values.get("server-command"),
        import_all=bool(values.get("import-all", True)),
        import_skip=tuple(values.get("import-skip", ())),
        import_allow_fail=tuple(values.get("import-allow-fail", ())),
        expect_files=tuple(values.get("expect-files", ())),
        skip_script_help=tuple(values.get("skip-script-help", ())),
        with_requirements=tuple(values.get("with", ())),
    )
    verbose, quiet = int(values.get("verbose", 0)), bool(values.get("quiet", False))
    human: TextIO = sys.stderr if json_out == "-" else sys.stdout
    tty = human.isatty()
    progress = Progress(human, tty=tty, verbose=verbose, quiet=quiet)
    try:
        report = run_check(options, progress)
    finally:
        progress.close()
    human.write(render_report(report, colour=tty, verbose=verbose, quiet=quiet) + "\n")
    human.flush()
    _write_json(report.to_json(), json_out)
    if junit_out:
        from sandboxverify.report._junit import junit_xml  # noqa: PLC0415 - only when asked

        Path(junit_out).write_text(junit_xml(report), encoding="utf-8")
    github = values.get("github")
    if github or (github is None and os.environ.get("GITHUB_ACTIONS") == "true"):
        _write_github(report, target, options, human)
    return EXIT_OK if report.ok else EXIT_CHECK_FAILED


@cli.command("run")
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
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="How long the whole run may take.",
)
@_json_option("the result as JSON")
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
    _check_json_path(json_out, (playbook,))
    loaded = load_playbook(playbook)
    request: dict[str, Any] = {"group": group, "dist": dist, "host": host}
    if loaded.spec is not None:
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
    result = {
        "playbook": loaded.name,
        **run_smoke_here(request),
        "seconds": round(time.perf_counter() - started, 3),
    }
    human = sys.stderr if json_out == "-" else sys.stdout
    human.write(render_smoke(result, colour=human.isatty(), verbose=verbose) + "\n")
    _write_json(result, json_out)
    return EXIT_OK if result.get("ok") else EXIT_CHECK_FAILED


_CLI_NAMES = {
    "group": "group",
    "expect_tools": "expect-tools",
    "expect_plugins": "expect-plugins",
    "index_url": "index-url",
    "find_links": "find-links",
    "install_timeout": "install-timeout",
    "pass_env": "pass-env",
    "server_command": "server-command",
    "import_all": "import-all",
    "import_skip": "import-skip",
    "import_allow_fail": "import-allow-fail",
    "expect_files": "expect-files",
    "skip_script_help": "skip-script-help",
    "with_requirements": "with",
    "junit_xml": "junit-xml",
    "json_out": "json",
}


def _merge(
    ctx: click.Context, cli_values: dict[str, Any], file_values: dict[str, Any]
) -> dict[str, Any]:
    """Configuration file values, overridden by whatever the command line gave explicitly."""
    merged = dict(file_values)
    for name, value in cli_values.items():
        source = ctx.get_parameter_source(name)
        if source in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            merged[_CLI_NAMES.get(name, name)] = value
    return merged


def _write_json(document: dict[str, Any], json_out: str | None) -> None:
    """The JSON document to stdout (``-``) or to a file; nothing without ``--json``."""
    if not json_out:
        return
    text = json.dumps(document, indent=2) + "\n"
    if json_out == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        Path(json_out).write_text(text, encoding="utf-8")


def _check_json_path(json_out: str | None, targets: Sequence[str]) -> None:
    if json_out != "-":
        _check_report_path("--json", json_out, targets)


def _check_report_path(option: str, out: str | None, targets: Sequence[str]) -> None:
    """Before any work: ``--json dist/x.whl`` would take the wheel as the report path (never
    clobber an input), and a report that cannot be written must not be found out at the end."""
    if not out:
        return
    path = Path(out)
    if (
        path.is_dir()
        or out in targets
        or (path.exists() and path.name.endswith(_ARTIFACT_SUFFIXES))
    ):
        raise UsageError(
            f"{option} would overwrite {out}",
            hint=f"give the report its own file ({option} report-file), "
            + ("or use --json=- for stdout" if option == "--json" else "or drop the option"),
        )
    if not path.absolute().parent.is_dir():
        raise UsageError(
            f"{option} {out}: the directory {path.absolute().parent} does not exist",
            hint="create it first, or write the report elsewhere",
        )


def _write_github(report: Report, target: Target, options: CheckOptions, stream: TextIO) -> None:
    """Annotations on the stream (the runner reads workflow commands from the step's output),
    the Markdown summary appended to ``$GITHUB_STEP_SUMMARY`` when the runner provides one."""
    from sandboxverify.cli._github import GitHubSources, error_annotations  # noqa: PLC0415
    from sandboxverify.report._summary import step_summary  # noqa: PLC0415

    pyproject = (
        target.path / "pyproject.toml"
        if isinstance(target, ProjectTarget)
        else _config.find_pyproject(None)
    )
    sources = GitHubSources(
        pyproject=pyproject if pyproject is not None and pyproject.is_file() else None,
        playbook=Path(options.smoke) if options.smoke else None,
        root=Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd()),
    )
    for line in error_annotations(report, sources):
        stream.write(line + "\n")
    stream.flush()
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        try:
            with open(summary_path, "a", encoding="utf-8") as handle:
                handle.write(step_summary(report) + "\n")
        except OSError as exc:
            raise UsageError(
                f"cannot append the step summary to GITHUB_STEP_SUMMARY={summary_path}: "
                f"{exc.strerror or exc}",
                hint="point GITHUB_STEP_SUMMARY at a writable file, or pass --no-github",
            ) from None


def main(argv: Sequence[str] | None = None) -> NoReturn:
    sys.exit(run(argv))


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the exit code; every error ends here."""
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        result = cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="sandboxverify",
            standalone_mode=False,
        )
        return int(result) if isinstance(result, int) else EXIT_OK
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        _error(exc.format_message(), hint=_click_hint(exc))
        return EXIT_USAGE
    except SandboxVerifyError as exc:
        _error(exc.message, hint=exc.hint)
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt) as exc:
        # click re-raises Ctrl-C as Abort; the cause says whether it was SIGTERM
        terminated = isinstance(exc, _Terminated) or isinstance(exc.__cause__, _Terminated)
        what = "terminated" if terminated else "interrupted"
        _error(f"{what}: stopped every process and removed the temporary files", hint=None)
        return 128 + signal.SIGTERM if terminated else 130
    except Exception:  # a bug: the only place a traceback is shown
        traceback.print_exc()
        _error(
            "internal error in sandboxverify (a bug; please report it with the traceback above)",
            hint=None,
        )
        return EXIT_INTERNAL
    finally:
        signal.signal(signal.SIGTERM, previous)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


def _click_hint(exc: click.ClickException) -> str:
    if isinstance(exc, click.UsageError) and exc.ctx is not None:
        return f"run '{exc.ctx.command_path} --help' for the options"
    return "run 'sandboxverify --help'"


def _error(message: str, hint: str | None) -> None:
    sys.stderr.write(f"ERROR {message}\n")
    if hint:
        sys.stderr.write(f"  hint: {hint}\n")
    sys.stderr.flush()
