"""The PEP 517 hook runner: the steps of a build from one interpreter, each hook as if in a
process of its own; requests and answers as JSON lines."""

from __future__ import annotations

import json
import os
import select
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
import json, os, subprocess, sys, tarfile

REQUIRES = json.loads(os.environ.get("FAKE_REQUIRES", "{}"))
if os.environ.get("FAKE_NOISE"):
    print('{"done": "forged.whl"}')  # on import, in the runner itself

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
    if os.environ.get("FAKE_NOISE"):
        print('{"done": "forged.tar.gz"}')
        sys.stdout.flush()
    if os.environ.get("FAKE_STDIN"):
        with open(os.environ["FAKE_STDIN"], "w") as handle:
            handle.write(sys.stdin.read())
    if os.environ.get("FAKE_LEFTOVER"):  # a daemon the hook leaves running
        sleeper = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True
        )
        with open(os.environ["FAKE_LEFTOVER"], "w") as handle:
            handle.write(str(sleeper.pid))
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


def request_for(layout: dict[str, Path], step: str, **request: Any) -> dict[str, Any]:
    return {
        "backend": "fake_backend",
        "step": step,
        "source": str(layout["source"]),
        "out": str(layout["out"]),
        **request,
    }


def converse(
    layout: dict[str, Path], requests: list[dict[str, Any]], env: dict[str, str] | None = None
) -> tuple[int, list[dict[str, Any]], str]:
    """The runner's exit code, its answers (one JSON line each) and its standard error."""
    completed = subprocess.run(
        [sys.executable, str(layout["hooks"] / "_pep517.py")],
        input="".join(json.dumps(request) + "\n" for request in requests),
        env={**os.environ, "PYTHONPATH": str(layout["backends"]), **(env or {})},
        cwd=layout["root"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    answers = [json.loads(line) for line in completed.stdout.splitlines()]
    return completed.returncode, answers, completed.stderr


def run_runner(
    layout: dict[str, Path], step: str, *, env: dict[str, str] | None = None, **request: Any
) -> tuple[int, dict[str, Any], str]:
    """One request, one answer."""
    code, answers, stderr = converse(layout, [request_for(layout, step, **request)], env)
    assert len(answers) == 1, (answers, stderr)
    return code, answers[0], stderr


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


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


class Runner:
    """The runner as the build frontend talks to it: a request, its answer, the next."""

    def __init__(self, layout: dict[str, Path], env: dict[str, str] | None = None) -> None:
        self.layout = layout
        self.proc = subprocess.Popen(
            [sys.executable, str(layout["hooks"] / "_pep517.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(layout["backends"]), **(env or {})},
            cwd=layout["root"],
            text=True,
        )

    def ask(self, step: str, **request: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request_for(self.layout, step, **request)) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], 30)
        assert ready, "no answer within 30 s"
        answer = json.loads(self.proc.stdout.readline())
        assert isinstance(answer, dict)
        return answer

    def close(self) -> tuple[int, str]:
        try:
            _, stderr = self.proc.communicate(timeout=30)
        finally:
            self.proc.kill()
        return self.proc.returncode, stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="hooks in one process without fork")
def test_one_runner_builds_the_sdist_then_the_wheel_each_hook_as_if_alone(
    layout: dict[str, Path],
) -> None:
    runner = Runner(layout)
    assert runner.ask("sdist")["done"] == "demo-1.0.tar.gz"
    answer = runner.ask("wheel", source=str(unpacked(layout)))
    assert runner.close()[0] == 0

    assert answer["done"] == "demo-1.0-py3-none-any.whl"
    # the sdist's hooks imported the project's module from the source tree, the wheel's from
    # the unpacked sdist: build_wheel saw neither, as in a process of its own
    assert wheel_saw(layout) == {
        "cwd": "demo-1.0",
        "helper_imported": False,
        "tree_on_path": False,
        "preloaded": False,
    }


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a subreaper is Linux's")
def test_a_process_a_hook_leaves_running_is_killed_before_the_next_hook(
    layout: dict[str, Path], tmp_path: Path
) -> None:
    pid_file = tmp_path / "leftover.pid"
    runner = Runner(layout, env={"FAKE_LEFTOVER": str(pid_file)})

    assert runner.ask("sdist")["done"] == "demo-1.0.tar.gz"

    leftover = int(pid_file.read_text())
    try:
        assert not running(leftover)  # before the wheel's hooks could meet it
        assert runner.ask("wheel", source=str(unpacked(layout)))["done"].endswith(".whl")
    finally:
        runner.close()
        if running(leftover):
            os.kill(leftover, 9)


def test_what_the_backend_prints_never_passes_for_an_answer(layout: dict[str, Path]) -> None:
    code, answers, stderr = converse(
        layout, [request_for(layout, "sdist")], env={"FAKE_NOISE": "1"}
    )

    assert code == 0
    assert [answer["done"] for answer in answers] == ["demo-1.0.tar.gz"]
    assert '{"done": "forged.whl"}' in stderr and '{"done": "forged.tar.gz"}' in stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="hooks in one process without fork")
def test_a_hook_reads_nothing_of_the_requests(layout: dict[str, Path], tmp_path: Path) -> None:
    seen = tmp_path / "stdin.txt"
    runner = Runner(layout, env={"FAKE_STDIN": str(seen)})
    try:
        # the hook reads its standard input to the end while the runner waits for the next
        # request on its own: the hook finds it empty, and the runner still answers
        assert runner.ask("sdist")["done"] == "demo-1.0.tar.gz"
        assert runner.ask("sdist")["done"] == "demo-1.0.tar.gz"
    finally:
        code, _ = runner.close()
    assert code == 0
    assert seen.read_text() == ""


def test_the_runner_ends_at_the_first_error(layout: dict[str, Path]) -> None:
    requests = [request_for(layout, "wheel"), request_for(layout, "sdist")]

    code, answers, _ = converse(layout, requests, env={"FAKE_RAISE": "wheel"})

    assert code == 1
    assert len(answers) == 1 and answers[0]["error"]["hook"] == "build_wheel"
    assert not (layout["out"] / "demo-1.0.tar.gz").exists()
