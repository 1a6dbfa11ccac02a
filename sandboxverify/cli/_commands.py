"""The commands: ``check`` (build, sandbox and verify a package), ``run`` (a playbook here,
against the installed plugins), ``merge`` (one verdict from a CI matrix's reports) and ``matrix``
(the Pythons ``requires-python`` allows), each with its options; what they do is in ``_actions``
(``check``, ``run``), ``_merge`` and ``_matrix``, imported only when one runs, so ``--help``,
``--version`` and usage errors start quickly. ``_main`` puts them in the ``sandboxverify`` group
and is where their errors end."""

from __future__ import annotations

from typing import Any

import click

from sandboxverify.cli._options import (
    dist_option,
    github_option,
    json_option,
    junit_option,
    model_options,
    replay_options,
    seconds,
)
from sandboxverify.cli._sandboxed import sandbox_options
from sandboxverify.options._check_options import (
    DEFAULT_INSTALL_TIMEOUT,
    DEFAULT_TIMEOUT,
    HOSTS,
    INSTALLERS,
    ISOLATIONS,
)
from sandboxverify.runtime.hosts._registry import SESSION_HOSTS
from sandboxverify.sandbox._bwrap import probe_ahead


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
    "--isolation",
    type=click.Choice(ISOLATIONS),
    help="How code from the package (build backend, plugins, scripts, smoke) runs. auto: in the "
    "OS sandbox (Linux namespaces with bubblewrap) when it works here, else process isolation "
    "with a warning; strict: refuse to run without the OS sandbox (exit 2); process: never use "
    "it. [default: auto]",
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
    "nothing else from your environment reaches plugin code. A credential-like name "
    "(*TOKEN*, *SECRET*, *PASSWORD*, *KEY*, TWINE_*, UV_PUBLISH_*) must be named exactly.",
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
    "--plugin-allow-fail",
    multiple=True,
    metavar="GLOB",
    help="Plugin (entry-point name glob) whose load may fail, e.g. one that needs a service or "
    "a program this machine lacks: noted in the report, not a failure (repeatable).",
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
@junit_option("a JUnit XML report (one test case per check)")
@github_option
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

    \b
    Exit codes:
      0    every check passed
      1    a check failed (the report's failures say which)
      2    usage or configuration error (bad option, unreadable config, target not found)
      3    internal error: a bug in sandboxverify (shown with its traceback)
      130  interrupted (Ctrl-C); everything temporary removed
      143  terminated (SIGTERM); everything temporary removed
    On every exit the --json, --junit-xml and --github reports asked for are written.

    Colour follows NO_COLOR, FORCE_COLOR and TERM=dumb; on a terminal the running stages
    update in place with their elapsed time, elsewhere each finished stage is one line.
    """
    # the OS sandbox's probe runs while the rest of what a check needs is imported
    probe_ahead()
    from sandboxverify.cli import _actions  # noqa: PLC0415 - what a check needs, when one runs

    return _actions.check(ctx, targets, cli_values)


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
@dist_option
@click.option(
    "--host",
    type=click.Choice(SESSION_HOSTS),
    help="How plugins are loaded; with mcp, --plugin is the command that starts the server. "
    "[default: the playbook's host, else native]",
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
@replay_options
def run_playbook(**options: Any) -> int:
    """Run a smoke PLAYBOOK (.toml or .py) here, against the installed plugins.

    The fast inner loop while writing a playbook: no build, no sandbox. 'check --smoke' runs
    the same playbook in fresh sandboxes. A recording ('sandboxverify record') replays alike:
    --compare-results also compares every result, --live asks the model again. Exit codes:
    0 passed, 1 the run diverged from the playbook, 2 a malformed playbook or bad option,
    3 a bug in sandboxverify, 130/143 interrupted.
    """
    from sandboxverify.cli import _run  # noqa: PLC0415 - what a run needs, when one runs

    return _run.run_playbook(**options)


@click.command("merge")
@click.argument("reports", nargs=-1, required=True, metavar="REPORT...")
@json_option("the merged report")
@junit_option("one JUnit XML report (every report's suites, each run labelled)")
@github_option
@click.option("-q", "--quiet", is_flag=True, help="Only failures and the verdict.")
@click.pass_context
def merge_reports(ctx: click.Context, /, reports: tuple[str, ...], **outputs: Any) -> int:
    """Merge the JSON reports of CI matrix jobs (check --json) into one verdict.

    REPORT is a report file, or a directory searched for *.json reports (as
    actions/download-artifact leaves one directory per artifact). Each run is labelled with
    its Python and the operating system it ran on.

    \b
    Exit codes:
      0    every report passed
      1    a report failed (or its check stopped before its verdict)
      2    no reports, or one that cannot be read
      3    internal error: a bug in sandboxverify (shown with its traceback)
      130  interrupted (Ctrl-C)
      143  terminated (SIGTERM)
    On every exit the --json, --junit-xml and --github reports asked for are written.
    """
    from sandboxverify.cli import _merge  # noqa: PLC0415 - what a merge needs, when one runs

    return _merge.merge_reports(ctx, reports, **outputs)


@click.command("matrix")
@click.argument("targets", nargs=-1, metavar="[TARGET]...")
@click.option(
    "--os",
    "systems",
    multiple=True,
    metavar="RUNNER",
    help="Add an 'os' axis with these runners (repeatable), e.g. --os ubuntu-latest "
    "--os macos-latest.",
)
def matrix(*, targets: tuple[str, ...], systems: tuple[str, ...]) -> int:
    """Print the Python versions TARGET's requires-python allows, as a JSON matrix.

    TARGET is a project directory (default: .; its pyproject.toml is read) or built artifacts
    (their metadata is read). The output, e.g. {"python": ["3.10", "3.11"]}, goes to
    strategy.matrix with fromJSON. Versions: CPython 3.9 (the oldest a sandbox runs) to
    the newest release this sandboxverify knows.

    Exit codes: 0 printed, 2 no requires-python to read, or it allows none of these versions,
    3 a bug in sandboxverify.
    """
    from sandboxverify.cli import _matrix  # noqa: PLC0415 - what it reads, when it runs

    return _matrix.matrix(targets, systems)


@click.command("record")
@click.argument("prompts", nargs=-1, required=True, metavar="PROMPT...")
@click.option("--model", "-m", required=True, metavar="MODEL", help="The llm model to drive.")
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="FILE",
    help="The playbook to write (.toml); its trace goes beside it (.jsonl).",
)
@click.option(
    "--plugin",
    "plugins",
    multiple=True,
    metavar="SPEC",
    help="A plugin to load, as 'run' takes it (repeatable); written into the playbook. "
    "[default: every plugin of --dist]",
)
@dist_option
@click.option(
    "--host",
    type=click.Choice(SESSION_HOSTS),
    default="native",
    show_default=True,
    help="How plugins are loaded (written into the playbook).",
)
@click.option("--group", metavar="NAME", help="Entry-point group of the plugins.")
@click.option(
    "--mocks",
    metavar="FILE",
    help="A TOML file with [mock_tools] and [mock_ui] (an existing playbook will do): "
    "environmental tools and UI answers, copied into the recording.",
)
@click.option("--system", metavar="TEXT", help="A system prompt for the model (recorded).")
@click.option(
    "--normalize",
    multiple=True,
    metavar="REGEX",
    help="A regex for what changes from run to run (ids, times), written into the playbook's "
    "normalize for --compare-results (repeatable).",
)
@model_options
@click.option("--trace", metavar="FILE", help="Where the trace goes. [default: FILE.jsonl]")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="How long the whole session may take. [default: no limit in place; with --sandbox, "
    "600, after which the session is killed]",
)
@sandbox_options
@json_option("the result as JSON")
@click.option("-v", "--verbose", count=True, help="Show full tracebacks of failures.")
def record(**options: Any) -> int:
    """Record a session: a live MODEL (any llm model) drives the plugins' tools, one turn per
    PROMPT; every model step becomes an action of a playbook written to FILE.

    The plugins' tools run for real, environmental tools and UI prompts are mocked (--mocks).
    The plugins are those installed here, or with --sandbox those of the project's wheel,
    built and installed in a fresh sandbox as 'check' does (with --with llm and the model's
    plugin; the model's key only through --pass-env). The playbook replays without a model or a
    key ('sandboxverify run FILE', 'check --smoke FILE'); 'run FILE --live' checks that the
    model still makes the same calls. Exit codes: 0 recorded, 1 the session (or, with
    --sandbox, the build or install) failed, 2 a bad option or an unusable model.
    """
    from sandboxverify.cli import _record  # noqa: PLC0415 - what a recording needs, when one runs

    return _record.record_session(**options)
