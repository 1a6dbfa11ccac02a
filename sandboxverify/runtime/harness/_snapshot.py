"""Snapshot assertions: a value compared with a JSON file committed next to the tests.

The first run writes the file ("created"); later runs compare ("matched") and fail with a diff when
the value changed, unless updating was asked for ("updated"). CI never writes a missing snapshot:
a snapshot that only ever existed on a CI machine would assert nothing.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: The environment variable that accepts changed snapshots, like ``--update-snapshots``.
UPDATE_VARIABLE = "SANDBOXVERIFY_UPDATE_SNAPSHOTS"
#: Set where snapshots are compared and never written: a playbook's read-only copy in a sandbox.
READ_ONLY_VARIABLE = "SANDBOXVERIFY_READ_ONLY_SNAPSHOTS"
_READ_ONLY_HINT = (
    "a check compares snapshots and never writes them (the playbook's files are a read-only "
    "copy in the sandbox): write it with 'sandboxverify run' on the playbook (or pytest), and "
    "keep it beside the playbook"
)
_TRUTHY = ("1", "true", "yes")
_ACCEPT_HINT = "run with --update-snapshots or SANDBOXVERIFY_UPDATE_SNAPSHOTS=1 to accept"
#: Longest file or directory name a snapshot path segment gets (well under every filesystem's).
SEGMENT_CHARS = 100
#: A mismatch shows at most this many diff lines: enough to see what changed.
DIFF_LINES = 200

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_PYTEST_PHASE = re.compile(r" \((?:setup|call|teardown)\)$")


class SnapshotMismatch(AssertionError):
    """The value differs from the stored snapshot (or the snapshot file is not valid JSON)."""


class SnapshotMissing(AssertionError):
    """The snapshot does not exist and this is CI, which never writes snapshots."""


@dataclass(frozen=True)
class SnapshotOutcome:
    path: Path
    #: "matched", "created" or "updated"
    status: str


def snapshot_path(directory: Path, test_id: str, index: int, name: str | None = None) -> Path:
    """``<directory>/<sanitized test id>/<name or 000>.json``: deterministic and portable.

    Each segment keeps only ``[A-Za-z0-9._-]`` (a run of anything else becomes one ``_``), loses
    its leading dots (no hidden files, no ``..``) and is cut to 100 characters; a segment changed
    by that gets ``-`` and 8 hex digits of a hash of the original, so no two ids share a file. A
    ``name`` ending in ``.json`` does not get a second one.
    """
    if name is not None and name.endswith(".json"):
        name = name[: -len(".json")]
    stem = name if name is not None else f"{index:03d}"
    return directory / _segment(test_id) / f"{_segment(stem)}.json"


_numbers: dict[tuple[str, str], int] = {}
_numbers_lock = threading.Lock()


def next_number(directory: Path, test_id: str) -> int:
    """The next number for an unnamed snapshot of ``test_id``: counted across every session of
    the test, so two sessions never share ``001.json``. The pytest plugin restarts the count
    for each test (:func:`restart_numbers`)."""
    key = (str(directory), test_id)
    with _numbers_lock:
        _numbers[key] = _numbers.get(key, 0) + 1
        return _numbers[key]


def restart_numbers() -> None:
    """A new test begins: its unnamed snapshots are numbered from 001 again."""
    with _numbers_lock:
        _numbers.clear()


#: set by the pytest plugin for ``pytest --update-snapshots``: every session updates, not only
#: those the ``harness`` fixture creates
_runner = {"update": False}


def request_updates(update: bool) -> None:
    _runner["update"] = update


def _segment(text: str) -> str:
    cleaned = _UNSAFE.sub("_", text).lstrip(".")
    if cleaned and cleaned == text and len(cleaned) <= SEGMENT_CHARS:
        return cleaned
    # Cleaning lost information ("[é]" and "[ü]" both read "_"): a short hash of the original
    # keeps distinct tests in distinct files.
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    return f"{cleaned[: SEGMENT_CHARS - 9] or '_'}-{digest}"


def test_id_from_pytest(env: Mapping[str, str]) -> tuple[Path, str] | None:
    """The running test from ``PYTEST_CURRENT_TEST``: its file (as given) and its id.

    ``tests/test_x.py::TestA::test_b[param] (call)`` gives ``tests/test_x.py`` and
    ``TestA.test_b[param]`` (``snapshot_path`` sanitizes it). None when the variable is unset or
    not in that shape.
    """
    current = env.get("PYTEST_CURRENT_TEST", "")
    current = _PYTEST_PHASE.sub("", current)
    file_part, separator, rest = current.partition("::")
    if not separator or not file_part or not rest:
        return None
    # parameter ids may contain "::" and "[": only the part before the first "[" is the node path
    bracket = rest.find("[")
    names, params = (rest, "") if bracket < 0 else (rest[:bracket], rest[bracket:])
    return Path(file_part), ".".join(names.split("::")) + params


# its name starts with "test_": keep pytest from collecting it where a test module imports it
test_id_from_pytest.__test__ = False  # type: ignore[attr-defined]


def assert_snapshot(
    value: object, path: Path, *, update: bool, ci: bool, read_only: bool = False
) -> SnapshotOutcome:
    """Compare ``value``, as canonical JSON, with the snapshot at ``path``.

    A missing snapshot is written ("created"), except in CI without ``update``: SnapshotMissing.
    An equal one is "matched" (formatting aside: the stored JSON is compared, not its spelling).
    A different one, or a file that is not valid JSON, raises SnapshotMismatch with a diff, or is
    rewritten with ``update`` ("updated"). A value JSON cannot represent raises TypeError.
    ``read_only``: nothing is ever written; a missing snapshot is SnapshotMissing, and so is an
    update asked for, each saying why.
    """
    actual = canonical_json(value)
    if not path.exists():
        if read_only:
            raise SnapshotMissing(f"snapshot {_shown(path)} does not exist; {_READ_ONLY_HINT}")
        if ci and not update:
            raise SnapshotMissing(
                f"snapshot {path} does not exist; CI never writes snapshots: "
                "run the tests locally and commit it"
            )
        _write_atomically(path, actual)
        return SnapshotOutcome(path, "created")
    stored = path.read_bytes().decode("utf-8", errors="replace")
    expected = _canonical_text(stored)
    if expected == actual:
        return SnapshotOutcome(path, "matched")
    if update and read_only:
        raise SnapshotMismatch(f"snapshot {_shown(path)} differs, and {_READ_ONLY_HINT}")
    if update:
        _write_atomically(path, actual)
        return SnapshotOutcome(path, "updated")
    if expected is None:
        # show the file as it is: whatever broke it is what needs looking at
        problem = "is not valid JSON"
        expected = stored if stored.endswith("\n") else f"{stored}\n"
    else:
        problem = "does not match"
    raise SnapshotMismatch(f"snapshot {path} {problem}:\n{_diff(expected, actual)}\n{_ACCEPT_HINT}")


def canonical_json(value: object) -> str:
    """Sorted keys, two-space indents, real Unicode, one final newline: diffs stay readable."""
    try:
        return (
            json.dumps(
                value,
                indent=2,
                sort_keys=True,
                ensure_ascii=False,
                allow_nan=False,
                default=_refuse,
            )
            + "\n"
        )
    except ValueError as exc:  # NaN and infinities: JSON has no spelling for them
        raise TypeError(f"cannot snapshot a value JSON cannot represent: {exc}") from exc
    except TypeError as exc:  # a tuple key, keys of mixed types that cannot be sorted...
        if str(exc).startswith("cannot snapshot"):
            raise
        raise TypeError(f"cannot snapshot {type(value).__qualname__}: {exc}") from exc


def _refuse(value: object) -> object:
    # never fall back to repr or pickle: neither round-trips, so the snapshot would assert little
    raise TypeError(
        f"cannot snapshot a value of type {type(value).__qualname__}: snapshots hold JSON only "
        "(dict, list, tuple, str, int, float, bool, None)"
    )


def _canonical_text(stored: str) -> str | None:
    """The stored snapshot re-serialised canonically, or None when it is not valid JSON."""
    try:
        return canonical_json(json.loads(stored, parse_constant=_reject_constant))
    except (ValueError, TypeError):
        return None


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _diff(expected: str, actual: str) -> str:
    lines = list(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            fromfile="expected (snapshot)",
            tofile="actual",
        )
    )
    shown = "".join(lines[:DIFF_LINES]).rstrip("\n")
    hidden = len(lines) - DIFF_LINES
    return f"{shown}\n... ({hidden} more diff lines)" if hidden > 0 else shown


def _write_atomically(path: Path, text: str) -> None:
    """Write through a sibling temporary file: an interrupted run never leaves half a snapshot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # newline="\n": the same bytes on every platform, so snapshots diff cleanly in git
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _shown(path: Path) -> str:
    """``path`` as the playbook names it: relative to where it runs, if below it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def read_only(env: Mapping[str, str]) -> bool:
    return env.get(READ_ONLY_VARIABLE, "").strip().lower() in _TRUTHY


def update_requested(env: Mapping[str, str], flag: bool = False) -> bool:
    """``flag`` (a session's ``update_snapshots``), ``pytest --update-snapshots`` or
    SANDBOXVERIFY_UPDATE_SNAPSHOTS=1/true/yes."""
    return flag or _runner["update"] or env.get(UPDATE_VARIABLE, "").strip().lower() in _TRUTHY


def in_ci(env: Mapping[str, str]) -> bool:
    """CI=1/true/yes (case-insensitive), as CI services set it."""
    return env.get("CI", "").strip().lower() in _TRUTHY
