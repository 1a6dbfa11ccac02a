"""The ``pyproject.toml`` validator compiled into the cache directory: the same verdicts as the
schemas compiled in process, written once and then only imported, by one of several checks
starting at once, and never needed: where the cache cannot be written, validation still runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.artifacts._pyproject_validator import (
    PyprojectValidator,
    compiled_validator,
    in_process_validator,
)

PROJECT = {"name": "demo", "version": "1.0"}
DOCUMENTS: dict[str, dict[str, Any]] = {
    "valid": {"project": {**PROJECT, "dependencies": ["six>=1"]}},
    "misspelled key": {"project": {**PROJECT, "dependecies": []}},
    "wrong type": {"project": {**PROJECT, "keywords": "a, b"}},
    "invalid requirement": {"project": {**PROJECT, "dependencies": ["six >>> 1"]}},
    "unknown classifier": {"project": {**PROJECT, "classifiers": ["Framework :: Nope"]}},
    "unknown setuptools key": {"project": PROJECT, "tool": {"setuptools": {"pakages": []}}},
    "static field also dynamic": {"project": {**PROJECT, "dynamic": ["version"]}},
    "no build-system requires": {"project": PROJECT, "build-system": {"build-backend": "x"}},
}


def verdict(validator: PyprojectValidator, document: dict[str, Any]) -> str:
    try:
        validator.validate(json.loads(json.dumps(document)))
    except validator.error as exc:
        return f"schema: {getattr(exc, 'message', exc)}"
    except ValueError as exc:
        return f"other: {str(exc).splitlines()[0]}"
    return "valid"


@pytest.mark.parametrize("name", DOCUMENTS)
def test_the_compiled_validator_agrees_with_the_schemas_compiled_in_process(
    name: str, tmp_path: Path
) -> None:
    compiled = verdict(compiled_validator(tmp_path), DOCUMENTS[name])
    assert compiled == verdict(in_process_validator(), DOCUMENTS[name])
    assert (compiled == "valid") == (name == "valid")


def test_it_is_written_once_with_its_bytecode_then_imported(tmp_path: Path) -> None:
    compiled_validator(tmp_path)
    [package] = list(tmp_path.iterdir())
    assert (package / "__init__.py").is_file()
    assert list((package / "__pycache__").glob("fastjsonschema_validations.*.pyc"))
    written = (package / "__init__.py").stat().st_mtime_ns
    code = (
        "import sys; from pathlib import Path; "
        "from sandboxverify.artifacts._pyproject_validator import compiled_validator; "
        "v = compiled_validator(Path(sys.argv[1])); "
        "print(sys.modules[v.validate.__module__].__file__)"
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).parent == package
    assert (package / "__init__.py").stat().st_mtime_ns == written
    assert [p.name for p in tmp_path.iterdir()] == [package.name]


def test_checks_starting_at_once_write_one_package_and_all_validate(tmp_path: Path) -> None:
    code = (
        "import sys; from pathlib import Path; "
        "from sandboxverify.artifacts._pyproject_validator import compiled_validator; "
        "v = compiled_validator(Path(sys.argv[1])); "
        "v.validate({'project': {'name': 'x', 'version': '1'}}); print('ok')"
    )
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        assert out.strip() == "ok"
    assert len(list(tmp_path.iterdir())) == 1  # no staging directory left behind


def test_a_cache_that_cannot_be_written_falls_back_to_compiling_in_process(
    tmp_path: Path,
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    code = (
        "import sys; from sandboxverify.artifacts._pyproject import pyproject_problems; "
        '[p] = pyproject_problems(b\'[project]\\nname = "x"\\nversion = "1"\\nvrsion = 2\\n\','
        " 'x.tar.gz'); print(p.rule, p.message)"
    )
    env = {**os.environ, "SANDBOXVERIFY_CACHE_DIR": str(blocked)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("pyproject-invalid ")
    assert "'vrsion' → 'version'" in out.stdout
