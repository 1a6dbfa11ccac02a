"""Helpers shared by the tests: the fixture packages, the real CLI, tree snapshots."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import xmlschema
import yaml

from sandboxverify.report._model import REPORT_SCHEMA

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
ACTION = ROOT / "action.yml"
#: Jenkins' JUnit schema (jenkinsci/xunit-plugin, junit-10.xsd), the one pytest's own
#: ``--junitxml`` output is tested against: what Jenkins, GitLab and the GitHub reporters read
JUNIT_XSD = ROOT / "tests" / "schemas" / "junit-10.xsd"
#: the JSON Schemas the package ships
SCHEMAS = ROOT / "sandboxverify" / "schemas"


def fixture(name: str) -> Path:
    path = FIXTURES / name
    assert path.is_dir(), f"no fixture {name}"
    return path


def copy_fixture(name: str, destination: Path) -> Path:
    target = destination / name
    shutil.copytree(fixture(name), target)
    return target


def edited_fixture(name: str, destination: Path, file: str, edit: Callable[[str], str]) -> Path:
    """A copy of fixture ``name`` in ``destination`` whose ``file`` (relative to it) is
    ``edit`` of what it was: a fixture broken one way for one test."""
    project = copy_fixture(name, destination)
    target = project / file
    target.write_text(edit(target.read_text()))
    return project


@dataclass(frozen=True)
class CliResult:
    code: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        data = json.loads(self.stdout)
        assert isinstance(data, dict)
        if data.get("$schema") == REPORT_SCHEMA:
            assert_valid_report(data)
        return data


def run_cli(
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 600,
    module: str = "sandboxverify",
) -> CliResult:
    """Run the real command line (or another module's: tox, nox) in a subprocess, as a user
    (or CI) would."""
    completed = subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        env=env if env is not None else dict(os.environ),
        cwd=cwd,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    return CliResult(completed.returncode, completed.stdout, completed.stderr)


def without_the_fallback_warning(lines: list[str]) -> list[str]:
    """A check's output lines without the warning it starts with where the OS sandbox is
    unavailable (``--isolation auto`` falling back): the same assertions then hold with
    bubblewrap and without. With the OS sandbox there is no such line."""
    from sandboxverify.sandbox._bwrap import available  # noqa: PLC0415 - probes bwrap once

    warned = [i for i, line in enumerate(lines) if line.startswith(_FALLBACK_WARNING)]
    if available()[0] is not None:
        assert warned == [], lines
        return lines
    assert warned in ([], [0]), lines
    return lines[len(warned) :]


_FALLBACK_WARNING = "warning: running without the OS sandbox ("


def tree_digest(root: Path) -> dict[str, str]:
    """Every file and directory under ``root`` with its content hash: a byte-for-byte snapshot."""
    digest: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_symlink():
            digest[relative] = f"link:{os.readlink(path)}"
        elif path.is_dir():
            digest[relative] = "dir"
        else:
            digest[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest


def read_yaml(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path.name} is not a YAML mapping"
    return data


def action() -> dict[str, Any]:
    return read_yaml(ACTION)


def action_inputs() -> set[str]:
    return set(action()["inputs"])


def use_in_ci_section() -> str:
    """The README's "Use in CI" section, up to the next top-level heading."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^## Use in CI\n(.*?)(?=^## )", text, re.MULTILINE | re.DOTALL)
    assert match, "README.md has no '## Use in CI' section"
    return match.group(1)


def readme_ci_blocks(language: str) -> list[str]:
    """The fenced ``language`` code blocks of the README's "Use in CI" section, verbatim."""
    return re.findall(rf"^```{language}\n(.*?)^```$", use_in_ci_section(), re.M | re.S)


def make_wheel(
    directory: Path,
    filename: str = "demo-1.0-py3-none-any.whl",
    *,
    name: str = "demo",
    version: str = "1.0",
    files: Mapping[str, str] | Sequence[str] = ("demo/__init__.py",),
    metadata: str | None = None,
    skip: str = "",
    unrecorded: Sequence[str] = (),
    tampered: Sequence[str] = (),
    record_rows: Sequence[str] = (),
) -> Path:
    """A wheel written by hand, as a backend would write it (RECORD with sha256 and size)
    unless told otherwise: ``unrecorded`` files are left out of RECORD, ``tampered`` ones are
    changed after RECORD was written, ``record_rows`` are appended to RECORD as they are."""
    path = directory / filename
    info = f"{name}-{version}.dist-info"
    contents = dict(files) if isinstance(files, Mapping) else dict.fromkeys(files, "")
    contents.setdefault(
        f"{info}/METADATA",
        metadata
        if metadata is not None
        else f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
    )
    contents.setdefault(
        f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    contents = {member: text for member, text in contents.items() if member != f"{info}/{skip}"}
    rows = [
        f"{member},sha256={b64_sha256(text.encode())},{len(text.encode())}"
        for member, text in contents.items()
        if member not in unrecorded
    ]
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in contents.items():
            archive.writestr(
                member, text + ("# changed after the build" if member in tampered else "")
            )
        if skip != "RECORD":
            record = [*rows, *record_rows, f"{info}/RECORD,,"]
            archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return path


def b64_sha256(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def uv_wheel(source: Path, out: Path) -> Path:
    """A wheel built straight from ``source`` with uv (no sdist step), as many projects do."""
    from sandboxverify.sandbox._toolchain import find_uv  # noqa: PLC0415 - only these tests need uv

    uv = find_uv()
    assert uv is not None, "uv is not installed; install the test extra"
    subprocess.run(
        [
            str(uv),
            "build",
            "--wheel",
            "--no-python-downloads",
            "--python",
            sys.executable,
            "--out-dir",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    [wheel] = out.glob("*.whl")
    return wheel


def readme_commands() -> list[str]:
    """The README's first two commands: run the sample check, run the tests."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text)[:2]


@functools.cache
def _junit_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(JUNIT_XSD))


def assert_valid_junit(source: str | Path) -> None:
    """A JUnit XML document (its text, or a file) that ``junit-10.xsd`` accepts."""
    document = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
    errors = [str(error) for error in _junit_schema().iter_errors(document)]
    assert not errors, f"{source if isinstance(source, Path) else 'JUnit XML'}: " + errors[0]


def is_our_junit(path: Path) -> bool:
    """A JUnit file sandboxverify wrote (not pytest's own, say)."""
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:400]
    except OSError:
        return False
    return '<testsuites name="sandboxverify"' in head


def schema(name: str) -> dict[str, Any]:
    """A JSON Schema the package ships: ``report-v1``, ``config`` or ``playbook``."""
    data = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _closed(node: Any) -> Any:
    """The schema with every object that lists its properties closed to any other: the shipped
    schema lets later versions add fields; the tests make sure every field is in it."""
    if isinstance(node, list):
        return [_closed(item) for item in node]
    if not isinstance(node, dict):
        return node
    closed = {key: _closed(value) for key, value in node.items()}
    if "properties" in closed and "additionalProperties" not in closed:
        closed["additionalProperties"] = False
    return closed


@functools.cache
def _validator(name: str, *, closed: bool) -> jsonschema.protocols.Validator:
    document = schema(name)
    validator_class = jsonschema.validators.validator_for(document)
    validator_class.check_schema(document)
    return validator_class(_closed(document) if closed else document)


def schema_errors(name: str, document: Any, *, closed: bool = False) -> list[str]:
    """What is wrong with ``document`` by the shipped schema ``name`` (closed: no field the
    schema does not list), one line each; empty if it is valid."""
    errors = _validator(name, closed=closed).iter_errors(document)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors]


def assert_valid_report(document: Any) -> None:
    """A JSON report that report-v1.schema.json accepts, with no field it does not document."""
    errors = schema_errors("report-v1", document, closed=True)
    assert not errors, "the report does not match report-v1.schema.json: " + "; ".join(errors)


def assert_valid_matrix(document: Any) -> None:
    """What ``sandboxverify matrix`` prints: the ``matrix`` definition of report-v1.schema.json,
    with no field it does not document."""
    report = schema("report-v1")
    matrix = _closed({"$schema": report["$schema"], **report["$defs"]["matrix"]})
    errors = [
        error.message for error in jsonschema.Draft202012Validator(matrix).iter_errors(document)
    ]
    assert not errors, (
        "the matrix does not match report-v1.schema.json#/$defs/matrix: " + "; ".join(errors)
    )


def is_our_report(path: Path) -> bool:
    """A JSON report sandboxverify wrote."""
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:400]
    except OSError:
        return False
    return f'"$schema": "{REPORT_SCHEMA}"' in head
