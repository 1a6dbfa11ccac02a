"""Text output: live progress while a check runs, and the final report.

On a terminal, finished stages scroll above a one-line status of what is running, with a spinner
and each stage's elapsed time, a few times a second. Elsewhere (CI logs, pipes, ``TERM=dumb``)
every finished stage is one plain line. Colour follows ``_terminal`` (``NO_COLOR``,
``FORCE_COLOR``, ``TERM=dumb``).
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Sequence
from typing import Any, Callable, TextIO

from sandboxverify.pipeline import (
    CommandFinished,
    Event,
    IsolationChosen,
    PluginLoaded,
    StageFinished,
    StageStarted,
)
from sandboxverify.report import (
    Failure,
    PluginRecord,
    Report,
    ReportWarning,
    Run,
    SmokeCall,
    SmokeRecord,
    inert,
    inert_lines,
    plugins_registering,
    wheel_origin,
)
from sandboxverify.sandbox import format_argv

_DETAIL_LINES = 20
_MARKS = {
    "passed": ("✓", "ok  "),
    "failed": ("✗", "FAIL"),
    "skipped": ("-", "skip"),
    "error": ("!", "err "),  # an error result: a failure only if the playbook did not expect it
}
#: the status line's spinner: braille dots, or ASCII where the stream cannot take them
_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_ASCII_SPINNER = "|/-\\"
_COLOURS = {"passed": "32", "failed": "31", "skipped": "2", "error": "33", "dim": "2", "bold": "1"}


def neutralise(text: str) -> str:
    """Text that may carry the package's own output never becomes a CI workflow command.

    GitHub's runner reads ``::command::`` from any line that starts with it once leading spaces
    are trimmed, and the older ``##[command]`` anywhere in a line: a plugin printing
    ``::stop-commands::`` or ``::error::`` must not speak to the job through our output. Such a
    line gets a ``| `` in front, and ``##[`` a space inside (the annotations sandboxverify means
    to make are written separately, escaped)."""
    lines = [
        ("| " + line if line.lstrip().startswith("::") else line).replace("##[", "# #[")
        for line in text.split("\n")
    ]
    return "\n".join(lines)


class Style:
    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def paint(self, text: str, what: str) -> str:
        if not self.colour:
            return text
        return f"\x1b[{_COLOURS[what]}m{text}\x1b[0m"

    def mark(self, status: str) -> str:
        fancy, plain = _MARKS[status]
        return self.paint(fancy, status) if self.colour else plain


class Progress:
    """Renders events as they arrive; safe to call from the worker threads of a check.

    ``live``: a status line of what is running, with a spinner and each stage's elapsed time,
    rewritten ``interval`` apart by a thread of its own (plain ANSI: carriage return and erase
    line), below the finished stages. Otherwise one plain line per finished stage.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        colour: bool,
        live: bool,
        verbose: int = 0,
        quiet: bool = False,
        interval: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.live = live and not quiet
        self.verbose = verbose
        self.quiet = quiet
        self.style = Style(colour)
        self.interval = interval
        self.clock = clock
        #: what is running, and since when
        self._running: dict[tuple[str, str | None], float] = {}
        self._lock = threading.Lock()
        self._frames = _SPINNER if _unicode(stream) else _ASCII_SPINNER
        self._frame = 0
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __call__(self, event: Event) -> None:
        with self._lock:
            self._handle(event)

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            self._clear_status()

    def _handle(self, event: Event) -> None:
        if isinstance(event, IsolationChosen):
            pass  # its warning is the report's (no-os-sandbox), on stderr with the others
        elif isinstance(event, StageStarted):
            self._running[(event.stage, _run_name(event))] = self.clock()
            self._start_ticking()
            self._redraw()
        elif isinstance(event, StageFinished):
            self._running.pop((event.stage, _run_name(event)), None)
            if not self.quiet or event.status == "failed":
                where = f"[{_run_name(event)}] " if event.python else ""
                line = (
                    f"{self.style.mark(event.status)} {where}{event.stage:<8} "
                    f"{event.seconds:6.2f}s  {inert(event.summary)}"
                ).rstrip()
                self._print(line)
            self._redraw()
        elif isinstance(event, CommandFinished) and self.verbose:
            outcome = event.outcome
            where = f"[{_run_name(event)}] " if event.python else ""
            self._print(
                self.style.paint(
                    f"  {where}$ {inert(format_argv(outcome.command.argv))}  "
                    f"({outcome.describe()}, {outcome.seconds:.2f}s)",
                    "dim",
                )
            )
            if self.verbose > 1 or not outcome.ok:
                tail = inert_lines(outcome.tail.rstrip())[-_DETAIL_LINES * 2 :]
                for text in tail:
                    self._print(self.style.paint(f"    | {text}", "dim"))
        elif isinstance(event, PluginLoaded) and self.verbose:
            status = "passed" if event.plugin.ok else "failed"
            tools = inert(", ".join(event.tools)) or "no tools"
            self._print(
                f"  {self.style.mark(status)} [{_run_name(event)}] plugin "
                f"{inert(event.plugin.name)} ({event.plugin.seconds:.2f}s): {tools}"
            )

    def _start_ticking(self) -> None:
        if self.live and self._ticker is None and not self._stop.is_set():
            self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                self._frame += 1
                self._redraw()

    def _print(self, line: str) -> None:
        self._clear_status()
        self.stream.write(neutralise(line) + "\n")
        self.stream.flush()

    def _redraw(self) -> None:
        if not self.live or not self._running or self._stop.is_set():
            return
        now = self.clock()
        running = ", ".join(
            f"{f'[{python}] ' if python else ''}{stage} {now - since:.1f}s"
            for (stage, python), since in self._running.items()
        )
        spinner = self._frames[self._frame % len(self._frames)]
        width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
        status = f"{spinner} {running}"
        if len(status) > width:  # a wrapped line could not be rewritten in place
            status = status[: width - 1] + "…" if self._frames is _SPINNER else status[:width]
        self.stream.write("\r\x1b[K" + self.style.paint(status, "dim"))
        self.stream.flush()

    def _clear_status(self) -> None:
        if self.live:
            self.stream.write("\r\x1b[K")


