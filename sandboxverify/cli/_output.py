"""Where results go besides the text: JSON (stdout or a file), JUnit XML, GitHub Actions
annotations and the step summary. A report path is checked before any work is done."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from sandboxverify._errors import UsageError
from sandboxverify.artifacts._artifacts import ProjectTarget, Target
from sandboxverify.cli import _config
from sandboxverify.pipeline._options import CheckOptions
from sandboxverify.report._model import Report

_ARTIFACT_SUFFIXES = (".whl", ".tar.gz", ".zip", ".py", ".toml")


def write_json(document: dict[str, Any], json_out: str | None) -> None:
    """The JSON document to stdout (``-``) or to a file; nothing without ``--json``."""
    if not json_out:
        return
    text = json.dumps(document, indent=2) + "\n"
    if json_out == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        Path(json_out).write_text(text, encoding="utf-8")


@contextlib.contextmanager
def stdout_to_stderr(active: bool) -> Iterator[None]:
    """While plugin code runs in this process for ``--json -``, what it prints goes to stderr, so
    stdout carries the JSON alone: ``print()`` (sys.stdout) and file descriptor 1 (C code, child
    processes) both, where stdout is a real file."""
    if not active:
        yield
        return
    sys.stdout.flush()
    try:
        out_fd, err_fd = sys.stdout.fileno(), sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # in-memory streams: only Python writes there
        out_fd = err_fd = -1
    saved = os.dup(out_fd) if out_fd >= 0 else -1
    if saved >= 0:
        os.dup2(err_fd, out_fd)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        if saved >= 0:
            os.dup2(saved, out_fd)
            os.close(saved)


def check_json_path(json_out: str | None, targets: Sequence[str]) -> None:
    if json_out != "-":
        check_report_path("--json", json_out, targets)


def check_report_path(option: str, out: str | None, targets: Sequence[str]) -> None:
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


def write_junit(report: Report, junit_out: str) -> None:
    """The JUnit XML report: one test case per check."""
    from sandboxverify.report._junit import junit_xml  # noqa: PLC0415 - only when asked

    Path(junit_out).write_text(junit_xml(report), encoding="utf-8")


def write_github(report: Report, target: Target, options: CheckOptions, stream: TextIO) -> None:
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
