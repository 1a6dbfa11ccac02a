"""The command line. Its ``main`` is the one error boundary: ``ERROR ...`` + hint + exit code."""

from __future__ import annotations

import signal
import sys
import traceback
from collections.abc import Sequence
from types import FrameType
from typing import NoReturn

import click

from sandboxverify._errors import EXIT_OK, EXIT_USAGE, SandboxVerifyError
from sandboxverify._version import __version__
from sandboxverify.cli._commands import check, run_playbook
from sandboxverify.cli._matrix import matrix
from sandboxverify.cli._merge import merge_reports

EXIT_INTERNAL = 3


class _Terminated(KeyboardInterrupt):
    """SIGTERM, delivered like Ctrl-C so every ``finally`` and cleanup runs."""


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="sandboxverify")
def cli() -> None:
    """Prove a package works when a stranger installs it."""


cli.add_command(check)
cli.add_command(run_playbook)
cli.add_command(merge_reports)
cli.add_command(matrix)


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
