"""The commands: ``check`` (build, sandbox and verify a package), ``run`` (a playbook here,
against the installed plugins), ``merge`` (one verdict from a CI matrix's reports) and ``matrix``
(the Pythons ``requires-python`` allows), each with its options; what they do is in ``_actions``
(``check``, ``run``), ``_merge`` and ``_matrix``, imported only when one runs, so ``--help``,
``--version`` and usage errors start quickly. ``_main`` puts them in the ``sandboxverify`` group
and is where their errors end."""

from __future__ import annotations

from typing import Any

import click

from sandboxverify.cli._options import click_options
from sandboxverify.sandbox import probe_ahead


@click.command()
@click.argument("targets", nargs=-1, metavar="[TARGET]...")
@click_options("check")
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
    from sandboxverify.cli import _check  # noqa: PLC0415 - what a check needs, when one runs

    return _check.check(ctx, targets, cli_values)


@click.command("run")
@click.argument("playbook", metavar="PLAYBOOK")
@click_options("run")
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
@click_options("merge")
@click.pass_context
def merge_reports(ctx: click.Context, /, reports: tuple[str, ...], **outputs: Any) -> int:
    """Merge the JSON reports of CI matrix jobs (check --json) into one verdict, or the
    results of a survey's shards (survey --shard K/N --results FILE) into one survey.

    REPORT is a report file, or a directory searched for *.json reports and *.jsonl survey
    results (as actions/download-artifact leaves one directory per artifact). Each run is
    labelled with its Python and the operating system it ran on.

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
@click_options("matrix")
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
@click.argument("prompts", nargs=-1, metavar="[PROMPT]...")
@click_options("record")
def record(**options: Any) -> int:
    """Record a session: a live MODEL (any llm model) drives the plugins' tools, one turn per
    PROMPT; every model step becomes an action of a playbook written to FILE. With --refresh
    PLAYBOOK, record it again from its own prompts and settings.

    The plugins' tools run for real, environmental tools and UI prompts are mocked (--mocks).
    The plugins are those installed here, or with --sandbox those of the project's wheel,
    built and installed in a fresh sandbox as 'check' does (with --with llm and the model's
    plugin; the model's key only through --pass-env). The playbook replays without a model or a
    key ('sandboxverify run FILE', 'check --smoke FILE'), each result compared with the
    recorded one; 'run FILE --live' checks that the model still makes the same calls. Exit
    codes: 0 recorded, 1 the session (or, with --sandbox, the build or install) failed, 2 a bad
    option or an unusable model.
    """
    from sandboxverify.cli import _record  # noqa: PLC0415 - what a recording needs, when one runs

    return _record.record_session(**options)


@click.command("survey")
@click.argument("plugins", nargs=-1, required=True, metavar="PLUGINS...")
@click_options("survey")
@click.pass_context
def survey(ctx: click.Context, /, plugins: tuple[str, ...], **values: Any) -> int:
    """Check an application's plugins with its baseline release and its candidate: does the
    candidate break any of them?

    PLUGINS are requirements, or files of requirements (one a line, # comments). Each plugin's
    published sdist (its wheel when it has none) is checked as 'check' checks it, once with
    each release installed next to it, in fresh sandboxes, and classified: regressed (passes
    with the baseline, fails with the candidate), fixed, broken (fails with both), ok, or
    error (could not be checked, not through the application: a download, its build, an
    install of something else). Results stream to --results; a run again with the same file
    checks only what it lacks.

    \b
    Exit codes:
      0    no plugin regressed, and every one was checked
      1    a plugin regressed, or could not be checked, or some were not checked
      2    usage error (bad option, an application that cannot be found or built)
      3    internal error: a bug in sandboxverify (shown with its traceback)
      130  interrupted (Ctrl-C); the results file keeps every finished plugin
      143  terminated (SIGTERM); likewise
    """
    probe_ahead()
    from sandboxverify.cli import _survey  # noqa: PLC0415 - what a survey needs, when one runs

    return _survey.survey(ctx, plugins, values)