def _run_name(event: StageStarted | StageFinished | CommandFinished | PluginLoaded) -> str | None:
    """How progress names the run an event is of: its Python, and given a wheel and an sdist,
    which of the two runs of that Python (the other installs the given wheel)."""
    if event.python is None:
        return None
    return event.python + (" from sdist" if event.from_sdist else "")


def _unicode(stream: TextIO) -> bool:
    return str(getattr(stream, "encoding", None) or "").lower().replace("-", "") == "utf8"


def render_report(report: Report, *, colour: bool, verbose: int = 0, quiet: bool = False) -> str:
    style = Style(colour)
    lines: list[str] = []
    if not quiet:
        for run in report.runs:
            lines.extend(_run_lines(run, style, wheel_origin(run.wheel_built, report.runs)))
    for failure in report.failures:
        origin = wheel_origin(failure.wheel_built, report.runs)
        lines.extend(_failure_lines(failure, style, verbose, origin))
    lines.extend(f"note: {_block(note)}" for note in report.notes)
    if not quiet or report.isolation_fallback:
        why = report.isolation_fallback
        lines.append(
            f"isolation: {report.isolation}"
            + (f" (the OS sandbox is unavailable: {inert(why)})" if why else "")
        )
    if report.workdir:
        lines.append(f"kept: {inert(report.workdir)}")
    lines.extend(
        f"written: {inert(a.kept)} (sha256 {a.sha256})" for a in report.artifacts if a.kept
    )
    lines.append(_verdict(report, style))
    return neutralise("\n".join(lines))


def render_warnings(warnings: Sequence[ReportWarning], *, colour: bool) -> str:
    """One line per warning (for stderr, even with --quiet): its code, what, and what to do."""
    style = Style(colour)
    lines = [
        f"{style.paint('warning:', 'error')} [{inert(w.code)}] {_one_line(w.message)}"
        + (f" (hint: {_one_line(w.hint)})" if w.hint else "")
        for w in warnings
    ]
    return neutralise("\n".join(lines))


