"""The records of stages imports, scripts and smoke: the JSON of report v1 they write, read back
as they were, and read from what the runtime really returns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Union

import jsonschema
import pytest

from sandboxverify.report._excused import ExcusedModule, ExtraRecord
from sandboxverify.report._load import report_from_json
from sandboxverify.report._model import Report, Run, Stage
from sandboxverify.report._records import (
    AllowedFailure,
    ImportFailure,
    ImportsRecord,
    OutsideModule,
    ScriptRecord,
    SkippedModule,
    SmokeCall,
    SmokeError,
    SmokeRecord,
)
from sandboxverify.runtime._smoke import smoke
from sandboxverify.runtime.harness._plugins import HOST_ENV
from sandboxverify.stages.playbook import parse_playbook
from tests.helpers import assert_valid_report, schema, schema_errors

Record = Union[ImportsRecord, ScriptRecord, SmokeRecord]

CALL = SmokeCall("echo", "call_1", 1, 1, text="hi", text_length=2)
DIVERGED = SmokeCall("echo", "call_2", 2, 1, is_error=True, mocked=True, text="", diverged=True)
IMPORTS = ImportsRecord(
    modules=4,
    imported=("pkg", "pkg.a"),
    failed=(
        ImportFailure("pkg.b", "ModuleNotFoundError", "No module named 'yaml'"),
        ImportFailure("pkg.c", "RuntimeError", "no config", reported_by="plugin 'p'"),
    ),
    allowed_failures=(AllowedFailure("pkg.win", "ImportError", "no winreg", "pkg.win*"),),
    skipped=(SkippedModule("pkg.__main__", "--import-skip *.__main__"),),
    outside=(
        OutsideModule("helper", "/src/helper.py", "pkg.pth", shipped=True),
        OutsideModule("other", "/src/other.py"),
    ),
    missing_files=("pkg/data.json",),
    seconds=0.25,
    excused=(
        ExcusedModule("pkg.hist", "extra", "imports with pkg[plot]", extra="plot"),
        ExcusedModule("pkg.tests.t", "test", "needs pytest"),
    ),
    extras=(
        ExtraRecord("plot", "pkg[plot]", ("pkg.hist",), (), True, ("pkg.hist",), None, 0.5),
        ExtraRecord("gui", "pkg[gui]", ("pkg.gui",), ("pkg.x",), False, (), "no wheel", 0.1),
    ),
)
DIED = ImportsRecord(
    modules=3,
    imported=("a",),
    seconds=1.5,
    finished=False,
    stopped_at="a.b",
    not_checked=("a.c",),
)
SCRIPT = ScriptRecord("demo", "demo.cli:main", "console_scripts", True, "failed", 2, 0.125)
RAN = SmokeRecord(
    "smoke.toml",
    ok=False,
    error=SmokeError("expect_mismatch", "turn 2, action 1: no match", 2, 1, "details"),
    sessions=1,
    turns=2,
    tool_calls=2,
    ui_calls=1,
    calls=(CALL, DIVERGED),
    trace="/sandbox/smoke/trace.jsonl",
    seconds=0.5,
)
SCRIPTED = SmokeRecord("smoke.py", ok=True, script="smoke.py", sessions=2, tool_calls=2)
CRASHED = SmokeRecord(
    "smoke.toml", ok=False, error=SmokeError("timeout", "did not finish"), reported=False
)
RECORDS: dict[str, Record] = {
    "imports": IMPORTS,
    "imports-died": DIED,
    "imports-died-before-a-module": ImportsRecord(finished=False),
    "imports-not-run": ImportsRecord(),
    "script": SCRIPT,
    "script-not-installed": ScriptRecord("gui", "demo.gui:main", "gui_scripts"),
    "smoke": RAN,
    "smoke-script": SCRIPTED,
    "smoke-crashed": CRASHED,
}
#: the ``$defs`` of report-v1.schema.json each record is
DEFINITION = {ImportsRecord: "imports", ScriptRecord: "script", SmokeRecord: "smoke"}


@pytest.mark.parametrize("record", RECORDS.values(), ids=list(RECORDS))
def test_a_record_reads_back_as_it_was_written(record: Record) -> None:
    document = json.loads(json.dumps(record.to_json()))
    assert type(record).from_json(document) == record


@pytest.mark.parametrize("record", RECORDS.values(), ids=list(RECORDS))
def test_a_record_matches_its_definition_in_the_report_schema(record: Record) -> None:
    report = schema("report-v1")
    definition = {**report["$defs"][DEFINITION[type(record)]], "$defs": report["$defs"]}
    definition["$schema"] = report["$schema"]
    assert schema_errors_of(definition, record.to_json()) == []


def schema_errors_of(definition: dict[str, Any], document: Any) -> list[str]:
    validator = jsonschema.Draft202012Validator(definition)
    return [error.message for error in validator.iter_errors(document)]


def test_the_imports_record_writes_the_fields_of_report_v1_in_order() -> None:
    assert IMPORTS.to_json() == {
        "modules": 4,
        "imported": ["pkg", "pkg.a"],
        "failed": [
            {"module": "pkg.b", "type": "ModuleNotFoundError", "message": "No module named 'yaml'"},
            {
                "module": "pkg.c",
                "type": "RuntimeError",
                "message": "no config",
                "reported_by": "plugin 'p'",
            },
        ],
        "allowed_failures": [
            {
                "module": "pkg.win",
                "type": "ImportError",
                "message": "no winreg",
                "allowed_by": "pkg.win*",
            }
        ],
        "skipped": [{"module": "pkg.__main__", "reason": "--import-skip *.__main__"}],
        "outside": [
            {"module": "helper", "file": "/src/helper.py", "pth": "pkg.pth", "shipped": True},
            {"module": "other", "file": "/src/other.py"},
        ],
        "missing_files": ["pkg/data.json"],
        "excused": [
            {
                "module": "pkg.hist",
                "reason": "extra",
                "detail": "imports with pkg[plot]",
                "extra": "plot",
            },
            {"module": "pkg.tests.t", "reason": "test", "detail": "needs pytest"},
        ],
        "extras": [
            {
                "name": "plot",
                "requirement": "pkg[plot]",
                "modules": ["pkg.hist"],
                "tried": [],
                "installed": True,
                "imported": ["pkg.hist"],
                "error": None,
                "seconds": 0.5,
            },
            {
                "name": "gui",
                "requirement": "pkg[gui]",
                "modules": ["pkg.gui"],
                "tried": ["pkg.x"],
                "installed": False,
                "imported": [],
                "error": "no wheel",
                "seconds": 0.1,
            },
        ],
        "seconds": 0.25,
    }
    # stopped_at and not_checked only after a crash or hang, before seconds
    assert list(DIED.to_json()) == [
        *("modules", "imported", "failed", "allowed_failures", "skipped", "outside"),
        *("missing_files", "excused", "extras", "stopped_at", "not_checked", "seconds"),
    ]
    assert ImportsRecord(finished=False).to_json()["stopped_at"] is None


def test_a_run_without_the_imports_stage_writes_an_empty_record_not_null() -> None:
    run = Run("3.12.1", "/usr/bin/python3.12", ok=True, stages=(Stage("build", "passed", 1.0),))
    assert run.to_json()["imports"] == {
        "modules": 0,
        "imported": [],
        "failed": [],
        "allowed_failures": [],
        "skipped": [],
        "outside": [],
        "missing_files": [],
        "excused": [],
        "extras": [],
        "seconds": 0.0,
    }
    assert run.to_json()["scripts"] == [] and run.to_json()["smoke"] is None


def test_the_script_and_smoke_records_write_the_fields_of_report_v1_in_order() -> None:
    assert SCRIPT.to_json() == {
        "name": "demo",
        "value": "demo.cli:main",
        "group": "console_scripts",
        "exists": True,
        "help": "failed",
        "exit_code": 2,
        "seconds": 0.125,
    }
    assert list(RAN.to_json()) == [
        *("playbook", "ok", "error", "sessions", "turns", "tool_calls", "ui_calls", "calls"),
        *("trace", "seconds"),
    ]
    assert list(SCRIPTED.to_json())[:4] == ["playbook", "ok", "error", "script"]
    assert RAN.to_json()["calls"][1]["diverged"] is True
    assert "diverged" not in RAN.to_json()["calls"][0]
    # a run that never reported: what stopped it, and nothing it did not do
    assert CRASHED.to_json() == {
        "playbook": "smoke.toml",
        "ok": False,
        "error": {"code": "timeout", "message": "did not finish"},
    }


def test_reading_is_lenient_as_for_the_rest_of_a_report() -> None:
    """A field an older or newer sandboxverify did not write takes its default."""
    assert ImportsRecord.from_json({"modules": 2, "new": 1}) == ImportsRecord(modules=2)
    assert ScriptRecord.from_json({"name": "x", "help": "later"}) == ScriptRecord("x", "", "")
    assert SmokeRecord.from_json({"playbook": "p", "ok": True}) == SmokeRecord(
        "p", ok=True, reported=False
    )


def runtime_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What the runtime's smoke action returns, as the host reads it off the side channel."""
    monkeypatch.setenv(HOST_ENV, "native")  # the action sets it; restored after the test
    plugins = ["tests.runtime.test_smoke:echo_plugin"]

    def spec(actions: str) -> dict[str, Any]:
        return parse_playbook(f"[[turns]]\nprompt = 'x'\nactions = [{actions}]\n", "s.toml")

    script = tmp_path / "play.py"
    script.write_text(
        "from sandboxverify.harness import call, create_test_session, say, when\n"
        f"with create_test_session({plugins!r}) as t:\n"
        "    t.run(when('x', [call('echo', {'text': 'a'}), say('y')]))\n"
    )
    requests: list[dict[str, Any]] = [
        {"spec": spec("{ call = 'echo', params = { text = 'hi' } }, { say = 'ok' }")},
        {"spec": spec("{ call = 'echo', params = { text = 'hi' }, expect = 'no' }")},
        {"spec": spec("{ say = 'just talking' }")},
        {"spec": spec("{ call = 'echo', params = { text = 'hi' } }, { say = 'ok' }"), "trace": ""},
    ]
    results = [smoke({**request, "plugins": plugins}) for request in requests]
    results.append(smoke({"script": str(script)}))
    return [{"playbook": "smoke", **result, "seconds": 0.5} for result in results]


