"""Stage ``imports``: every module the installed wheel ships, imported in the sandbox.

One process (the runtime's ``imports`` action) imports them all: it finds a module left out of
the wheel, a dependency used but not declared, a module that only imports from the author's
source tree. Stage ``scripts`` (the console scripts) is ``_scripts``.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import field, replace
from typing import Any

from sandboxverify._frozen import frozen
from sandboxverify.artifacts import Artifact, shared_namespace
from sandboxverify.report import (
    AllowedFailure,
    ExcusedModule,
    ExtraRecord,
    Failure,
    ImportFailure,
    ImportsRecord,
    OutsideModule,
    PluginRecord,
    SkippedModule,
)
from sandboxverify.sandbox import RunContext, Sandbox
from sandboxverify.stages import _runtime_call as runtime
from sandboxverify.stages._import_causes import NO_MODULE_NAMED
from sandboxverify.stages._import_stops import from_progress, stopped
from sandboxverify.stages._plugin_modules import without_plugin_modules
from sandboxverify.stages._removed_stdlib import removed_from_stdlib
from sandboxverify.stages._runtime_call import EarlyResult, ProbeError, Subject, request_runtime

_SHOWN = 5
_SUBJECT = Subject(
    "the import of every module",
    timeout_hint="a module must not block at import; if importing is only slow, raise --timeout",
    crash_hint="a module must not exit or kill the interpreter at import",
)


@frozen
class ImportsOutcome:
    failures: tuple[Failure, ...]
    #: the ``runs[].imports`` record
    record: ImportsRecord
    summary: str


@frozen
class ImportRun:
    """What one import run in the sandbox found, before it is judged."""

    result: dict[str, Any]
    failures: tuple[Failure, ...]
    seconds: float


@frozen
class Settled:
    """What the modules that failed in the plain install did when judged as users meet them
    (``_excuses``): excused, or failed with the extra they need."""

    excused: tuple[ExcusedModule, ...]
    #: modules that failed with their extra too (or whose extra did not install)
    failed: Mapping[str, ImportFailure]
    failures: tuple[Failure, ...]
    records: tuple[ExtraRecord, ...]
    #: what more to say about modules that still fail: an entry point reaches it and an extra
    #: declares what it is missing, or the extras it was tried with
    hints: Mapping[str, str] = field(default_factory=dict)

    def joined(self, other: Settled) -> Settled:
        """Both judgings, of different modules, as one."""
        return Settled(
            tuple(sorted([*self.excused, *other.excused], key=lambda e: e.module)),
            {**self.failed, **other.failed},
            self.failures + other.failures,
            self.records + other.records,
            {**self.hints, **other.hints},
        )


def run_imports(
    sandbox: Sandbox,
    *,
    wheel: Artifact,
    skip: Sequence[str],
    exclude: dict[str, str],
    ctx: RunContext,
    only: Sequence[str] | None = None,
    configure: Mapping[str, Any] | None = None,
    early: EarlyResult | None = None,
) -> ImportRun:
    """The runtime's ``imports`` action; ``exclude`` maps modules not to import to why;
    ``only``: import just these (a sandbox with an extra installed); ``configure``: the
    application to set up before (``runtime._configured``); ``early``: the discovery it sends
    before it imports anything (``_probe.early_discovery``)."""
    python = sandbox.interpreter.version
    progress = runtime.result_dir(sandbox, "imports") / "progress"  # a fresh directory per check
    request = {
        "action": "imports",
        "dist": str(wheel.name),
        "skip": list(skip),
        "exclude": exclude,
        "progress": str(progress),
    }
    if only is not None:
        request["only"] = list(only)
    if configure is not None:
        request["configure"] = dict(configure)
    started = time.perf_counter()
    failures: list[Failure] = []
    try:
        result = request_runtime(
            sandbox, request, label="imports", ctx=ctx, subject=_SUBJECT, early=early
        )
    except ProbeError as exc:
        result = from_progress(progress)
        failures.append(stopped(exc.failure, result, ctx.plugin_timeout))
    else:
        if result.get("ok") is not True:
            error = result.get("error") or {}
            failures.append(
                Failure(
                    "probe_crashed",
                    f"the import check could not run: {error.get('message', 'no reason given')}",
                    python=python,
                    hint="the installed distribution is not what was built; re-run with -v",
                )
            )
    return ImportRun(result, tuple(failures), time.perf_counter() - started)


def unexplained_failures(
    run: ImportRun,
    *,
    plugins: Sequence[PluginRecord],
    allow_fail: Sequence[str],
    left_out: Collection[str] = (),
) -> list[dict[str, Any]]:
    """The runtime's results of the modules that failed for a reason of their own: not allowed
    to fail, not a failed plugin's module, not failing with a plugin's very error."""
    result = without_plugin_modules(run.result, plugins, left_out)
    errors = _plugin_errors(plugins)
    return [
        item
        for item in result.get("results") or ()
        if item.get("ok") is not True
        and not any(_matches(str(item["module"]), glob) for glob in allow_fail)
        and _error_key(item) not in errors
    ]


def _plugin_errors(plugins: Sequence[PluginRecord]) -> dict[tuple[object, object], str]:
    """A module raising what a plugin already raised is that plugin's failure, reported once."""
    return {(p.error.type, p.error.message): p.name for p in plugins if not p.ok and p.error}