def _one_line(text: str) -> str:
    return inert(" ".join(text.split()))


def render_smoke(result: dict[str, Any], *, colour: bool, verbose: int = 0) -> str:
    """A playbook run (``sandboxverify run``): one line per tool call, then the verdict."""
    style = Style(colour)
    lines = smoke_call_lines(result, style)
    error = result.get("error")
    if error:
        lines.append(
            f"{style.paint('FAILED', 'failed')} [{inert(error.get('code'))}] "
            f"{_block(error.get('message'))}"
        )
        details = inert_lines(str(error.get("details") or "").rstrip())
        shown = details if verbose else details[-_DETAIL_LINES:]
        lines.extend(style.paint(f"  | {text}", "dim") for text in shown)
    name = inert(result.get("playbook") or result.get("script") or "playbook")
    counts = f"{result.get('turns', 0)} turn(s), {result.get('tool_calls', 0)} tool call(s)"
    if "seconds" in result:
        counts += f" in {result['seconds']:.2f}s"
    verdict = "PASSED" if result.get("ok") else "FAILED"
    lines.append(
        f"{style.paint(verdict, 'passed' if result.get('ok') else 'failed')}: {name}, {counts}"
    )
    return neutralise("\n".join(lines))


def smoke_call_lines(result: dict[str, Any], style: Style, indent: str = "") -> list[str]:
    """The calls of a playbook run's result (``run``, ``record``), one line each."""
    return _call_lines(SmokeRecord.from_json(result).calls, style, indent)


def _call_lines(calls: Sequence[SmokeCall], style: Style, indent: str = "") -> list[str]:
    lines = []
    for call in calls:
        # the call the run diverged at is the failure, whatever its result looked like
        status = "failed" if call.diverged else "error" if call.is_error else "passed"
        flags = "".join(
            f" ({flag})" for flag, on in (("mocked", call.mocked), ("blocked", call.blocked)) if on
        )
        text = call.text.replace("\n", " ")
        text = inert(text if len(text) <= 60 else text[:57] + "...")
        lines.append(
            f"{indent}{style.mark(status)} turn {call.turn} "
            f"{inert(call.tool_call_id)} {inert(call.tool)}{flags}: {text}"
        )
    return lines


def _labels(run: Run, plugin: PluginRecord, exercises: Sequence[str] | None = None) -> list[str]:
    """What ``plugin`` registered (``exercises``: only what its application's run left so),
    as the summary shows it: a tool by name, anything else as ``kind:name``."""
    return [
        inert(tool.name if tool.kind == "tool" else f"{tool.kind}:{tool.name}")
        for tool in run.tools
        if tool.of(plugin) and (exercises is None or tool.exercise in exercises)
    ]


def _run_lines(run: Run, style: Style, origin: str | None = None) -> list[str]:
    """``origin``: which of its interpreter's two runs this is (a wheel and an sdist given)."""
    lines = [
        style.paint(f"Python {run.python}", "bold")
        + style.paint(f"  {run.interpreter}", "dim")
        + (f"  {origin}: {run.wheel}" if origin else "")
    ]
    width = max((len(inert(plugin.name)) for plugin in run.plugins), default=0)
    for plugin in run.plugins:
        status = "passed" if plugin.ok else "failed"
        if plugin.ok:
            detail = ", ".join(_labels(run, plugin)) or "registered nothing"
        else:
            assert plugin.error is not None
            error = f"{plugin.error.type}: {plugin.error.message}"
            detail = inert_lines(error)[0]
        lines.append(
            f"  {style.mark(status)} {inert(plugin.name):<{width}}  "
            f"{style.paint(inert(plugin.value), 'dim')}  {detail}"
        )
        if plugin.host:
            why = f" ({inert(plugin.host_reason)})" if plugin.host_reason else ""
            lines.append(
                style.paint(f"    {'':<{width}}judged by host {inert(plugin.host)}{why}", "dim")
            )
        said = _application_said(plugin)
        if said:
            lines.append(style.paint(f"    {'':<{width}}{inert(said)}", "dim"))
        unexercised = _labels(run, plugin, ("not_exercised", "unavailable"))
        if plugin.ok and unexercised:
            names = ", ".join(unexercised)
            lines.append(style.paint(f"    {'':<{width}}not exercised: {names}", "dim"))
    lines.extend(_excused_lines(run, style))
    if run.smoke is not None:
        smoke = run.smoke
        status = "passed" if smoke.ok else "failed"
        lines.append(
            f"  {style.mark(status)} smoke {inert(smoke.playbook)}: "
            f"{smoke.turns} turn(s), {smoke.tool_calls} tool call(s)"
        )
        lines.extend(_call_lines(smoke.calls, style, indent="      "))
    if run.sandbox:
        lines.append(style.paint(f"  sandbox: {run.sandbox}", "dim"))
    return lines


