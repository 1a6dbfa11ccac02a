"""The public API: every name the package exports resolves, the events ``check(options,
on_event)`` sends are exported and documented, and the README's example of an ``on_event``
callable runs."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any, get_args

import pytest

import sandboxverify
import sandboxverify.pipeline
from sandboxverify.pipeline import _check
from sandboxverify.pipeline import _progress as _events
from sandboxverify.report._model import PluginError, PluginRecord
from tests.helpers import ROOT

EVENTS = ("CommandFinished", "IsolationChosen", "PluginLoaded", "StageFinished", "StageStarted")


def library_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^### As a library\n(.*?)(?=^## )", text, re.M | re.S)
    assert match
    return match.group(1)


@pytest.mark.parametrize("name", sandboxverify.__all__)
def test_every_exported_name_resolves(name: str) -> None:
    assert getattr(sandboxverify, name) is not None


def test_the_package_root_imports_nothing_of_the_host_side_until_asked() -> None:
    code = (
        "import sys, sandboxverify; "
        "print(sorted(m for m in sys.modules if m.startswith('sandboxverify.')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert loaded.strip() == "['sandboxverify._version']"


def test_the_events_are_public_in_the_root_and_in_the_pipeline_package() -> None:
    events = (*EVENTS, "Event", "EventSink")
    survey = ("survey", "finished", "SurveyEvent", "SurveyStarted", "PluginSurveyed")
    assert sorted(sandboxverify.pipeline.__all__) == sorted(
        (*events, "check", "record_in_sandbox", *survey)
    )
    for name in events:
        assert name in sandboxverify.__all__
        assert getattr(sandboxverify, name) is getattr(_events, name)
        assert getattr(sandboxverify.pipeline, name) is getattr(_events, name)
    assert {event.__name__ for event in get_args(_events.Event)} == set(EVENTS)
    with pytest.raises(AttributeError):
        sandboxverify.pipeline.nothing  # noqa: B018


def test_the_readme_documents_every_event_and_its_fields() -> None:
    section = library_section()
    for name in (*EVENTS, "Event", "EventSink"):
        assert f"`{name}`" in section, name
    for event in get_args(_events.Event):
        for field in event.__dataclass_fields__:
            assert f"`{field}`" in section, f"{event.__name__}.{field}"


def test_the_readme_example_of_on_event_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    [example] = [
        block
        for block in re.findall(r"```python\n(.*?)```", library_section(), re.S)
        if "def on_event" in block
    ]
    broken = PluginRecord(
        "greet", "g", "pkg:setup", ok=False, error=PluginError("E", "bad", "", "")
    )

    def fake_check(options: Any, on_event: _events.EventSink = _events.ignore) -> str:
        on_event(_events.StageStarted("build", None))
        on_event(_events.StageFinished("build", None, "passed", 1.0, "built"))
        on_event(_events.PluginLoaded("3.12.1", broken, ()))
        on_event(_events.StageFinished("probe", "3.12.1", "failed", 0.5, "1 plugin(s) failed"))
        return "report"

    monkeypatch.setattr(_check, "check", fake_check)
    namespace: dict[str, Any] = {}
    exec(compile(example, "README.md", "exec"), namespace)  # our own README

    assert namespace["report"] == "report"
    assert capsys.readouterr().out.splitlines() == [
        "build: build passed (built)",
        "plugin greet failed: bad",
        "3.12.1: probe failed (1 plugin(s) failed)",
    ]