def test_the_record_of_a_real_smoke_run_is_what_the_runtime_returned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for result in runtime_results(tmp_path, monkeypatch):
        record = SmokeRecord.from_json(result)
        assert record.to_json() == result
        assert list(record.to_json()) == list(result)


def test_a_report_of_real_records_validates_and_reads_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tuple(
        Run(
            f"3.12.{index}",
            "/usr/bin/python3.12",
            ok=False,
            stages=(Stage("smoke", "failed", 0.5),),
            smoke=SmokeRecord.from_json(result),
            imports=record if isinstance(record, ImportsRecord) else None,
            scripts=(SCRIPT,),
        )
        for index, (result, record) in enumerate(
            zip(runtime_results(tmp_path, monkeypatch), [IMPORTS, DIED, None, None, None])
        )
    )
    report = Report(".", (), runs, (), "auto", (), "uv", 1.0)
    document = report.to_json()
    assert_valid_report(document)  # closed: no field the schema does not list
    loaded = report_from_json(json.loads(json.dumps(document)))
    assert loaded.to_json() == document
    # a run whose stage imports did not run reads back with the empty record it wrote
    assert [(r.smoke, r.scripts) for r in loaded.runs] == [(r.smoke, r.scripts) for r in runs]
    assert [r.imports for r in loaded.runs] == [IMPORTS, DIED, *[ImportsRecord()] * 3]
    assert schema_errors("report-v1", document) == []