def _application_said(plugin: PluginRecord) -> str:
    """What was found of the plugin's application, when sandboxverify did something about it:
    installed it, or looked and found none."""
    application = plugin.application
    if application is None or application.found_by in ("declared", "itself"):
        return ""
    tried = "; ".join(f"{requirement}: {why}" for requirement, why in application.tried)
    if application.name is None:
        return "application: none found" + (f" (tried {tried})" if tried else "")
    version = f" {application.version}" if application.version else ""
    how = {
        "extra": "a requirement of its extras",
        "name": "named after the group",
        "registry": "the application of its host",
        "dependent": "it requires the plugin, which imports it",
    }.get(application.found_by or "", "")
    return f"application: {application.name}{version}, installed by sandboxverify ({how})"


def _excused_lines(run: Run, style: Style) -> list[str]:
    """The modules that failed in the plain install and are not failures, each with why."""
    if run.imports is None:
        return []
    lines = []
    for excused in run.imports.excused:
        why = f"extra {excused.extra!r}" if excused.reason == "extra" else excused.reason
        lines.append(
            f"  {style.mark('skipped')} {inert(excused.module)}  "
            + style.paint(f"excused ({inert(why)}): {inert(excused.detail)}", "dim")
        )
    unbuilt = {e.extra for e in run.imports.excused if e.reason == "unbuilt"}
    for extra in run.imports.extras:
        if not extra.installed:
            # a requirement with no wheel: its modules are listed as not verified above
            mark, said = (
                ("skipped", "not installed: a requirement needs its sdist built")
                if extra.name in unbuilt
                else ("failed", "did not install")
            )
            lines.append(
                f"  {style.mark(mark)} {inert(extra.requirement)}  "
                + style.paint(f"{said}: {inert(extra.error)}", "dim")
            )
    return lines


def _failure_lines(
    failure: Failure, style: Style, verbose: int, origin: str | None = None
) -> list[str]:
    where = f" [{failure.python}{f', {origin}' if origin else ''}]" if failure.python else ""
    message = _block(failure.message)
    lines = [f"{style.paint('FAILED', 'failed')} {failure.code}{where}: {message}"]
    if failure.hint:
        lines.append(f"  hint: {_block(failure.hint)}")
    if failure.details:
        detail_lines = inert_lines(failure.details.rstrip())
        shown = detail_lines if verbose else detail_lines[-_DETAIL_LINES:]
        if len(shown) < len(detail_lines):
            lines.append(
                style.paint(
                    f"  | [... {len(detail_lines) - len(shown)} more lines; -v shows all]", "dim"
                )
            )
        lines.extend(style.paint(f"  | {text}", "dim") for text in shown)
    return lines


def _block(text: object) -> str:
    """Text of the package's that may span lines, inert, its later lines indented: a line of
    its own never starts where the report's own lines (``FAILED``, ``PASSED``) do."""
    return "\n  ".join(inert(text, lines=True).split("\n"))


def _verdict(report: Report, style: Style) -> str:
    pythons = ", ".join(dict.fromkeys(run.python for run in report.runs)) or "no interpreter"
    counts = f"{plugins_registering(report.runs)} on Python {pythons} in {report.seconds:.1f}s"
    if report.ok:
        return f"{style.paint('PASSED', 'passed')}: {counts}"
    return f"{style.paint('FAILED', 'failed')}: {len(report.failures)} failure(s); {counts}"
