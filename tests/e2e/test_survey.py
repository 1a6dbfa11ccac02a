"""``sandboxverify survey`` end to end, offline: the releases of ``svfix-survey-app`` (2.0 renames a
hook) and the plugins' sdists served from one local directory through ``--find-links``, each
plugin checked for real with both releases; the results file resumed (errors checked again when
asked; another survey's refused), interrupted with a real SIGTERM and a real Ctrl-C, split into
shards and merged back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.sandbox._toolchain import find_uv
from tests.helpers import fixture, run_cli, schema_errors

pytestmark = pytest.mark.slow

APPLICATION = "svfix-survey-app"
#: each plugin fixture and the class a survey of 1.0.0 -> 2.0.0 gives it
EXPECTED = {
    "svfix-survey-plugin-steady": "ok",
    "svfix-survey-plugin-regresses": "regressed",
    "svfix-survey-plugin-fixed": "fixed",
    "svfix-survey-plugin-broken": "broken",
    "svfix-survey-plugin-unbuildable": "error",
}


@pytest.fixture(scope="module")
def links(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local "index": both releases of the application as wheels, each plugin as its sdist."""
    uv = find_uv()
    if uv is None:  # pragma: no cover - the test extra installs uv
        pytest.fail("uv is not installed; install the test extra")
    out = tmp_path_factory.mktemp("links")
    work = tmp_path_factory.mktemp("sources")
    builds = [(f"survey-app/{v}", "--wheel") for v in ("1.0", "2.0")]
    builds += [(name.removeprefix("svfix-"), "--sdist") for name in EXPECTED]
    for name, kind in builds:
        source = work / name.replace("/", "-")
        subprocess.run(["cp", "-r", str(fixture(name)), str(source)], check=True)
        subprocess.run(
            [uv, "build", kind, "-q", "--python", sys.executable, "-o", str(out), str(source)],
            check=True,
            timeout=300,
        )
    return out


def survey_args(links: Path, results: Path, *extra: str) -> list[str]:
    return [
        "survey",
        *EXPECTED,
        "--application",
        f"{APPLICATION}==2.0.0",
        "--baseline",
        f"{APPLICATION}==1.0.0",
        "--find-links",
        str(links),
        "--results",
        str(results),
        *extra,
    ]


def offline() -> dict[str, str]:
    """No index but the local directory: nothing comes from PyPI except through its cache."""
    env = dict(os.environ)
    env["UV_OFFLINE"] = "1"
    return env


def lines(results: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]


def assert_valid(document: Any) -> None:
    errors = schema_errors("survey-v1", document, closed=True)
    assert not errors, "not a survey v1 document: " + "; ".join(errors)


def classes(document: dict[str, Any]) -> dict[str, str]:
    return {plugin["name"]: plugin["class"] for plugin in document["plugins"]}


