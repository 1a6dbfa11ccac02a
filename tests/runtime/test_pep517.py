"""The PEP 517 hook runner: a step's hooks from one interpreter, each as if in a process of its
own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

import sandboxverify

RUNNER = Path(sandboxverify.__file__).parent / "runtime" / "_pep517.py"

#: A backend whose get_requires hooks import a module of the project from the tree, and whose
#: "wheel" records what build_wheel saw: was that module still imported?
BACKEND = """
import json, os, sys, tarfile

REQUIRES = json.loads(os.environ.get("FAKE_REQUIRES", "{}"))

def _import_from_the_tree():
    sys.path.insert(0, os.getcwd())
    import project_helper

def get_requires_for_build_sdist(config_settings=None):
    _import_from_the_tree()
    return REQUIRES.get("sdist", [])

def get_requires_for_build_wheel(config_settings=None):
    _import_from_the_tree()
    import colorsys  # of the standard library, imported in the hook as backends do
    return REQUIRES.get("wheel", [])

def build_sdist(sdist_directory, config_settings=None):
    if os.environ.get("FAKE_EXIT") == "sdist":
        os._exit(3)
    name = "demo-1.0.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as archive:
        for entry in os.listdir("."):
            archive.add(entry, arcname="demo-1.0/" + entry)
    return name

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if os.environ.get("FAKE_RAISE") == "wheel":
        raise ValueError("the wheel cannot be built")
    seen = {
        "cwd": os.path.basename(os.getcwd()),
        "helper_imported": "project_helper" in sys.modules,
        "tree_on_path": os.getcwd() in sys.path,
        "preloaded": "email.mime.text" in sys.modules,
    }
    name = "demo-1.0-py3-none-any.whl"
    with open(os.path.join(wheel_directory, name), "w") as handle:
        json.dump(seen, handle)
    return name
"""


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    source = tmp_path / "source"
    source.mkdir()
    (source / "pyproject.toml").write_text("[build-system]\nrequires = []\n")
    (source / "project_helper.py").write_text("VALUE = 1\n")
    backends = tmp_path / "backends"
    backends.mkdir()
    (backends / "fake_backend.py").write_text(BACKEND)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "_pep517.py").write_bytes(RUNNER.read_bytes())
    out = tmp_path / "out"
    out.mkdir()
    return {"root": tmp_path, "source": source, "backends": backends, "hooks": hooks, "out": out}


def run_runner(
    layout: dict[str, Path], step: str, *, env: dict[str, str] | None = None, **request: Any
) -> tuple[int, dict[str, Any], str]:
    result = layout["root"] / "result.json"
    result.unlink(missing_ok=True)
    body = {
        "backend": "fake_backend",
        "step": step,
        "source": str(layout["source"]),
        "out": str(layout["out"]),
        "result": str(result),
        **request,
    }
    request_path = layout["root"] / "request.json"
    request_path.write_text(json.dumps(body))
    completed = subprocess.run(
        [sys.executable, str(layout["hooks"] / "_pep517.py"), str(request_path)],
        env={**os.environ, "PYTHONPATH": str(layout["backends"]), **(env or {})},
        cwd=layout["root"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return completed.returncode, json.loads(result.read_text()), completed.stderr


def unpacked(layout: dict[str, Path]) -> Path:
    with tarfile.open(layout["out"] / "demo-1.0.tar.gz") as archive:
        archive.extractall(layout["root"] / "unpacked", filter="data")
    return layout["root"] / "unpacked" / "demo-1.0"


def wheel_saw(layout: dict[str, Path]) -> dict[str, Any]:
    data = json.loads((layout["out"] / "demo-1.0-py3-none-any.whl").read_text())
    assert isinstance(data, dict)
    return data


@pytest.mark.skipif(not hasattr(os, "fork"), reason="hooks in one process without fork")
def test_each_hook_starts_without_what_the_one_before_imported(layout: dict[str, Path]) -> None:
    code, result, _ = run_runner(layout, "sdist")
    assert (code, result["done"]) == (0, "demo-1.0.tar.gz")

    code, result, _ = run_runner(layout, "wheel", source=str(unpacked(layout)))

    assert (code, result["done"]) == (0, "demo-1.0-py3-none-any.whl")
    # get_requires_for_build_wheel imported the project's module from the tree; build_wheel,
    # forked from the runner, starts as a process of its own would
    assert wheel_saw(layout) == {
        "cwd": "demo-1.0",
        "helper_imported": False,
        "tree_on_path": False,
        "preloaded": False,
    }
    # what the hooks imported from the standard library and the environment, never the project
    assert "colorsys" in result["imported"]
    assert "project_helper" not in result["imported"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="hooks in one process without fork")
def test_preloaded_modules_are_imported_before_the_hooks_fork(layout: dict[str, Path]) -> None:
    code, _, _ = run_runner(layout, "wheel", preload=["email.mime.text", "svfix_no_such_module"])

    assert code == 0
    assert wheel_saw(layout)["preloaded"] is True


def test_an_in_tree_backend_runs_from_the_tree_it_builds(layout: dict[str, Path]) -> None:
    """backend-path: imported from the tree, so nothing is shared between steps, and the
    hooks run in the runner itself."""
    (layout["source"] / "fake_backend.py").write_text(BACKEND)
    code, result, _ = run_runner(layout, "sdist", backend_path=["."])
    assert (code, result["done"]) == (0, "demo-1.0.tar.gz")

    code, result, _ = run_runner(layout, "wheel", source=str(unpacked(layout)), backend_path=["."])

    assert (code, result["done"]) == (0, "demo-1.0-py3-none-any.whl")
    assert wheel_saw(layout)["cwd"] == "demo-1.0"


def test_requirements_a_backend_asks_for_are_handed_back(layout: dict[str, Path]) -> None:
    requires = json.dumps({"wheel": ["extra-build-dep>=1"]})
    code, result, _ = run_runner(layout, "wheel", env={"FAKE_REQUIRES": requires})
    assert code == 0
    assert result["need"] == ["extra-build-dep>=1"]
    assert "done" not in result

    code, result, _ = run_runner(layout, "wheel", env={"FAKE_REQUIRES": requires}, ready=True)

    assert (code, result["done"]) == (0, "demo-1.0-py3-none-any.whl")


def test_a_hook_that_raises_is_an_error_with_its_traceback(layout: dict[str, Path]) -> None:
    code, result, stderr = run_runner(layout, "wheel", env={"FAKE_RAISE": "wheel"})

    assert code == 1
    assert result["error"]["hook"] == "build_wheel"
    assert "ValueError('the wheel cannot be built')" in result["error"]["message"]
    assert "ValueError: the wheel cannot be built" in stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="hooks in one process without fork")
def test_a_hook_that_ends_the_process_is_an_error(layout: dict[str, Path]) -> None:
    code, result, _ = run_runner(layout, "sdist", env={"FAKE_EXIT": "sdist"})

    assert code == 1
    assert result["error"] == {
        "hook": "build_sdist",
        "message": "build_sdist ended the process (exit status 3)",
    }


def test_a_backend_that_does_not_import_is_an_error(layout: dict[str, Path]) -> None:
    code, result, stderr = run_runner(layout, "sdist", backend="no_such_backend.build")

    assert code == 1
    assert result["error"]["hook"] == "import"
    assert "cannot import the build backend 'no_such_backend.build'" in result["error"]["message"]
    assert "ModuleNotFoundError" in stderr
