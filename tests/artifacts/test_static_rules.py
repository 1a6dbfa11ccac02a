"""The static rules each on its own: what PyPI or an installer refuses fails with its code, and
hygiene is a warning with its code, file and hint; a clean wheel and sdist have neither."""

from __future__ import annotations

import io
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from sandboxverify.artifacts import ArtifactProblem, inspect_sdist, inspect_wheel
from sandboxverify.artifacts._findings import RULES, promoted, unknown_warning_codes
from sandboxverify.artifacts._readme import rst_errors
from sandboxverify.artifacts._rules import Problem
from sandboxverify.report import ReportWarning
from tests.helpers import make_wheel

CLEAN = (
    "Metadata-Version: 2.4\nName: demo\nVersion: 1.0\nSummary: a demo\n"
    "Description-Content-Type: text/markdown\n\n# Demo\n\nIt works.\n"
)


def found(path: Path) -> tuple[list[str], list[str]]:
    """The rule codes of the errors and of the warnings the artifact has."""
    inspect = inspect_wheel if path.name.endswith(".whl") else inspect_sdist
    try:
        artifact = inspect(path)
    except ArtifactProblem as exc:
        errors, warnings = exc.problems, exc.warnings
    else:
        errors, warnings = (), artifact.warnings
    for problem in (*errors, *warnings):
        assert problem.hint, problem
        assert problem.rule is None or problem.rule in RULES
    return [p.rule or "" for p in errors], [p.rule or "" for p in warnings]


def sdist(directory: Path, files: dict[str, str], stem: str = "demo-1.0") -> Path:
    path = directory / f"{stem}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for member, text in {"PKG-INFO": CLEAN, **files}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{stem}/{member}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


PYPROJECT = '[project]\nname = "demo"\nversion = "1.0"\n'


