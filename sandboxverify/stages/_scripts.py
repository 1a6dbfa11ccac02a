"""Stage ``scripts``: every console script is installed, and its ``--help`` exits 0.

A script pointing at a function that does not exist fails here, not on a user's machine.
"""

from __future__ import annotations

import ast
import difflib
import fnmatch
import re
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from sandboxverify._frozen import frozen
from sandboxverify.artifacts import Artifact
from sandboxverify.report import Failure, ScriptRecord, summarize
from sandboxverify.runtime import EntryPointRef
from sandboxverify.sandbox import (
    Command,
    Outcome,
    RunContext,
    Sandbox,
    parallel_map,
    plugin_env,
    read_head,
)
from sandboxverify.stages._extras import read_extras
from sandboxverify.stages._runtime_call import confined, safe_label
from sandboxverify.stages._script_extras import AskedFor, extra_asked_for, with_extras

_MAX_PARALLEL_SCRIPTS = 4
#: what a console script wrapper raises when the function it imports does not exist
_CANNOT_IMPORT = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'(?: \((.+\.py)\))?")


@frozen
class ScriptsOutcome:
    failures: tuple[Failure, ...]
    #: the ``runs[].scripts`` records, one per console script
    records: tuple[ScriptRecord, ...]
    summary: str


def check_scripts(
    sandbox: Sandbox,
    scripts: Sequence[EntryPointRef],
    *,
    skip_help: Sequence[str],
    servers: Sequence[str],
    ctx: RunContext,
    wheel: Artifact | None = None,
    also: Sequence[str] = (),
) -> ScriptsOutcome:
    """Each console script is installed in ``bin/`` and its ``--help`` exits 0; one that
    fails asking for an extra of ``wheel`` runs again with it (``also``: ``--with``)."""
    python = sandbox.interpreter.version

    def not_installed(place: Sandbox, ref: EntryPointRef) -> Failure:
        return Failure(
            "script_failed",
            f"{_kind(ref)} {ref.name!r} ({ref.value}) is not installed in {place.bin}",
            python=python,
            plugin=ref.name,
            hint="the installer creates it from the wheel's entry_points.txt; check the "
            "script's name in [project.scripts] (or [project.gui-scripts])",
        )

    def check_one(ref: EntryPointRef) -> tuple[ScriptRecord, Failure | None]:
        record = ScriptRecord(ref.name, ref.value, ref.group)
        executable = _executable(sandbox.bin, ref.name)
        if executable is None:
            return record, not_installed(sandbox, ref)
        record = replace(record, exists=True)
        if ref.group != "console_scripts":
            return record, None  # a GUI program would open a window
        if ref.name in servers:
            return replace(record, help="server"), None
        if any(fnmatch.fnmatchcase(ref.name, glob) for glob in skip_help):
            return record, None
        return _run_help(sandbox, ref, executable, record, ctx)

    def help_in(
        place: Sandbox, ref: EntryPointRef, record: ScriptRecord
    ) -> tuple[ScriptRecord, Failure | None]:
        executable = _executable(place.bin, ref.name)
        if executable is None:
            return record, not_installed(place, ref)
        return _run_help(place, ref, executable, record, ctx)

    checked = parallel_map(check_one, list(scripts), _MAX_PARALLEL_SCRIPTS)
    asked = _asking_for_extras(scripts, checked, wheel, sandbox)
    if wheel is not None and asked:
        again = with_extras(
            asked, sandbox=sandbox, wheel=wheel, also=also, ctx=ctx, run_help=help_in
        )
        checked = [again.get(record.name, (record, failure)) for record, failure in checked]
    records = tuple(record for record, _ in checked)
    failures = tuple(failure for _, failure in checked if failure is not None)
    return ScriptsOutcome(failures, records, _scripts_summary(records))


def _asking_for_extras(
    scripts: Sequence[EntryPointRef],
    checked: Sequence[tuple[ScriptRecord, Failure | None]],
    wheel: Artifact | None,
    sandbox: Sandbox,
) -> list[AskedFor]:
    """The scripts whose ``--help`` failed asking for one of ``wheel``'s extras."""
    failed = [
        (ref, record, failure)
        for ref, (record, failure) in zip(scripts, checked)
        if failure is not None and record.help == "failed" and failure.details
    ]
    if wheel is None or not failed:
        return []
    extras = read_extras(wheel.path, str(wheel.name), sandbox.interpreter.version_info)
    asked: list[AskedFor] = []
    for ref, record, failure in failed:
        extra = extra_asked_for(str(failure.details), extras)
        if extra is not None:
            asked.append(AskedFor(ref, record, failure, extra))
    return asked


