"""The command line. Its ``main`` is the one error boundary: ``ERROR ...`` + hint + exit code."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import traceback
from collections.abc import Sequence
from dataclasses import replace
from types import FrameType
from typing import NoReturn

import click

from sandboxverify._errors import (
    EXIT_OK,
    EXIT_USAGE,
    ConfigError,
    Interrupted,
    SandboxVerifyError,
)
from sandboxverify._version import __version__
from sandboxverify.cli._commands import (
    check,
    matrix,
    merge_reports,
    record,
    run_playbook,
    survey,
)
from sandboxverify.cli._surfaces import Surfaces
from sandboxverify.report import ErrorCode, Redactor, inert

EXIT_INTERNAL = 3


class _Terminated(KeyboardInterrupt):
    """SIGTERM, delivered like Ctrl-C so every ``finally`` and cleanup runs."""


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="sandboxverify")
def cli() -> None:
    """Prove a package works when a stranger installs it."""


cli.add_command(check)
cli.add_command(run_playbook)
cli.add_command(record)
cli.add_command(merge_reports)
cli.add_command(matrix)
cli.add_command(survey)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    code = run(argv)
    # Every report is written and every command has ended (``run`` returns only then), so
    # the process leaves at once: tearing the interpreter down module by module takes ~20 ms
    # of a 0.4 s check, and after an interrupt it would wait for a worker thread still
    # winding down (the interpreter joins its threads).
    with contextlib.suppress(OSError):  # a reader that went away (``| head``)
        sys.stdout.flush()
    with contextlib.suppress(OSError):
        sys.stderr.flush()
    os._exit(code)


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the exit code; every error ends here, and leaves the reports the
    command was asked for (``--json``, ``--junit-xml``, ``--github``) with the error in them."""
    args = list(argv) if argv is not None else sys.argv[1:]
    surfaces = Surfaces()  # each command says which it was asked for, once click has its options
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        result = cli.main(args=args, prog_name="sandboxverify", standalone_mode=False, obj=surfaces)
        return int(result) if isinstance(result, int) else EXIT_OK
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        return _stop(
            surfaces, args, "usage_error", exc.format_message(), _click_hint(exc), EXIT_USAGE
        )
    except SandboxVerifyError as exc:
        code: ErrorCode = (
            "interrupted"
            if isinstance(exc, Interrupted)
            else "config_error"
            if isinstance(exc, ConfigError)
            else "usage_error"
        )
        return _stop(surfaces, args, code, exc.message, exc.hint, exc.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt) as exc:
        # click re-raises Ctrl-C as Abort; the cause says whether it was SIGTERM
        terminated = isinstance(exc, _Terminated) or isinstance(exc.__cause__, _Terminated)
        what: ErrorCode = "terminated" if terminated else "interrupted"
        message = f"{what}: stopped every process and removed the temporary files"
        return _stop(
            surfaces, args, what, message, None, 128 + signal.SIGTERM if terminated else 130
        )
    except Exception as exc:  # a bug: the only place a traceback is shown
        sys.stderr.write(Redactor().text(traceback.format_exc()))
        return _stop(
            surfaces,
            args,
            "internal_error",
            f"internal error in sandboxverify: {type(exc).__name__}: {exc}",
            "a bug in sandboxverify: please report it with the traceback printed above it",
            EXIT_INTERNAL,
        )
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stop(  # noqa: PLR0917 - the error boundary's one call shape
    surfaces: Surfaces,
    args: list[str],
    code: ErrorCode,
    message: str,
    hint: str | None,
    exit: int,
) -> int:
    """``ERROR ...`` and its hint, then the error in every report the command was asked for
    (read from the command line again if the command stopped before it knew)."""
    _error(message, hint)
    if not surfaces.known:
        surfaces = replace(Surfaces.from_command_line(cli, args), started=surfaces.started)
    surfaces.stopped(code, message, hint)
    return exit


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


def _click_hint(exc: click.ClickException) -> str:
    if isinstance(exc, click.UsageError) and exc.ctx is not None:
        return f"run '{exc.ctx.command_path} --help' for the options"
    return "run 'sandboxverify --help'"


def _error(message: str, hint: str | None) -> None:
    secrets = Redactor()  # an option's value may carry one (an index URL with a token)
    # a message may quote the checked project's files (a key of its pyproject.toml): inert
    sys.stderr.write(f"ERROR {inert(secrets.text(message))}\n")
    if hint:
        sys.stderr.write(f"  hint: {inert(secrets.text(hint))}\n")
    sys.stderr.flush()