@pytest.fixture(scope="module")
def whole(links: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One unsharded survey of every plugin: its results file and its JSON document."""
    root = tmp_path_factory.mktemp("whole")
    results, document = root / "survey.jsonl", root / "survey.json"
    html = root / "survey.html"
    done = run_cli(
        survey_args(links, results, "-j", "2", "--json", str(document), "--html", str(html)),
        env=offline(),
    )
    assert done.code == 1, done.stdout + done.stderr  # a plugin regressed
    return results, json.loads(document.read_text(encoding="utf-8"))


def test_each_plugin_is_classified_by_its_two_checks(whole: tuple[Path, dict[str, Any]]) -> None:
    results, document = whole
    assert_valid(document)
    assert classes(document) == EXPECTED
    assert document["counts"] == {
        "regressed": 1,
        "error": 1,
        "fixed": 1,
        "broken": 1,
        "ok": 1,
        "not_checked": 0,
    }
    assert not document["ok"]
    assert document["complete"]
    # regressions first
    assert document["plugins"][0]["class"] == "regressed"
    for line in lines(results):
        assert_valid(line)


def test_a_regression_names_its_failure_and_the_candidate(
    whole: tuple[Path, dict[str, Any]],
) -> None:
    _, document = whole
    (regressed,) = [p for p in document["plugins"] if p["class"] == "regressed"]
    assert "svfix-survey-app 2.0.0" in regressed["reason"]
    assert "plugin_load_failed" in regressed["reason"]
    assert "register_greetings" in regressed["reason"]
    assert regressed["artifact"]["kind"] == "sdist"
    assert regressed["baseline"]["status"] == "passed"
    assert regressed["baseline"]["application_version"] == "1.0.0"
    assert regressed["candidate"]["application_version"] == "2.0.0"
    assert [f["code"] for f in regressed["candidate"]["failures"]] == ["plugin_load_failed"]


def test_a_plugin_that_cannot_be_built_is_an_error_said_to_be_none_of_the_applications(
    whole: tuple[Path, dict[str, Any]],
) -> None:
    _, document = whole
    (error,) = [p for p in document["plugins"] if p["class"] == "error"]
    assert error["name"] == "svfix-survey-plugin-unbuildable"
    assert "its build failed (the application takes no part in it)" in error["reason"]
    (broken,) = [p for p in document["plugins"] if p["class"] == "broken"]
    assert broken["same_cause"] is True


def test_a_rerun_with_the_same_results_file_checks_nothing_again(
    links: Path, whole: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    results, document = whole
    copy = tmp_path / "survey.jsonl"
    copy.write_bytes(results.read_bytes())
    again = tmp_path / "again.json"
    done = run_cli(survey_args(links, copy, "--json", str(again)), env=offline())
    assert done.code == 1, done.stderr
    assert "(5 done earlier, kept)" in done.stdout
    assert "[1/" not in done.stdout  # no plugin was checked again
    assert copy.read_bytes() == results.read_bytes()
    assert classes(json.loads(again.read_text(encoding="utf-8"))) == classes(document)


def test_shards_merged_are_the_unsharded_survey(
    links: Path, whole: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    whole_results, document = whole
    listed = lines(whole_results)[0]["list"]
    assert listed["plugins"] == len(EXPECTED)
    shares: list[set[str]] = []
    for k in (1, 2, 3):
        directory = tmp_path / f"survey-shard-{k}"  # as download-artifact lays them out
        directory.mkdir()
        results = directory / "survey.jsonl"
        done = run_cli(survey_args(links, results, "--shard", f"{k}/3"), env=offline())
        assert done.code in (0, 1), done.stderr
        shares.append({line["name"] for line in lines(results)[1:]})
        assert lines(results)[0]["list"] == listed  # each shard says what it was cut from
    # every plugin in exactly one shard
    assert sorted(n for share in shares for n in share) == sorted(EXPECTED)
    merged = tmp_path / "merged.json"
    done = run_cli(["merge", str(tmp_path), "--json", str(merged)])
    assert done.code == 1, done.stderr
    result = json.loads(merged.read_text(encoding="utf-8"))
    assert_valid(result)
    assert classes(result) == classes(document)
    assert result["counts"] == document["counts"]
    assert result["complete"]
    assert [s["shard"]["count"] for s in result["shards"]] == [3, 3, 3]


def test_merge_says_which_shard_is_missing(links: Path, tmp_path: Path) -> None:
    results = tmp_path / "one" / "survey.jsonl"
    results.parent.mkdir()
    run_cli(survey_args(links, results, "--shard", "1/2"), env=offline())
    merged = tmp_path / "merged.json"
    done = run_cli(["merge", str(results), "--json", str(merged)])
    assert done.code == 1, done.stderr
    document = json.loads(merged.read_text(encoding="utf-8"))
    assert document["missing_shards"] == ["2/2"]
    assert not document["complete"]


def test_a_last_line_cut_short_is_dropped_and_its_plugin_checked_again(
    links: Path, whole: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    results, document = whole
    data = results.read_bytes()
    last = data.rstrip(b"\n").rsplit(b"\n", 1)[1]
    cut = json.loads(last)["name"]
    copy = tmp_path / "survey.jsonl"
    copy.write_bytes(data[: len(data) - len(last) // 2 - 1])  # killed while writing it
    done = run_cli(survey_args(links, copy), env=offline())
    assert done.code == 1, done.stderr
    assert "(4 done earlier, kept)" in done.stdout
    (checked,) = [line for line in done.stdout.splitlines() if line.startswith("[")]
    assert cut in checked
    now = lines(copy)  # every line whole again
    assert sorted(line["name"] for line in now[1:]) == sorted(EXPECTED)
    assert {line["name"]: line["class"] for line in now[1:]} == classes(document)


def test_retry_errors_checks_again_only_the_plugins_that_were_errors(
    links: Path, whole: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    results, _ = whole
    copy = tmp_path / "survey.jsonl"
    copy.write_bytes(results.read_bytes())
    earlier = {line.get("name"): line for line in lines(results)}
    done = run_cli(survey_args(links, copy, "--retry-errors"), env=offline())
    assert done.code == 1, done.stderr
    assert "(4 done earlier, kept)" in done.stdout
    (checked,) = [line for line in done.stdout.splitlines() if line.startswith("[")]
    assert checked.startswith("[1/1] error")
    assert "svfix-survey-plugin-unbuildable" in checked
    now = {line.get("name"): line for line in lines(copy)}
    assert sorted(n for n in now if n) == sorted(EXPECTED)  # each once
    for name, survey_class in EXPECTED.items():  # the others kept as they were, line for line
        assert (now[name] == earlier[name]) is (survey_class != "error"), name
    assert now["svfix-survey-plugin-unbuildable"]["class"] == "error"


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (  # the releases the other way round: another survey
            ["--application", f"{APPLICATION}==1.0.0", "--baseline", f"{APPLICATION}==2.0.0"],
            "holds another survey: svfix-survey-app 1.0.0 -> svfix-survey-app 2.0.0",
        ),
        (["--shard", "1/2"], "holds the results of another shard"),
    ],
    ids=["other-releases", "other-shard"],
)
def test_a_results_file_of_another_survey_is_refused_before_any_plugin_is_checked(
    links: Path, whole: tuple[Path, dict[str, Any]], tmp_path: Path, extra: list[str], said: str
) -> None:
    results, _ = whole
    copy = tmp_path / "survey.jsonl"
    copy.write_bytes(results.read_bytes())
    done = run_cli([*survey_args(links, copy), *extra], env=offline())
    assert done.code == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR ")]
    assert len(errors) == 1, done.stderr
    assert said in errors[0]
    assert "  hint: give each" in done.stderr
    assert "survey of" not in done.stdout  # it stopped before it started
    assert copy.read_bytes() == results.read_bytes()


def _survey_process(links: Path, results: Path, report: Path) -> list[str]:
    """The survey as a terminal starts it: a run in the background (``&``) hands its children
    SIGINT ignored, which Python keeps; a terminal's Ctrl-C reaches a default handler."""
    return [
        sys.executable,
        "-c",
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from sandboxverify.cli import main; sys.argv[0] = 'sandboxverify'; main()",
        *survey_args(links, results, "-j", "1", "--json", str(report)),
    ]


@pytest.mark.parametrize(
    ("sig", "why"), [(signal.SIGTERM, "terminated"), (signal.SIGINT, "interrupted")]
)
def test_a_stopped_survey_leaves_a_whole_results_file_that_a_rerun_completes(
    links: Path,
    whole: tuple[Path, dict[str, Any]],
    tmp_path: Path,
    sig: signal.Signals,
    why: str,
) -> None:
    _, document = whole
    results, report = tmp_path / "survey.jsonl", tmp_path / "stopped.json"
    with subprocess.Popen(
        _survey_process(links, results, report),
        env=offline(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    ) as proc:
        deadline = time.monotonic() + 300
        while (not results.is_file() or len(lines(results)) < 2) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err
    kept = lines(results)  # every line whole JSON
    for line in kept:
        assert_valid(line)
    assert 2 <= len(kept) <= len(EXPECTED)  # the header and what finished, nothing half-written
    # the report asked for is written, marked as stopped, with what was not checked
    stopped = json.loads(report.read_text(encoding="utf-8"))
    assert_valid(stopped)
    assert stopped["stopped"] == why
    assert not stopped["ok"]
    assert len(stopped["plugins"]) + len(stopped["not_checked"]) == len(EXPECTED)
    done = run_cli(survey_args(links, results, "--json", str(tmp_path / "s.json")), env=offline())
    assert done.code == 1, done.stderr
    names = [line["name"] for line in lines(results)[1:]]
    assert sorted(names) == sorted(EXPECTED)  # each once
    assert classes(json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))) == classes(
        document
    )