def _error_key(item: dict[str, Any]) -> tuple[object, object]:
    error = item.get("error") or {}
    return error.get("type"), error.get("message")


def judge_imports(
    run: ImportRun,
    *,
    sandbox: Sandbox,
    wheel: Artifact,
    plugins: Sequence[PluginRecord],
    allow_fail: Sequence[str],
    settled: Settled | None = None,
    left_out: Collection[str] = (),
) -> ImportsOutcome:
    """Failures and the record of an import run, knowing which plugins failed: their modules
    count as skipped (the plugin failure is the report), even if the run imported them, as do
    those of plugins loaded, unless left out (``without_plugin_modules``); and ``settled``,
    what the modules that need an extra, another platform or a test framework did
    (``_excuses``)."""
    python = sandbox.interpreter.version
    result = without_plugin_modules(run.result, plugins, left_out)
    judged = _Judge(python, wheel, plugins, allow_fail, settled).judge(result)
    record = replace(judged.record, seconds=round(run.seconds, 3))
    failures = [*run.failures, *judged.failures]
    shipped = sorted(name for name in wheel.top_level if name.isidentifier())
    if shipped and not failures and not record.modules and not record.skipped:
        # the wheel has modules, yet the run found none installed: nothing was checked
        failures.append(
            Failure(
                "probe_crashed",
                "the import check found none of the wheel's modules installed in the sandbox's "
                f"site-packages (the wheel ships {', '.join(shipped)})",
                python=python,
                hint="the interpreter's site-packages is not where the installer put the "
                "files; re-run with --keep and -v to inspect the sandbox",
            )
        )
    return ImportsOutcome(tuple(failures), record, judged.summary)


