"""How a survey reads its plugin list and splits it into shards, and how it classifies a plugin
from its two checks."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from sandboxverify._errors import UsageError
from sandboxverify.options import parse_shard
from sandboxverify.pipeline._survey import in_shard, plugin_requirements
from sandboxverify.report import Application, SideFailure, SideResult, classify

PLUGINS = [f"plugin-{n}" for n in range(200)] + ["datasette-x[extra]>=1", "pytest-y==2.0"]
OLD = Application("app", "1.0", "app==1.0", "index")
NEW = Application("app", "2.0", "app==2.0", "index")


def test_every_plugin_is_in_exactly_one_shard_whatever_the_order() -> None:
    shuffled = random.Random(7).sample(PLUGINS, len(PLUGINS))
    for count in (1, 2, 3, 7):
        shards = [[p for p in PLUGINS if in_shard(p, (k, count))] for k in range(1, count + 1)]
        again = [[p for p in shuffled if in_shard(p, (k, count))] for k in range(1, count + 1)]
        assert sorted(p for shard in shards for p in shard) == sorted(PLUGINS)
        assert [sorted(s) for s in shards] == [sorted(s) for s in again]
        assert all(shard for shard in shards)  # 202 plugins: no shard left empty


def test_a_requirement_spelled_another_way_lands_in_the_same_shard() -> None:
    for k in (1, 2, 3, 4, 5):
        assert in_shard("Pytest_Mock==3.14", (k, 5)) == in_shard("pytest-mock==3.14", (k, 5))


def test_shard_values() -> None:
    assert parse_shard("2/4") == (2, 4)
    assert parse_shard("0/4") is None
    assert parse_shard("5/4") is None
    assert parse_shard("x") is None


def test_a_file_of_requirements_with_comments_and_each_plugin_once(tmp_path: Path) -> None:
    listed = tmp_path / "plugins.txt"
    listed.write_text("# plugins\npytest-mock  # mocks\n\npytest_mock\nllm-gpt4all==0.4\n")
    assert plugin_requirements([str(listed), "flake8-bugbear"]) == [
        "pytest-mock",
        "llm-gpt4all==0.4",
        "flake8-bugbear",
    ]


@pytest.mark.parametrize("given", ["not a requirement!", "x @ https://example.org/x.tar.gz"])
def test_what_is_no_plugin_requirement_is_a_usage_error(given: str) -> None:
    with pytest.raises(UsageError):
        plugin_requirements([given])


PASSED = SideResult("passed", "1.0")
LOAD = SideResult("failed", "2.0", (SideFailure("plugin_load_failed", "x", "p", "m"),))
EMPTY = SideResult("failed", "2.0", (SideFailure("no_plugins", "y", None, None),))
ERROR = SideResult("error", error="its build failed")


@pytest.mark.parametrize(
    ("baseline", "candidate", "expected", "same"),
    [
        (PASSED, PASSED, "ok", None),
        (PASSED, LOAD, "regressed", None),
        (LOAD, PASSED, "fixed", None),
        (LOAD, LOAD, "broken", True),
        (LOAD, EMPTY, "broken", False),
        (ERROR, PASSED, "error", None),
        (PASSED, ERROR, "error", None),
    ],
)
def test_classes(
    baseline: SideResult, candidate: SideResult, expected: str, same: bool | None
) -> None:
    survey_class, reason, same_cause = classify(baseline, candidate, (OLD, NEW))
    assert (survey_class, same_cause) == (expected, same)
    if expected == "regressed":
        assert "app 2.0" in reason
        assert "plugin_load_failed" in reason
    if expected == "error":
        assert "its build failed" in reason
