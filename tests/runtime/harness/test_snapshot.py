from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from sandboxverify.runtime.harness import _snapshot as snapshots
from sandboxverify.runtime.harness._snapshot import (
    SnapshotMismatch,
    SnapshotMissing,
    SnapshotOutcome,
    assert_snapshot,
    in_ci,
    snapshot_path,
    update_requested,
)

VALUE = {"tool": "search", "args": {"query": "café", "limit": 3}, "ok": True, "result": None}
CANONICAL = """{
  "args": {
    "limit": 3,
    "query": "café"
  },
  "ok": true,
  "result": null,
  "tool": "search"
}
"""


def test_created_then_matched(tmp_path: Path) -> None:
    path = tmp_path / "snaps" / "test_a" / "000.json"
    assert assert_snapshot(VALUE, path, update=False, ci=False) == SnapshotOutcome(path, "created")
    assert path.read_text(encoding="utf-8") == CANONICAL
    assert path.read_bytes() == CANONICAL.encode("utf-8")  # "\n" line ends on every platform
    assert assert_snapshot(VALUE, path, update=False, ci=False).status == "matched"
    assert assert_snapshot(VALUE, path, update=False, ci=True).status == "matched"
    assert [p.name for p in path.parent.iterdir()] == ["000.json"]  # no temporary file left