class _Judge:
    """From the runtime's findings to failures and the record."""

    def __init__(
        self,
        python: str,
        wheel: Artifact,
        plugins: Sequence[PluginRecord],
        allow_fail: Sequence[str],
        settled: Settled | None = None,
    ) -> None:
        self.python = python
        self.wheel = wheel
        self.allow_fail = allow_fail
        self.settled = settled
        self.excused = {e.module for e in settled.excused} if settled is not None else set()
        self.plugin_errors = _plugin_errors(plugins)

    def judge(self, result: dict[str, Any]) -> ImportsOutcome:
        failures: list[Failure] = []
        failed: list[ImportFailure] = []
        allowed: list[AllowedFailure] = []
        imported: list[str] = []
        settled = self.settled
        for item in result.get("results") or ():
            name, error = str(item["module"]), item.get("error")
            if item.get("ok") is True:
                imported.append(name)
                continue
            error = error or {"type": "Error", "message": "failed without saying why"}
            kind, message = str(error["type"]), str(error["message"])
            glob = next((g for g in self.allow_fail if _matches(name, g)), None)
            duplicate = self.plugin_errors.get((error["type"], error["message"]))
            if glob is not None:
                allowed.append(AllowedFailure(name, kind, message, allowed_by=glob))
            elif duplicate is not None:
                failed.append(ImportFailure(name, kind, message, f"plugin {duplicate!r}"))
            elif name in self.excused:
                continue
            elif settled is not None and name in settled.failed:
                failed.append(settled.failed[name])  # its failure is the extra's, below
            else:
                failed.append(ImportFailure(name, kind, message))
                failures.append(self._module_failure(name, error, item))
        if settled is not None:
            failures.extend(settled.failures)
        outside = [
            OutsideModule(str(e["module"]), str(e["file"]), e.get("pth"), e.get("shipped") is True)
            for e in result.get("outside") or ()
        ]
        failures += self._outside_failures(outside)
        missing = [str(path) for path in result.get("missing_files") or ()]
        if missing:
            failures.append(self._missing_failure(missing))
        record = ImportsRecord(
            modules=len(result.get("modules") or ()),
            imported=tuple(imported),
            failed=tuple(failed),
            allowed_failures=tuple(allowed),
            skipped=tuple(
                SkippedModule(str(s["module"]), str(s["reason"]))
                for s in result.get("skipped") or ()
            ),
            outside=tuple(outside),
            missing_files=tuple(missing),
            finished="stopped_at" not in result,
            stopped_at=result.get("stopped_at"),
            not_checked=tuple(result.get("not_checked") or ()),
            excused=settled.excused if settled is not None else (),
            extras=settled.records if settled is not None else (),
        )
        return ImportsOutcome(tuple(failures), record, _imports_summary(record))

    def _lacked_of_another(self, item: Mapping[str, Any], message: str) -> str | None:
        """``package.name``, when the failure itself says another installed distribution's
        package lacks it (``No module named 'tox.venv'``, ``cannot import name 'x' from 'y'``,
        ``module 'y' has no attribute 'x'``); not a module of the wheel's own, which the wheel
        left out."""
        cause = item.get("cause")
        pairs = cause.get("names") if isinstance(cause, Mapping) else None
        for pair in pairs if isinstance(pairs, list) else ():
            if not (isinstance(pair, list) and len(pair) == 2):
                continue
            package, lacking = str(pair[0]), str(pair[1])
            named = f"'{package}.{lacking}'" in message or f"'{package}'" in message
            if package.split(".", 1)[0] not in self.wheel.top_level and named:
                return f"{package}.{lacking}"
        return None

    def _module_failure(self, name: str, error: dict[str, Any], item: dict[str, Any]) -> Failure:
        kind, message = str(error["type"]), str(error["message"])
        first = message.splitlines()[0] if message else ""
        hint = self._hint(name, kind, message)
        lacked = self._lacked_of_another(item, message)
        if lacked is not None:
            top = lacked.split(".", 1)[0]
            hint = (
                f"{top} is installed, and this version of it has no {lacked}: {name} "
                f"was written for another version of {top}; declare the range it works with, "
                "or update it to the installed version"
            )
        reached_by = item.get("reached_by")
        more = self.settled.hints.get(name) if self.settled is not None else None
        if more:
            hint = f"{more}; {hint}"
        if isinstance(reached_by, str):
            hint = f"entry point {reached_by} imports {name}, so users meet this failure; {hint}"
        return Failure(
            "import_failed",
            f"module {name!r} failed to import: {kind}" + (f": {first}" if first else ""),
            python=self.python,
            hint=hint,
            details=str(error.get("traceback") or "") or None,
            module=name,
        )

    def _hint(self, name: str, kind: str, message: str) -> str:
        missing = NO_MODULE_NAMED.search(message)
        if kind == "ModuleNotFoundError" and missing:
            module = missing.group(1)
            top = module.split(".", 1)[0]
            if top in self.wheel.top_level and shared_namespace(self.wheel, top):
                return (
                    f"{module} is not in this wheel, and {top} is a namespace package that other "
                    f"distributions add to: if {module} is another distribution's, declare that "
                    "in [project] dependencies; if it is this project's, add it to the wheel "
                    "(check the build's include/exclude settings)"
                )
            if top in self.wheel.top_level:
                return (
                    f"{module} belongs to this project but is not in the installed wheel: add it "
                    "to the wheel (check the build's include/exclude settings, MANIFEST.in, "
                    "packages=...), or stop importing it"
                )
            removed = removed_from_stdlib(top, self.python)
            if removed is not None:
                return removed
            return (
                f"{top!r} is imported by {name} but not installed: declare it in [project] "
                f"dependencies; if {name} is an optional part (an extra), pass "
                f"--import-allow-fail {name}"
            )
        if kind in ("FileNotFoundError", "IsADirectoryError", "NotADirectoryError"):
            return (
                "a file read at import is not in the installed package: declare it as package "
                "data so the wheel ships it"
            )
        if kind == "SyntaxError":
            return (
                f"the module does not compile on Python {self.python}: use syntax this Python "
                "understands, or raise requires-python"
            )
        return (
            f"{name} raises at import (traceback in details): fix its module-level code; if it "
            f"is not meant to be imported on its own, pass --import-skip {name} (or "
            f"--import-allow-fail {name} if failing here is expected)"
        )

    def _outside_failures(self, outside: list[OutsideModule]) -> list[Failure]:
        """One failure per top-level name loaded from outside the sandbox."""
        by_top: dict[str, list[OutsideModule]] = {}
        for entry in outside:
            by_top.setdefault(entry.module.split(".", 1)[0], []).append(entry)
        failures = []
        for entries in by_top.values():
            first = entries[0]
            more = f" (and {len(entries) - 1} more of its modules)" if len(entries) > 1 else ""
            pth = first.pth
            via = f"; {pth} puts that directory on sys.path" if pth else ""
            if pth and first.shipped:
                via = f"; the wheel's own {pth} puts that directory on sys.path"
                hint = (
                    f"remove {pth} from the wheel: a wheel must not point outside its install "
                    "location; ship the module in the wheel or declare the distribution that "
                    "provides it"
                )
            else:
                hint = (
                    "only what the wheel and its declared dependencies install may be imported: "
                    "ship the module in the wheel or declare its distribution, and do not add "
                    "directories to sys.path (or .pth files) pointing at a source tree"
                )
            failures.append(
                Failure(
                    "import_failed",
                    f"module {first.module!r} was imported from {first.file}, outside "
                    f"the sandbox's site-packages{more}{via}",
                    python=self.python,
                    hint=hint,
                    details="\n".join(f"{e.module}: {e.file}" for e in entries),
                    module=first.module,
                )
            )
        return failures

    def _missing_failure(self, missing: list[str]) -> Failure:
        shown = ", ".join(missing[:_SHOWN]) + (
            f" (and {len(missing) - _SHOWN} more)" if len(missing) > _SHOWN else ""
        )
        return Failure(
            "artifact_invalid",
            f"{len(missing)} file(s) the installed RECORD of {self.wheel.name} lists do not "
            f"exist: {shown}",
            python=self.python,
            hint="the wheel's RECORD does not match what got installed: rebuild the wheel with "
            "a standard build backend and do not edit it afterwards",
            details="\n".join(missing),
        )


def _imports_summary(record: ImportsRecord) -> str:
    total, skipped = record.modules, record.skipped
    if not record.finished and not total:
        return "the import run did not finish"
    if not total and not skipped:
        return "the wheel ships no importable modules"
    repeated = [f for f in record.failed if f.reported_by is not None]
    bad = len(record.failed) - len(repeated) + (1 if record.stopped_at else 0)
    text = (
        f"{bad} of {total} module(s) failed"
        if bad
        else f"{len(record.imported)} module(s) imported"
    )
    counts = [
        (len(repeated), "failed as a plugin did"),
        (len(record.not_checked), "not checked"),
        (len(record.allowed_failures), "allowed to fail"),
        (len(record.excused), "excused"),
        (len(skipped), "skipped"),
    ]
    return ", ".join([text] + [f"{count} {what}" for count, what in counts if count])


def _matches(module: str, glob: str) -> bool:
    """A glob naming a package covers its submodules too: they import the package."""
    parts = module.split(".")
    return any(fnmatch.fnmatchcase(".".join(parts[:end]), glob) for end in range(1, len(parts) + 1))