def test_a_clean_wheel_and_sdist_have_no_findings(tmp_path: Path) -> None:
    assert found(make_wheel(tmp_path, metadata=CLEAN)) == ([], [])
    assert found(sdist(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": ""})) == (
        [],
        [],
    )


@pytest.mark.parametrize(
    ("extra", "rule"),
    [
        ("License-Expression: MIT\n", "metadata-field-too-new"),
        ("Classifier: Programming Language :: Pythonn\n", "classifier-invalid"),
        ("Classifier: Private :: Do Not Upload\n", "classifier-invalid"),
        ("Home-page: ftp//example\n", "url-invalid"),
    ],
)
def test_metadata_pypi_refuses_fails(tmp_path: Path, extra: str, rule: str) -> None:
    metadata = (
        f"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n{extra}"
        "Description-Content-Type: text/markdown\n\nText.\n"
    )
    assert found(make_wheel(tmp_path, metadata=metadata))[0] == [rule]


def test_a_local_version_fails(tmp_path: Path) -> None:
    metadata = CLEAN.replace("Version: 1.0", "Version: 1.0+g1234")
    wheel = make_wheel(
        tmp_path, "demo-1.0+g1234-py3-none-any.whl", version="1.0+g1234", metadata=metadata
    )
    assert "version-local" in found(wheel)[0]


def test_a_readme_that_does_not_render_fails_and_says_where(tmp_path: Path) -> None:
    text = "Demo\n====\n\n.. automodule:: demo\n"
    metadata = f"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nDescription-Content-Type: text/x-rst\n\n{text}"
    assert found(make_wheel(tmp_path, metadata=metadata))[0] == ["readme-invalid"]
    errors = rst_errors(text)
    assert errors and "line 4" in errors[0]
    assert rst_errors("Demo\n====\n\nFine *text*.\n") is None


def test_a_missing_content_type_is_a_warning_when_the_text_renders(tmp_path: Path) -> None:
    metadata = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\nPlain words.\n"
    assert found(make_wheel(tmp_path, metadata=metadata)) == ([], ["readme-content-type-missing"])


def test_bytecode_and_duplicates_in_a_wheel_are_warnings(tmp_path: Path) -> None:
    files = {
        "demo/__init__.py": "",
        "demo/__pycache__/core.cpython-312.pyc": "\x00bytes",
        "demo/a.py": "VALUE = 'one and the same'\n",
        "demo/b.py": "VALUE = 'one and the same'\n",
    }
    errors, warnings = found(make_wheel(tmp_path, metadata=CLEAN, files=files))
    assert errors == []
    assert {"wheel-bytecode", "wheel-duplicate-content"} <= set(warnings)


def test_modules_under_src_fail(tmp_path: Path) -> None:
    files = {"src/demo/__init__.py": "", "src/demo/core.py": ""}
    assert "wheel-src-toplevel" in found(make_wheel(tmp_path, metadata=CLEAN, files=files))[0]


def test_an_editable_wheel_fails(tmp_path: Path) -> None:
    files = {
        "__editable__.demo-1.0.pth": "import __editable___demo_finder\n",
        "__editable___demo_finder.py": "MAPPING = {}\n",
    }
    assert found(make_wheel(tmp_path, metadata=CLEAN, files=files))[0] == ["wheel-editable"]


def test_junk_in_an_sdist_is_a_warning(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": PYPROJECT,
        "demo/__init__.py": "",
        ".github/workflows/ci.yml": "on: push\n",
        ".readthedocs.yaml": "version: 2\n",
    }
    assert found(sdist(tmp_path, files)) == ([], ["junk-files"])


def test_a_typo_in_project_fails_naming_the_key_meant(tmp_path: Path) -> None:
    files = {"pyproject.toml": PYPROJECT + 'dependecies = ["six"]\n', "demo/__init__.py": ""}
    path = sdist(tmp_path, files)
    with pytest.raises(ArtifactProblem) as raised:
        inspect_sdist(path)
    [problem] = raised.value.problems
    assert problem.rule == "pyproject-invalid"
    assert problem.code == "pyproject_invalid"
    assert "'dependecies' → 'dependencies'" in problem.message


def test_an_sdist_named_against_pep_625_fails(tmp_path: Path) -> None:
    files = {"pyproject.toml": PYPROJECT.replace('"demo"', '"Demo.Pkg"'), "x.py": ""}
    metadata = CLEAN.replace("Name: demo", "Name: Demo.Pkg")
    path = tmp_path / "Demo.Pkg-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for member, text in {"PKG-INFO": metadata, **files}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"Demo.Pkg-1.0/{member}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    assert found(path)[0] == ["sdist-filename"]


def test_warnings_named_by_fail_on_warning_become_failures() -> None:
    warnings = [
        ReportWarning("junk-files", "demo-1.0.tar.gz: ships .github/", "demo-1.0.tar.gz", "x"),
        ReportWarning("wheel-bytecode", "demo.whl: .pyc", "demo.whl", "y"),
        ReportWarning("no-os-sandbox", "ran without the OS sandbox"),
    ]
    failures, kept = promoted(warnings, ["junk-files"])
    assert [(f.code, f.rule) for f in failures] == [("artifact_invalid", "junk-files")]
    assert [w.code for w in kept] == ["wheel-bytecode", "no-os-sandbox"]
    failures, kept = promoted(warnings, ["all"])
    assert len(failures) == 2
    assert [w.code for w in kept] == ["no-os-sandbox"]  # --isolation strict is for that
    assert unknown_warning_codes(["junk-files", "all", "junk-file"]) == ["junk-file"]


def test_the_readme_lists_every_rule_with_its_severity() -> None:
    text = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    for code, rule in RULES.items():
        severity = f"fails (`{rule.failure}`)" if rule.severity == "error" else "warning"
        severity += ", *upload*" if rule.upload else ""
        assert f"| `{code}` | {severity} |" in text, code


def test_an_upload_refusal_is_a_warning_only_in_a_given_file() -> None:
    """PyPI refuses it at upload, an installer takes it: a failure for what is about to be
    published, a warning for a file given as it is; what breaks an install fails both."""
    refused = Problem(
        "demo-1.0.tar.gz: License-Expression under 2.1", "h", rule="metadata-field-too-new"
    )
    assert refused.severity == "error"
    assert replace(refused, given=True).severity == "warning"
    assert "metadata-field-too-new" not in unknown_warning_codes(["metadata-field-too-new"])
    broken = Problem("demo-1.0-py3-none-any.whl: editable", "h", rule="wheel-editable")
    assert replace(broken, given=True).severity == "error"