def test_key_order_is_deterministic(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    assert_snapshot({"b": 1, "a": {"d": 2, "c": 3}}, path, update=False, ci=False)
    reordered = {"a": {"c": 3, "d": 2}, "b": 1}
    assert assert_snapshot(reordered, path, update=False, ci=False).status == "matched"
    assert path.read_text() == '{\n  "a": {\n    "c": 3,\n    "d": 2\n  },\n  "b": 1\n}\n'


def test_a_hand_formatted_snapshot_with_the_same_content_matches(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text(
        '{"tool":"search","ok":true,"result":null,\r\n"args":{"limit":3,"query":"café"}}'
    )
    assert assert_snapshot(VALUE, path, update=False, ci=False).status == "matched"


def test_mismatch_shows_a_diff_and_leaves_the_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    assert_snapshot(VALUE, path, update=False, ci=False)
    changed = {**VALUE, "ok": False}
    with pytest.raises(SnapshotMismatch) as caught:
        assert_snapshot(changed, path, update=False, ci=False)
    message = str(caught.value)
    assert message.startswith(f"snapshot {path} does not match:\n")
    assert "--- expected (snapshot)\n+++ actual\n" in message
    assert '\n-  "ok": true,\n+  "ok": false,\n' in message
    assert message.endswith(
        "run with --update-snapshots or SANDBOXVERIFY_UPDATE_SNAPSHOTS=1 to accept"
    )
    assert isinstance(caught.value, AssertionError)
    assert path.read_text(encoding="utf-8") == CANONICAL


def test_numbers_and_booleans_are_not_confused(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    assert_snapshot([1], path, update=False, ci=False)
    with pytest.raises(SnapshotMismatch):
        assert_snapshot([True], path, update=False, ci=False)
    with pytest.raises(SnapshotMismatch):
        assert_snapshot([1.0], path, update=False, ci=False)


def test_update_rewrites_a_changed_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    assert_snapshot(VALUE, path, update=False, ci=False)
    changed = {**VALUE, "ok": False}
    assert assert_snapshot(changed, path, update=True, ci=True) == SnapshotOutcome(path, "updated")
    assert json.loads(path.read_text(encoding="utf-8"))["ok"] is False
    assert assert_snapshot(changed, path, update=False, ci=False).status == "matched"
    # updating an equal snapshot changes nothing
    assert assert_snapshot(changed, path, update=True, ci=False).status == "matched"


def test_ci_never_writes_a_missing_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "snaps" / "a.json"
    with pytest.raises(SnapshotMissing) as caught:
        assert_snapshot(VALUE, path, update=False, ci=True)
    assert str(caught.value) == (
        f"snapshot {path} does not exist; CI never writes snapshots: "
        "run the tests locally and commit it"
    )
    assert not path.parent.exists()
    # asking for an update explicitly is the one way to write in CI
    assert assert_snapshot(VALUE, path, update=True, ci=True).status == "created"


def test_values_json_cannot_hold_raise_type_error_naming_the_type(tmp_path: Path) -> None:
    path = tmp_path / "a.json"

    class Thing:
        pass

    with pytest.raises(TypeError, match=r"cannot snapshot a value of type .*Thing"):
        assert_snapshot({"a": [Thing()]}, path, update=False, ci=False)
    with pytest.raises(TypeError, match="cannot snapshot a value of type set"):
        assert_snapshot({1, 2}, path, update=False, ci=False)
    with pytest.raises(TypeError, match="cannot snapshot a value of type bytes"):
        assert_snapshot(b"x", path, update=False, ci=False)
    with pytest.raises(TypeError, match="cannot snapshot dict: keys must be"):
        assert_snapshot({(1, 2): "tuple key"}, path, update=False, ci=False)
    with pytest.raises(TypeError, match="JSON cannot represent"):
        assert_snapshot([float("nan")], path, update=False, ci=False)
    assert not path.exists()


def test_an_invalid_json_file_is_a_mismatch_unless_updating(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('{"ok": tru', encoding="utf-8")
    with pytest.raises(SnapshotMismatch) as caught:
        assert_snapshot({"ok": True}, path, update=False, ci=False)
    message = str(caught.value)
    assert message.startswith(f"snapshot {path} is not valid JSON:\n")
    assert '\n-{"ok": tru\n' in message  # the file as it is
    assert path.read_text(encoding="utf-8") == '{"ok": tru'
    path.write_text("[NaN]", encoding="utf-8")  # Python's json reads it; JSON has no NaN
    with pytest.raises(SnapshotMismatch, match="is not valid JSON"):
        assert_snapshot([1], path, update=False, ci=False)
    assert assert_snapshot({"ok": True}, path, update=True, ci=False).status == "updated"
    assert path.read_text(encoding="utf-8") == '{\n  "ok": true\n}\n'


def test_long_diffs_are_cut(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    assert_snapshot(list(range(500)), path, update=False, ci=False)
    with pytest.raises(SnapshotMismatch) as caught:
        assert_snapshot(list(range(1000, 1500)), path, update=False, ci=False)
    message = str(caught.value)
    assert "more diff lines)\nrun with --update-snapshots" in message
    assert message.count("\n") < 220


def test_snapshot_path_layout(tmp_path: Path) -> None:
    assert snapshot_path(tmp_path, "TestA.test_b", 0) == tmp_path / "TestA.test_b" / "000.json"
    assert snapshot_path(tmp_path, "test_b", 12) == tmp_path / "test_b" / "012.json"
    assert snapshot_path(tmp_path, "test_b", 1000) == tmp_path / "test_b" / "1000.json"
    assert snapshot_path(tmp_path, "t", 0, "final state") == tmp_path / "t" / (
        f"final_state-{short_hash('final state')}.json"
    )
    assert snapshot_path(tmp_path, "t", 0, "result.json") == tmp_path / "t" / "result.json"


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


@pytest.mark.parametrize(
    ("test_id", "segment"),
    [
        ("TestA.test_b[param]", "TestA.test_b_param_"),
        ("test_x[a b]", "test_x_a_b_"),
        ("test_x[a/b\\c]", "test_x_a_b_c_"),
        ("test_x[a  //  b]", "test_x_a_b_"),
        ("test_x[café-ü]", "test_x_caf_-_"),
        ("test_x[日本]", "test_x_"),
        ("test__dunder__", "test__dunder__"),
        ("..hidden", "hidden"),
        ("..", "_"),
        ("", "_"),
        ("a:b*c?d<e>f|g\"h'", "a_b_c_d_e_f_g_h_"),
        ("x" * 150, "x" * 100),
    ],
)
def test_snapshot_path_sanitizing(tmp_path: Path, test_id: str, segment: str) -> None:
    path = snapshot_path(tmp_path, test_id, 0)
    # a segment that cleaning changed carries a hash of the original
    expected = segment if segment == test_id else f"{segment[:91]}-{short_hash(test_id)}"
    assert path == tmp_path / expected / "000.json"
    assert path.parent.parent == tmp_path  # never a nested or escaping directory


def test_ids_that_clean_to_the_same_text_get_distinct_paths(tmp_path: Path) -> None:
    ids = ["test_x[é]", "test_x[ü]", "test_x[_]", "x" * 150, "x" * 151]
    paths = {snapshot_path(tmp_path, test_id, 0) for test_id in ids}
    assert len(paths) == len(ids)


def test_snapshot_names_are_sanitized_too(tmp_path: Path) -> None:
    assert (
        snapshot_path(tmp_path, "t", 0, "../../etc/passwd")
        == tmp_path / "t" / f"_.._etc_passwd-{short_hash('../../etc/passwd')}.json"
    )
    assert snapshot_path(tmp_path, "t", 0, "n" * 200).name == (
        "n" * 91 + f"-{short_hash('n' * 200)}.json"
    )


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        (
            "tests/test_x.py::TestA::test_b[param] (call)",
            (Path("tests/test_x.py"), "TestA.test_b[param]"),
        ),
        ("tests/test_x.py::test_b (setup)", (Path("tests/test_x.py"), "test_b")),
        ("test_x.py::test_b (teardown)", (Path("test_x.py"), "test_b")),
        (
            "tests/test_x.py::TestA::TestInner::test_c (call)",
            (Path("tests/test_x.py"), "TestA.TestInner.test_c"),
        ),
        (
            "tests/test_x.py::test_b[a::b-[x] (call)] (call)",
            (Path("tests/test_x.py"), "test_b[a::b-[x] (call)]"),
        ),
    ],
)
def test_test_id_from_pytest(current: str, expected: tuple[Path, str]) -> None:
    assert snapshots.test_id_from_pytest({"PYTEST_CURRENT_TEST": current}) == expected


def test_test_id_from_pytest_without_a_test() -> None:
    assert snapshots.test_id_from_pytest({}) is None
    assert snapshots.test_id_from_pytest({"PYTEST_CURRENT_TEST": ""}) is None
    assert snapshots.test_id_from_pytest({"PYTEST_CURRENT_TEST": "garbage"}) is None


def test_the_pytest_test_id_makes_a_portable_path(tmp_path: Path) -> None:
    found = snapshots.test_id_from_pytest(
        {"PYTEST_CURRENT_TEST": "tests/test_x.py::TestA::test_b[a b/ü] (call)"}
    )
    assert found is not None
    _, test_id = found
    assert snapshot_path(tmp_path, test_id, 3) == (
        tmp_path / f"TestA.test_b_a_b_-{short_hash('TestA.test_b[a b/ü]')}" / "003.json"
    )


@pytest.mark.parametrize(
    ("env", "flag", "expected"),
    [
        ({}, False, False),
        ({}, True, True),
        ({"SANDBOXVERIFY_UPDATE_SNAPSHOTS": "1"}, False, True),
        ({"SANDBOXVERIFY_UPDATE_SNAPSHOTS": "TRUE"}, False, True),
        ({"SANDBOXVERIFY_UPDATE_SNAPSHOTS": "Yes"}, False, True),
        ({"SANDBOXVERIFY_UPDATE_SNAPSHOTS": "0"}, False, False),
        ({"SANDBOXVERIFY_UPDATE_SNAPSHOTS": "no"}, True, True),
        ({"SANDBOXVERIFY_UPDATE_SNAPSHOTS": ""}, False, False),
    ],
)
def test_update_requested(env: dict[str, str], flag: bool, expected: bool) -> None:
    assert update_requested(env, flag) is expected


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, False),
        ({"CI": "true"}, True),
        ({"CI": "1"}, True),
        ({"CI": "YES"}, True),
        ({"CI": "false"}, False),
        ({"CI": "0"}, False),
        ({"CI": ""}, False),
    ],
)
def test_in_ci(env: dict[str, str], expected: bool) -> None:
    assert in_ci(env) is expected


def test_the_pytest_helper_is_not_collected_as_a_test() -> None:
    assert snapshots.test_id_from_pytest.__test__ is False  # type: ignore[attr-defined]