def _run_help(
    sandbox: Sandbox,
    ref: EntryPointRef,
    executable: Path,
    record: ScriptRecord,
    ctx: RunContext,
) -> tuple[ScriptRecord, Failure | None]:
    command = Command(
        argv=[str(executable), "--help"],
        env=plugin_env(sandbox.bin, sandbox.paths.home, sandbox.paths.tmp, ctx.pass_env),
        cwd=sandbox.paths.work,
        timeout=ctx.plugin_timeout,
        log_path=sandbox.paths.logs / f"script-{safe_label(ref.name)}.log",
        label=f"script-{ref.name}",
        stdin=b"",
        launcher=confined(sandbox, ctx),
    )
    outcome = ctx.run(command)
    record = replace(
        record,
        help="passed" if outcome.ok else "failed",
        exit_code=outcome.exit_status,
        seconds=round(outcome.seconds, 3),
    )
    if outcome.ok:
        return record, None
    # a long help puts its usage line first, where the tail no longer reaches (robot's: 250
    # lines, exit 251)
    output = f"{read_head(command.log_path)}\n{outcome.tail}"
    if not outcome.timed_out and _answers_with_usage(outcome.exit_status, output):
        return replace(record, help="usage"), None
    python = sandbox.interpreter.version
    if outcome.timed_out:
        return record, Failure(
            "timeout",
            f"console script {ref.name!r} ({ref.value}): '{ref.name} --help' did not finish "
            f"within {ctx.plugin_timeout:g}s and was killed",
            python=python,
            plugin=ref.name,
            hint="--help must print and exit without reading input or starting a server; if "
            f"this script cannot, pass --skip-script-help {ref.name}",
            details=outcome.tail or None,
        )
    return record, _help_failure(ref, outcome, python)


def _answers_with_usage(status: int | None, output: str) -> bool:
    """A script that ran and answered ``--help`` with its usage, or saying it has no such
    option, raising nothing: it works. (No ``--help`` option: ``mprof``, ``ninja``,
    ``dulwich``: exit 1; an argparse parser without help: 2; ``pylint-config``: 32. A whole
    help, then a status of its own: robot's 251. A negative status is a signal, not an
    answer.)"""
    return (
        status is not None
        and status > 0
        and "Traceback (most recent call last)" not in output
        and (_USAGE.search(output) is not None or _NO_HELP_OPTION.search(output) is not None)
    )


#: a usage line as command-line parsers and hand-written ones print it
_USAGE = re.compile(r"(?im)^\s*usage\b")
#: a script's own words for an option it does not have (pew: "command --help does not
#: exist"; topydo, scapy: "option --help not recognized")
_NO_HELP_OPTION = re.compile(
    r"(?i)--help\b.{0,20}\b(not recognized|unrecognized|does not exist|unknown|no such)"
    r"|\b(unrecognized|unknown|no such|invalid) (option|command|argument)s?:? '?--help\b"
)


def _help_failure(ref: EntryPointRef, outcome: Outcome, python: str) -> Failure:
    """``--help`` exited non-zero: the cause, and where the script points when it names a
    function its module lacks."""
    cause = summarize(outcome.tail)
    missing_name = _CANNOT_IMPORT.search(cause)
    if missing_name is not None:
        cause = cause[: missing_name.end(2) + 1]  # the installed file's path adds nothing
        source = missing_name.group(3)
        close = _close_names(missing_name.group(1), Path(source)) if source else None
        hint = (
            f"[project.scripts] points {ref.name} at {ref.value}, but the module has no "
            f"{missing_name.group(1)!r}"
            + (f" (did you mean {close!r}?)" if close else "")
            + ": fix the entry point in pyproject.toml"
        )
    elif re.search(r"\b(ImportError|ModuleNotFoundError|AttributeError)\b", cause):
        hint = (
            f"the console script points at {ref.value}, which does not import from the "
            "installed wheel: check [project.scripts] in pyproject.toml (the module and the "
            "function must exist, spelled as declared)"
        )
    else:
        hint = (
            f"'{ref.name} --help' must exit 0 (it runs {ref.value}): fix the script, or pass "
            f"--skip-script-help {ref.name} if it has no --help"
        )
    return Failure(
        "script_failed",
        f"console script {ref.name!r} ({ref.value}): '{ref.name} --help' {outcome.describe()}: "
        f"{cause}",
        python=python,
        plugin=ref.name,
        hint=hint,
        details=outcome.tail or None,
    )


def _close_names(name: str, source: Path) -> str | None:
    """The module's top-level name closest to ``name``, read from its source (never run)."""
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"))
    except (OSError, ValueError, SyntaxError):
        return None
    defined = [
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    close = difflib.get_close_matches(name, defined, n=1)
    return close[0] if close else None


def _executable(bin_dir: Path, name: str) -> Path | None:
    names = [f"{name}.exe", f"{name}-script.py", name] if sys.platform == "win32" else [name]
    return next((bin_dir / n for n in names if (bin_dir / n).is_file()), None)


def _kind(ref: EntryPointRef) -> str:
    return "GUI script" if ref.group == "gui_scripts" else "console script"


def _scripts_summary(records: Sequence[ScriptRecord]) -> str:
    console = [r for r in records if r.group == "console_scripts"]
    gui = len(records) - len(console)
    if not records:
        return "no console scripts"
    parts = [f"{len(console)} console script(s)"] if console else []
    parts += [f"{gui} GUI script(s)"] if gui else []
    not_run = sum(1 for r in console if r.help in ("skipped", "server") and r.exists)
    if not_run:
        parts.append(f"--help not run for {not_run}")
    usage = sum(1 for r in console if r.help == "usage")
    if usage:
        parts.append(f"{usage} answering --help with their usage and a non-zero status")
    extras = sorted({r.extra for r in console if r.extra is not None})
    if extras:
        ran = sum(1 for r in console if r.extra is not None)
        parts.append(f"{ran} run with the extra they ask for ({', '.join(extras)})")
    return ", ".join(parts)
