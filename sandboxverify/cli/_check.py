"""What the commands do once click has parsed them: ``check`` (the options merged with
``[tool.sandboxverify]``, the pipeline, the reports) and ``run`` (a playbook here). Imported only
when a command runs."""

from __future__ import annotations

import sys
from typing import Any

import click

from sandboxverify._errors import EXIT_CHECK_FAILED, EXIT_OK
from sandboxverify.artifacts import ProjectTarget, classify
from sandboxverify.cli import _terminal
from sandboxverify.cli._options import (
    check_options,
    merge,
    reject_empty_targets,
)
from sandboxverify.cli._output import (
    check_json_path,
    check_report_path,
    preload,
)
from sandboxverify.cli._render import Progress, render_report, render_warnings
from sandboxverify.cli._surfaces import Surfaces
from sandboxverify.options import configured, find_pyproject
from sandboxverify.pipeline import check as run_check


def check(ctx: click.Context, targets: tuple[str, ...], cli_values: dict[str, Any]) -> int:
    surfaces = ctx.find_object(Surfaces) or Surfaces()
    surfaces.asked("check", targets, cli_values)
    reject_empty_targets(targets)
    target = classify(targets)
    pyproject = find_pyproject(target.path if isinstance(target, ProjectTarget) else None)
    file_values = configured(pyproject)
    values = merge(ctx, cli_values, file_values)
    surfaces.resolve(values, pyproject)
    options = check_options(targets, values)
    check_json_path(surfaces.json_out, targets)
    check_report_path("--junit-xml", surfaces.junit_out, targets)
    # everything that runs after the package's code is loaded now, while our files are ours
    preload(junit=bool(surfaces.junit_out), github=surfaces.annotate)
    verbose, quiet = int(values.get("verbose") or 0), bool(values.get("quiet"))
    # every output goes through the redactor: the caller's secrets never leave in a report
    human = surfaces.stream
    colour = _terminal.colour(human)
    progress = Progress(
        human, colour=colour, live=_terminal.live(human), verbose=verbose, quiet=quiet
    )
    try:
        report = run_check(options, progress, config=False)  # merged with it above
    finally:
        progress.close()
    human.write(render_report(report, colour=colour, verbose=verbose, quiet=quiet) + "\n")
    human.flush()
    if report.warnings:  # on stderr, one line each, even with --quiet
        errors = surfaces.secrets.stream(sys.stderr)
        errors.write(render_warnings(report.warnings, colour=_terminal.colour(errors)) + "\n")
        errors.flush()
    surfaces.write(report)
    return EXIT_OK if report.ok else EXIT_CHECK_FAILED
