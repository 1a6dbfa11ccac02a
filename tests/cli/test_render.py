"""Text output: plain lines for logs, colour only on terminals, failures with hints and details."""

from __future__ import annotations

import io
import re
import time
from dataclasses import replace

import pytest

from sandboxverify.cli import _terminal
from sandboxverify.cli._render import Progress, neutralise, render_report, render_warnings
from sandboxverify.pipeline._progress import IsolationChosen, StageFinished, StageStarted
from sandboxverify.report._model import (
    ArtifactRecord,
    Failure,
    PluginError,
    PluginRecord,
    Report,
    ReportWarning,
    Run,
    Stage,
    ToolRecord,
)


def report(failures: tuple[Failure, ...] = ()) -> Report:
    run = Run(
        python="3.12.1",
        interpreter="/usr/bin/python3.12",
        ok=not failures,
        stages=(Stage("build", "passed", 1.0), Stage("probe", "passed", 0.2)),
        plugins=(
            PluginRecord("greeter", "sandboxverify.plugins", "demo.plugin:setup", ok=True),
            PluginRecord(
                "broken",
                "sandboxverify.plugins",
                "demo.broken:setup",
                ok=False,
                error=PluginError("ImportError", "nope\nsecond line", "tb", "import"),
            ),
        ),
        tools=(ToolRecord("greet", "greeter", None), ToolRecord("add", "greeter", None)),
    )
    return Report(
        target=".",
        artifacts=(ArtifactRecord("wheel", "demo.whl", "0" * 64, True),),
        runs=(run,),
        failures=failures,
        host="native",
        groups=("sandboxverify.plugins",),
        installer="uv",
        seconds=2.5,
    )


def test_passing_report_lists_plugins_tools_and_a_verdict() -> None:
    text = render_report(report(), colour=False)
    assert "Python 3.12.1" in text
    assert "ok   greeter  demo.plugin:setup  greet, add" in text
    assert "FAIL broken   demo.broken:setup  ImportError: nope" in text
    assert "second line" not in text
    assert (
        text.splitlines()[-1]
        == "PASSED: 2 plugin(s) registering 2 tool(s) on Python 3.12.1 in 2.5s"
    )
    assert "\x1b[" not in text


def test_failures_show_code_hint_and_the_last_lines_of_details() -> None:
    details = "\n".join(f"line {i}" for i in range(50))
    failure = Failure(
        "plugin_load_failed",
        "it broke",
        python="3.12.1",
        plugin="broken",
        hint="fix it",
        details=details,
    )
    text = render_report(report((failure,)), colour=False)

    assert "FAILED plugin_load_failed [3.12.1]: it broke" in text
    assert "  hint: fix it" in text
    assert "  | line 49" in text
    assert "  | line 10" not in text
    assert "30 more lines; -v shows all" in text
    assert "  | line 0" in render_report(report((failure,)), colour=False, verbose=1)
    assert text.splitlines()[-1].startswith("FAILED: 1 failure(s)")


def test_quiet_keeps_only_failures_and_verdict() -> None:
    text = render_report(report(), colour=False, quiet=True)
    assert text.splitlines() == [
        "PASSED: 2 plugin(s) registering 2 tool(s) on Python 3.12.1 in 2.5s"
    ]


def test_the_isolation_is_said_and_a_fallback_even_when_quiet() -> None:
    assert "isolation: process\n" in render_report(report(), colour=False)
    fallback = replace(report(), isolation_fallback="bwrap is not installed")
    assert render_report(fallback, colour=False, quiet=True).splitlines()[0] == (
        "isolation: process (the OS sandbox is unavailable: bwrap is not installed)"
    )


def test_the_packages_output_never_becomes_a_workflow_command() -> None:
    failure = Failure(
        "plugin_load_failed",
        "raised: RuntimeError: x\n::error::forged",
        details="  ::stop-commands::token\nhello ##[add-mask]secret",
    )
    text = render_report(report((failure,)), colour=False, verbose=1)

    for line in text.splitlines():
        assert not line.lstrip().startswith("::"), line
    assert "##[" not in text
    assert "|   ::error::forged" in text  # the message's later line: indented, then neutralised
    assert neutralise("ok\n::x::y") == "ok\n| ::x::y"


def test_the_fallback_warning_is_left_to_the_report() -> None:
    # it is the report's no-os-sandbox warning, one line on stderr with the others
    stream = io.StringIO()
    progress = Progress(stream, colour=False, live=False, quiet=False)
    progress(IsolationChosen("process", "running without the OS sandbox (why)"))
    assert stream.getvalue() == ""


def test_warnings_are_one_line_each() -> None:
    warnings = [
        ReportWarning(
            "junk-files", "demo-1.0.tar.gz: ships .github/\nand more", "demo", "exclude it"
        ),
        ReportWarning("no-os-sandbox", "ran without the OS sandbox (no bwrap)"),
    ]
    assert render_warnings(warnings, colour=False).splitlines() == [
        "warning: [junk-files] demo-1.0.tar.gz: ships .github/ and more (hint: exclude it)",
        "warning: [no-os-sandbox] ran without the OS sandbox (no bwrap)",
    ]


def test_colour_only_when_asked() -> None:
    assert "\x1b[32m" in render_report(report(), colour=True)


