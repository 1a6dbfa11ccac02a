"""``sandboxverify merge`` given survey results: what is not the shards of one survey is refused
before anything is written (exit 2, the error in a line and a hint); the same file named twice
is read once (the end-to-end tests merge the shards of real surveys)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from sandboxverify.pipeline._survey import plugin_list
from sandboxverify.report import (
    Application,
    PluginResult,
    SideFailure,
    SideResult,
    SurveyHeader,
)
from tests.helpers import CliResult, run_cli

OLD = Application("app", "1.0", "app==1.0", "index")
NEW = Application("app", "2.0", "app==2.0", "index")
PASSED = SideResult("passed", "1.0")
FAILED = SideResult("failed", "2.0", (SideFailure("plugin_load_failed", "boom", "p", "m"),))


def result(name: str, survey_class: str = "ok") -> PluginResult:
    failed = survey_class == "regressed"
    return PluginResult(
        name,
        name,
        "1",
        None,
        "regressed" if failed else "ok",
        "fails with app 2.0" if failed else "passes with both",
        PASSED,
        FAILED if failed else PASSED,
    )


def shard(
    path: Path,
    share: tuple[int, int] | None,
    *names: str,
    candidate: Application = NEW,
    regressed: tuple[str, ...] = (),
    listed: Sequence[str] | None = None,
) -> Path:
    """A results file as ``survey --shard K/N`` leaves it, every plugin of its share checked;
    ``listed``: the whole list it was cut from (``None``: a file that does not say)."""
    whole = plugin_list(listed) if listed is not None else None
    header = SurveyHeader(OLD, candidate, names, share, "3.12.1", "1.0", whole)
    lines = [header.to_json()]
    lines += [result(n, "regressed" if n in regressed else "ok").to_json() for n in names]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def refused(done: CliResult, *said: str) -> None:
    assert done.code == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR ")]
    assert len(errors) == 1, done.stderr
    for text in said:
        assert text in errors[0]
    assert "  hint: " in done.stderr
    assert "Traceback" not in done.stderr


def test_shards_of_two_surveys_are_refused(tmp_path: Path) -> None:
    first = shard(tmp_path / "a" / "survey.jsonl", (1, 2), "p1")
    other = shard(
        tmp_path / "b" / "survey.jsonl", (2, 2), "p2", candidate=replace(NEW, version="2.1")
    )
    out = tmp_path / "merged.json"
    done = run_cli(["merge", str(first), str(other), "--json", str(out)])
    refused(done, "app 1.0 -> app 2.1", "app 1.0 -> app 2.0")
    assert "merge the shards of one survey run" in done.stderr
    assert not out.exists() or json.loads(out.read_text(encoding="utf-8")).get("ok") is not True


def test_survey_results_beside_a_check_report_are_refused(tmp_path: Path) -> None:
    results = shard(tmp_path / "survey.jsonl", None, "p1")
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"version": 1, "ok": True, "runs": []}), encoding="utf-8")
    for order in ([results, report], [report, results]):
        done = run_cli(["merge", *map(str, order)])
        refused(done, f"{report} is not a survey's results")
    # found in one downloaded directory, the same
    refused(run_cli(["merge", str(tmp_path)]), "is not a survey's results")


@pytest.mark.parametrize(("share", "said"), [((1, 2), "shard 1/2"), (None, "the whole survey")])
def test_the_same_shard_in_two_files_is_refused(
    tmp_path: Path, share: tuple[int, int] | None, said: str
) -> None:
    one = shard(tmp_path / "a" / "survey.jsonl", share, "p1")
    again = shard(tmp_path / "b" / "survey.jsonl", share, "p1")
    refused(run_cli(["merge", str(one), str(again)]), f"{said} is given twice: {one} and {again}")


def test_an_unsharded_run_beside_shards_is_refused(tmp_path: Path) -> None:
    whole = shard(tmp_path / "a" / "survey.jsonl", None, "p1", "p2")
    part = shard(tmp_path / "b" / "survey.jsonl", (1, 2), "p1")
    for order in ([whole, part], [part, whole]):
        done = run_cli(["merge", *map(str, order)])
        refused(done, f"{whole} holds a whole survey (no --shard), {part} a shard of one")


def test_shards_of_two_splits_are_refused(tmp_path: Path) -> None:
    halves = shard(tmp_path / "a" / "survey.jsonl", (1, 2), "p1")
    thirds = shard(tmp_path / "b" / "survey.jsonl", (2, 3), "p2")
    refused(run_cli(["merge", str(halves), str(thirds)]), "different splits", "N: 2, 3")


@pytest.mark.parametrize(
    ("other_list", "said"),
    [
        (["p2", "p4"], "(2 plugins against 3)"),
        (["p1", "p2", "p4"], "(both of 3 plugins, not the same ones)"),
    ],
)
def test_shards_of_two_plugin_lists_are_refused(
    tmp_path: Path, other_list: list[str], said: str
) -> None:
    """Shard 1/2 of one list and shard 2/2 of another share everything else: merged, the
    survey would lack, unsaid, the plugins of each list's other shard."""
    first = shard(tmp_path / "a" / "survey.jsonl", (1, 2), "p1", listed=["p1", "p2", "p3"])
    other = shard(tmp_path / "b" / "survey.jsonl", (2, 2), "p2", listed=other_list)
    out = tmp_path / "merged.json"
    done = run_cli(["merge", str(first), str(other), "--json", str(out)])
    refused(done, f"{other} is a shard of another plugin list than {first}", said)
    assert not out.exists() or json.loads(out.read_text(encoding="utf-8")).get("ok") is not True


def test_shards_of_one_list_however_ordered_or_spelled_are_merged(tmp_path: Path) -> None:
    first = shard(tmp_path / "a" / "survey.jsonl", (1, 2), "p1", listed=["p1", "Sample_Two"])
    second = shard(tmp_path / "b" / "survey.jsonl", (2, 2), "p2", listed=["sample-two", "P1"])
    # written before the list was recorded: taken as it comes
    older = shard(tmp_path / "c" / "survey.jsonl", (2, 2), "p2")
    for pair in ([first, second], [first, older]):
        done = run_cli(["merge", *map(str, pair)])
        assert done.code == 0, done.stderr


def test_the_same_file_named_twice_is_merged_once(tmp_path: Path) -> None:
    first = shard(tmp_path / "a" / "survey.jsonl", (1, 2), "p1", "p3", regressed=("p3",))
    second = shard(tmp_path / "b" / "survey.jsonl", (2, 2), "p2")
    out = tmp_path / "merged.json"
    done = run_cli(["merge", str(first), str(tmp_path / "a"), str(second), "--json", str(out)])
    assert done.code == 1, done.stderr  # p3 regressed
    document = json.loads(out.read_text(encoding="utf-8"))
    assert [s["file"] for s in document["shards"]] == [str(first), str(second)]
    assert sorted(p["name"] for p in document["plugins"]) == ["p1", "p2", "p3"]
    assert document["counts"]["regressed"] == 1
    assert document["complete"]
