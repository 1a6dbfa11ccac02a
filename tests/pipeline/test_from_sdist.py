"""The runs of a given wheel and of the wheel built from the given sdist: which runs a check
has, which wheels are compared, and a stage that passes with one and fails with the other."""

from __future__ import annotations

import sys
from pathlib import Path

from packaging.tags import platform_tags
from packaging.utils import canonicalize_name
from packaging.version import Version

from sandboxverify.artifacts import SDIST_LACKS, WHEEL_STALE, Artifact, BuildResult, inspect_wheel
from sandboxverify.pipeline._from_sdist import (
    PlannedRun,
    compared,
    planned_runs,
    with_differences,
)
from sandboxverify.pipeline._run import RunResult
from sandboxverify.pipeline._state import Built
from sandboxverify.report import PluginRecord, Run, Stage, StageStatus
from sandboxverify.sandbox import Interpreter
from tests.helpers import make_wheel

HERE = sys.version_info[:3]
HERE_TAG = f"cp{HERE[0]}{HERE[1]}"
OLDER = (3, HERE[1] - 1, 0)
FILES = {"demo/__init__.py": "", "demo/plugin.py": ""}
SDIST = Artifact("sdist", Path("demo-1.0.tar.gz"), canonicalize_name("demo"), Version("1.0"), "0")


def _python(version_info: tuple[int, int, int]) -> tuple[Interpreter, str]:
    version = ".".join(map(str, version_info))
    return Interpreter(version, Path(sys.executable), version, version_info, "cpython"), version


def _wheel(directory: Path, filename: str, files: dict[str, str] = FILES) -> Artifact:
    directory.mkdir(parents=True, exist_ok=True)
    return inspect_wheel(make_wheel(directory, filename, files=files))


def _built(
    tmp_path: Path, given: list[Artifact], from_sdist: Artifact, *pythons: tuple[int, int, int]
) -> Built:
    result = BuildResult(SDIST, tuple(given), (from_sdist.path,), (), 0.0, True, False, from_sdist)
    return Built(result, tmp_path, tuple(_python(p) for p in pythons), {})


def test_the_wheel_built_from_the_sdist_is_compared_with_the_given_wheel_each_python_installs(
    tmp_path: Path,
) -> None:
    """A pure wheel and a platform wheel given: the platform wheel is what this Python
    installs, the pure one what older Pythons do; each pair is compared once."""
    # a tag PyPI accepts (a bare linux_x86_64 wheel given is refused as PyPI refuses it)
    tag = next(t for t in platform_tags() if not t.startswith("linux_"))
    platform = f"demo-1.0-{HERE_TAG}-{HERE_TAG}-{tag}.whl"
    given = [
        _wheel(tmp_path / "given", "demo-1.0-py3-none-any.whl", {"demo/__init__.py": ""}),
        _wheel(tmp_path / "given", platform, {**FILES, "demo/_speedups.so": ""}),
    ]
    from_sdist = _wheel(tmp_path / "built", "demo-1.0-py3-none-any.whl")
    built = _built(tmp_path, given, from_sdist, HERE, OLDER, (3, HERE[1] - 2, 0))

    differences, notes = compared(built.result, built.pythons)

    assert notes == ()
    assert [f.message.split(" differ in files: ")[1] for f in differences] == [
        "only in the given wheel: demo/_speedups.so",
        "only in the wheel built from the sdist: demo/plugin.py",  # the older Pythons' pure one
    ]
    assert differences[0].message.startswith(f"the given wheel {platform} and")
    assert [run.from_sdist for run in planned_runs(built)] == [False, True] * 3


def test_a_wheel_built_from_the_sdist_that_fits_no_python_is_a_note_and_no_run(
    tmp_path: Path,
) -> None:
    elsewhere = f"demo-1.0-cp{OLDER[0]}{OLDER[1]}-cp{OLDER[0]}{OLDER[1]}-win_arm64.whl"
    given = [_wheel(tmp_path / "given", "demo-1.0-py3-none-any.whl")]
    built = _built(tmp_path, given, _wheel(tmp_path / "built", elsewhere), HERE)

    differences, [note] = compared(built.result, built.pythons)

    assert differences == ()
    assert note.startswith(f"{elsewhere}, the wheel built from demo-1.0.tar.gz, fits none")
    assert [run.from_sdist for run in planned_runs(built)] == [False]


def _result(python: str, *, built: bool, probe: StageStatus, plugin_ok: bool) -> RunResult:
    stages = (Stage("install", "passed", 0.1), Stage("probe", probe, 0.1))
    plugin = PluginRecord("helped", "sandboxverify.plugins", "demo.plugin:setup", plugin_ok)
    run = Run(python, "/py", probe == "passed", stages, (plugin,), wheel="d.whl", wheel_built=built)
    return RunResult(run, ())


def test_a_stage_that_passes_with_one_wheel_and_fails_with_the_other_fails_the_run_it_failed(
    tmp_path: Path,
) -> None:
    interpreter, label = _python(HERE)
    planned = [
        PlannedRun(interpreter, label),
        PlannedRun(interpreter, label, from_sdist=True),
        PlannedRun(interpreter, "other"),
        PlannedRun(interpreter, "other", from_sdist=True),
    ]
    results = [
        _result(label, built=False, probe="passed", plugin_ok=True),
        _result(label, built=True, probe="failed", plugin_ok=False),
        _result("other", built=False, probe="failed", plugin_ok=False),
        _result("other", built=True, probe="passed", plugin_ok=True),
    ]

    found = with_differences(planned, results)

    assert [len(result.failures) for result in found] == [0, 1, 1, 0]
    sdist_lacks, stale = found[1].failures[0], found[2].failures[0]
    assert sdist_lacks.code == stale.code == "artifact_mismatch"
    assert (sdist_lacks.wheel_built, sdist_lacks.hint) == (True, SDIST_LACKS)
    assert (stale.wheel_built, stale.hint) == (False, WHEEL_STALE)
    assert sdist_lacks.message == (
        f"on Python {label} the wheel built from the sdist (d.whl) fails where the given wheel "
        "(d.whl) passes: stage(s) probe (plugin(s) 'helped' load only with the given wheel)"
    )