def test_progress_writes_one_plain_line_per_finished_stage() -> None:
    stream = io.StringIO()
    progress = Progress(stream, colour=False, live=False)
    progress(StageStarted("build", None))
    progress(StageFinished("build", None, "passed", 1.234, "a.whl"))
    progress(StageStarted("install", "3.12.1"))
    progress(StageFinished("install", "3.12.1", "failed", 0.5, "1 failure(s)"))
    progress.close()

    assert stream.getvalue().splitlines() == [
        "ok   build      1.23s  a.whl",
        "FAIL [3.12.1] install    0.50s  1 failure(s)",
    ]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    encoding = "utf-8"

    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_updates_what_is_running_with_its_elapsed_time() -> None:
    stream, clock = Terminal(), Clock()
    progress = Progress(stream, colour=False, live=True, interval=0.01, clock=clock)
    progress(StageStarted("build", None))
    progress(StageStarted("install", "3.12.1"))
    assert stream.getvalue().endswith("\r\x1b[K⠋ build 0.0s, [3.12.1] install 0.0s")

    clock.now += 2.5
    deadline = time.monotonic() + 5
    while "build 2.5s" not in stream.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)  # the ticker redraws on its own, with no event
    assert "build 2.5s, [3.12.1] install 2.5s" in stream.getvalue()

    progress(StageFinished("build", None, "passed", 2.5, "a.whl"))
    progress.close()
    text = stream.getvalue()
    # the finished stage is printed on a cleared line, above the status of what still runs
    assert "\r\x1b[Kok   build      2.50s  a.whl\n" in text
    assert re.search(r"a\.whl\n\r\x1b\[K\S \[3\.12\.1\] install \d\.\ds", text)
    assert text.endswith("\r\x1b[K")  # the status line is gone once the check ends
    assert progress._ticker is not None and not progress._ticker.is_alive()
    frames = set(re.findall(r"\r\x1b\[K(\S) ", text))
    assert len(frames) > 1  # the spinner turns


def test_progress_without_live_updates_never_rewrites_a_line() -> None:
    for colour, live, quiet in ((True, False, False), (False, True, True)):
        # FORCE_COLOR into a log; -q on a terminal
        stream = Terminal()
        progress = Progress(stream, colour=colour, live=live, quiet=quiet)
        progress(StageStarted("build", None))
        progress(StageFinished("build", None, "failed", 1.0, "boom"))
        progress.close()
        assert "\r" not in stream.getvalue()
        assert progress._ticker is None


def test_the_ascii_spinner_where_the_stream_takes_no_unicode() -> None:
    stream = Terminal()
    stream.encoding = "ascii"
    progress = Progress(stream, colour=False, live=True, interval=60)
    progress(StageStarted("build", None))
    progress.close()
    assert "\r\x1b[K| build 0.0s" in stream.getvalue()


@pytest.mark.parametrize(
    ("env", "tty", "colour", "live"),
    [
        ({}, True, True, True),
        ({}, False, False, False),
        ({"NO_COLOR": "1"}, True, False, True),
        ({"NO_COLOR": ""}, True, True, True),  # empty: not set
        ({"FORCE_COLOR": "1"}, False, True, False),
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, True, False, True),
        ({"TERM": "dumb"}, True, False, False),
        ({"TERM": "dumb", "FORCE_COLOR": "1"}, True, True, False),
        ({"CI": "true"}, True, True, False),
        ({"CI": "false"}, True, True, True),
        ({"GITHUB_ACTIONS": "true"}, True, True, False),
    ],
)
def test_colour_and_live_updates_follow_the_environment(
    env: dict[str, str], tty: bool, colour: bool, live: bool
) -> None:
    stream = Terminal() if tty else io.StringIO()
    assert (_terminal.colour(stream, env), _terminal.live(stream, env)) == (colour, live)


def test_what_the_application_did_not_exercise_is_listed_under_its_plugin() -> None:
    tools = (
        ToolRecord("startup", "greeter", None, kind="hook", exercise="passed"),
        ToolRecord("skip_csrf", "greeter", None, kind="hook", exercise="not_exercised"),
        ToolRecord("db", "greeter", None, kind="fixture", exercise="unavailable"),
    )
    base = report()
    text = render_report(replace(base, runs=(replace(base.runs[0], tools=tools),)), colour=False)
    assert "  not exercised: hook:skip_csrf, fixture:db" in text
    assert "hook:startup, hook:skip_csrf, fixture:db" in text  # all registered


def test_plugins_of_one_name_in_two_groups_each_list_their_own_registrations() -> None:
    """A Sphinx theme and a Pygments style, both named ``dusk``."""
    base = report()
    run = replace(
        base.runs[0],
        plugins=(
            PluginRecord("dusk", "pygments.styles", "dusk.style:Dusk", ok=True),
            PluginRecord("dusk", "sphinx.html_themes", "dusk", ok=True),
        ),
        tools=(
            ToolRecord("dusk", "dusk", None, kind="style", group="pygments.styles"),
            ToolRecord("dusk", "dusk", None, kind="theme", group="sphinx.html_themes"),
        ),
    )
    lines = render_report(replace(base, runs=(run,)), colour=False).splitlines()
    assert "  ok   dusk  dusk.style:Dusk  style:dusk" in lines
    assert "  ok   dusk  dusk  theme:dusk" in lines
    assert lines[-1].startswith("PASSED: 2 plugin(s) registering 1 style(s), 1 theme(s)")
