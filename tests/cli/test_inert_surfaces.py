"""Every surface shows the package's text inert: a plugin whose strings carry a carriage return
and a workflow command, an erase-line and a fake PASSED, an OSC 8 hyperlink and a right-to-left
override forges no line, link or reordering in the text report, the progress lines, the GitHub
annotations, the step summaries (a check's and a merge's) and JUnit."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sandboxverify.cli._github import GitHubSources, error_annotations, merged_annotations
from sandboxverify.cli._merge import render_merged
from sandboxverify.cli._render import Progress, render_report
from sandboxverify.pipeline._progress import CommandFinished, PluginLoaded, StageFinished
from sandboxverify.report import Source, junit_xml, merge, merged_junit, merged_summary
from sandboxverify.report import step_summary as summary_of
from sandboxverify.report._model import (
    ArtifactRecord,
    Failure,
    PluginError,
    PluginRecord,
    Report,
    Run,
    Stage,
    ToolRecord,
)
from sandboxverify.report._records import SmokeCall, SmokeRecord
from sandboxverify.sandbox._subprocess import Command, Outcome

CR_COMMAND = "\r::error::forged"
FAKE_PASSED = "\x1b[2K\rPASSED"
HYPERLINK = "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\"
RTL = "safe\u202etxt.exe"
ATTACKS = (CR_COMMAND, FAKE_PASSED, HYPERLINK, RTL)
#: each as the surfaces show it
SHOWN = (
    "\\r::error::forged",
    "\\x1b[2K\\rPASSED",
    "\\x1b]8;;https://evil.example/\\x1b\\click me\\x1b]8;;\\x1b\\",
    "safe\\u202etxt.exe",
)
EVIL = " | ".join(ATTACKS)
#: what must never reach a surface: controls but newline and tab, separators, bidi controls
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def hostile_report() -> Report:
    """A report in which every string the package's code chose carries every attack."""
    run = Run(
        python="3.12.1",
        interpreter="/usr/bin/python3.12",
        ok=False,
        stages=(Stage("build", "passed", 1.0), Stage("probe", "failed", 0.2)),
        plugins=(
            PluginRecord("good" + RTL, "sandboxverify.plugins", "demo.good:setup", ok=True),
            PluginRecord(
                "evil",
                "sandboxverify.plugins",
                "demo.evil:setup" + HYPERLINK,
                ok=False,
                error=PluginError("RuntimeError", EVIL, f"Traceback\n{EVIL}\n", "setup"),
            ),
        ),
        tools=(ToolRecord("tool" + FAKE_PASSED, "good" + RTL, EVIL),),
        smoke=SmokeRecord(
            "smoke.toml",
            ok=False,
            calls=(SmokeCall("tool" + CR_COMMAND, "call_1", 1, 1, text=EVIL),),
        ),
    )
    return Report(
        target=".",
        artifacts=(ArtifactRecord("wheel", "demo.whl", "0" * 64, True),),
        runs=(run,),
        failures=(
            Failure(
                "plugin_load_failed",
                f"plugin 'evil' failed: RuntimeError: {EVIL}\n{FAKE_PASSED}",
                "3.12.1",
                plugin="evil",
                hint="a hint quoting " + HYPERLINK,
                details=f"Traceback\n{EVIL}\n{CR_COMMAND}\n{RTL}",
            ),
        ),
        host="native",
        groups=("sandboxverify.plugins",),
        installer="uv",
        seconds=2.5,
        notes=("a note quoting " + RTL,),
    )


def assert_inert(text: str, *, escaped: bool = True) -> None:
    """No raw control reached ``text``, no line of it starts a workflow command or a forged
    verdict, and (``escaped``) each attack is there to read, escaped."""
    assert not RAW.findall(text), RAW.findall(text)
    for line in text.splitlines():
        assert not line.lstrip().startswith(("::", "PASSED")), line
    if escaped:
        for shown in SHOWN:
            assert shown in text.replace("\\\\", "\\"), shown  # Markdown doubles backslashes


@pytest.mark.parametrize("verbose", [0, 1])
def test_the_text_report(verbose: int) -> None:
    text = render_report(hostile_report(), colour=False, verbose=verbose)
    assert_inert(text)
    assert text.splitlines()[-1].startswith("FAILED: 1 failure(s)")


def test_the_text_report_in_colour_keeps_only_its_own_escape_sequences() -> None:
    text = render_report(hostile_report(), colour=True)
    own = re.compile(r"\x1b\[[0-9]+m")
    assert_inert(own.sub("", text))


def test_the_progress_lines() -> None:
    stream = io.StringIO()
    progress = Progress(stream, colour=False, live=False, verbose=2)
    command = Command(
        argv=["python", "-m", "pip", "install", "demo" + RTL],
        env={},
        cwd=Path("."),
        timeout=1.0,
        log_path=Path("log"),
        label="install",
    )
    progress(CommandFinished("3.12.1", Outcome(command, 1, False, 0.1, f"output\n{EVIL}\n")))
    plugin = hostile_report().runs[0].plugins[1]
    progress(PluginLoaded("3.12.1", plugin, ("tool" + FAKE_PASSED, HYPERLINK)))
    progress(StageFinished("probe", "3.12.1", "failed", 0.2, "1 plugin: " + CR_COMMAND))
    assert_inert(stream.getvalue())


def test_the_github_annotations(tmp_path: Path) -> None:
    sources = GitHubSources(pyproject=None, playbook=None, root=tmp_path)
    [command] = error_annotations(hostile_report(), sources)
    assert command.startswith("::error title=sandboxverify%3A plugin_load_failed [3.12.1]::")
    assert "\n" not in command
    assert_inert(command.split("::", 2)[2])


def test_the_step_summary() -> None:
    assert_inert(summary_of(hostile_report()))


def test_junit() -> None:
    text = junit_xml(hostile_report())
    root = ET.fromstring(text)
    shown = "\n".join(
        [
            *(value for element in root.iter() for value in element.attrib.values()),
            *(element.text or "" for element in root.iter()),
        ]
    )
    assert_inert(shown)


def test_a_merge_of_reports() -> None:
    report = hostile_report()
    merged = merge([Source("job.json", report.to_json(), report)])
    assert_inert(render_merged(merged))
    assert_inert(merged_summary(merged))
    assert_inert(merged_junit(merged), escaped=False)
    for command in merged_annotations(merged):
        assert_inert(command.split("::", 2)[2], escaped=False)
