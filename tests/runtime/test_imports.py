"""The ``imports`` action's parts, in-process: module names from RECORD, the plan, the imports,
the progress file, and where loaded modules came from."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from importlib import machinery
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.runtime._discovery import Installed, record_entries
from sandboxverify.runtime._imports import (
    RUNTIME_ROOT,
    allowed_roots,
    entry_modules,
    import_modules,
    missing_files,
    module_names,
    outside_modules,
    plan,
    reach,
    standard_library,
)
from sandboxverify.runtime._sitedirs import path_sources, site_packages
from sandboxverify.sandbox._workspace import Workspace
from tests.runtime.test_stdlib_only import interpreters


def test_module_names_come_from_site_packages_files_only(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    extension = machinery.EXTENSION_SUFFIXES[0]
    files = [
        site / "pkg" / "__init__.py",
        site / "pkg" / "core.py",
        site / "pkg" / "core.pyi",
        site / "pkg" / "__main__.py",
        site / "pkg" / f"_speedups{extension}",
        site / "pkg" / "sub" / "__init__.py",
        site / "pkg" / "sub" / "deep.py",
        site / "pkg" / "data" / "tool.json",
        site / "pkg" / "not-a-package" / "helper.py",
        site / "pkg-1.0.dist-info" / "RECORD",
        site / "pkg-1.0.data" / "scripts" / "run.py",
        site / "single.py",
        tmp_path / "bin" / "script.py",  # outside site-packages
    ]
    names = module_names([str(path) for path in files], [str(site.resolve())])

    assert names == [
        "pkg",
        "pkg.__main__",
        "pkg._speedups",
        "pkg.core",
        "pkg.sub",
        "pkg.sub.deep",
        "single",
    ]


def test_the_plan_puts_packages_first_and_says_why_it_skips() -> None:
    modules, skipped = plan(
        ["pkg.windows_only", "pkg", "pkg.__main__", "pkg.plugin.helpers", "pkg.plugin", "pkg.a"],
        skip=["pkg.windows_*"],
        exclude={"pkg.plugin": "plugin 'p' failed to load from it"},
    )

    assert modules == ["pkg", "pkg.a"]
    assert skipped == [
        {"module": "pkg.__main__", "reason": "a __main__ module runs its program when imported"},
        {"module": "pkg.plugin", "reason": "plugin 'p' failed to load from it"},
        {"module": "pkg.plugin.helpers", "reason": "plugin 'p' failed to load from it"},
        {"module": "pkg.windows_only", "reason": "--import-skip pkg.windows_*"},
    ]


@pytest.fixture
def package(tmp_path: Path) -> Iterator[Path]:
    """A throwaway package on ``sys.path``, forgotten again afterwards."""
    root = tmp_path / "src"
    (root / "svtest_pkg" / "broken").mkdir(parents=True)
    sys.path.insert(0, str(root))
    try:
        yield root / "svtest_pkg"
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n.split(".")[0] == "svtest_pkg"]:
            del sys.modules[name]


def test_each_module_is_imported_and_announced_before_it_is(package: Path) -> None:
    (package / "__init__.py").write_text("")
    (package / "good.py").write_text("VALUE = 1\n")
    (package / "exits.py").write_text("import sys\nsys.exit('no')\n")
    (package / "raises.py").write_text("def f():\n    raise ValueError('bad value')\nf()\n")
    (package / "broken" / "__init__.py").write_text("import svtest_missing_dependency\n")
    (package / "broken" / "inner.py").write_text("")
    progress = io.StringIO()
    names = [
        "svtest_pkg",
        "svtest_pkg.broken",
        "svtest_pkg.broken.inner",
        "svtest_pkg.exits",
        "svtest_pkg.good",
        "svtest_pkg.raises",
    ]

    results, skipped = import_modules(names, progress)

    by_name = {result["module"]: result for result in results}
    assert [r["module"] for r in results if r["ok"]] == ["svtest_pkg", "svtest_pkg.good"]
    assert by_name["svtest_pkg.broken"]["error"]["type"] == "ModuleNotFoundError"
    assert by_name["svtest_pkg.exits"]["error"] == {
        "type": "SystemExit",
        "message": "no",
        "traceback": by_name["svtest_pkg.exits"]["error"]["traceback"],
    }
    traceback = by_name["svtest_pkg.raises"]["error"]["traceback"]
    assert "raises.py" in traceback and "ValueError: bad value" in traceback
    assert "importlib" not in traceback  # only the module's own frames
    # a package that failed takes its submodules with it: one failure, not one per submodule
    assert skipped == [
        {
            "module": "svtest_pkg.broken.inner",
            "reason": "its package svtest_pkg.broken failed to import",
        }
    ]
    notes = [json.loads(line) for line in progress.getvalue().splitlines()]
    assert notes[0] == {"importing": "svtest_pkg"}
    assert notes[1]["module"] == "svtest_pkg" and notes[1]["ok"] is True
    assert [n["importing"] for n in notes if "importing" in n] == [
        n for n in names if n != "svtest_pkg.broken.inner"
    ]


def test_what_a_module_raises_is_its_failure_whatever_its_class(package: Path) -> None:
    """A config error derived from BaseException (Mako's test helpers) fails its module, and
    the run goes on; each failure says what it was missing."""
    (package / "__init__.py").write_text("")
    (package / "config.py").write_text(
        "class MissingConfig(BaseException):\n    pass\n\nraise MissingConfig('./setup.cfg')\n"
    )
    (package / "chart.py").write_text(
        "try:\n    import svtest_absent_pygal\nexcept ImportError as exc:\n"
        "    raise ImportError('install pkg[histogram]') from exc\n"
    )
    (package / "later.py").write_text("")

    results, _ = import_modules(
        ["svtest_pkg", "svtest_pkg.chart", "svtest_pkg.config", "svtest_pkg.later"], io.StringIO()
    )

    by_name = {result["module"]: result for result in results}
    assert by_name["svtest_pkg.config"]["error"]["type"] == "MissingConfig"
    assert by_name["svtest_pkg.later"]["ok"] is True
    assert by_name["svtest_pkg.chart"]["cause"] == {
        "missing": ["svtest_absent_pygal"],
        "names": [],
        "skip": False,
        "requires_platform": [],
        "python_test": "",
        # the way in: this run's frame, then the module's, at the import whose failure its
        # raise re-raised
        "frames": [
            {"module": "sandboxverify.runtime._imports", "imports": []},
            {"module": "importlib", "imports": []},
            {"module": "svtest_pkg.chart", "imports": ["svtest_absent_pygal"]},
        ],
        "swallowed": ["svtest_absent_pygal"],
    }


def test_what_a_failed_module_looked_for_in_vain_is_recorded_though_it_caught_it(
    package: Path,
) -> None:
    """kombu's Kafka transport catches the ImportError of confluent_kafka, then subclasses a
    name it never got: its NameError says nothing of what it lacked. Submodules a package
    lacks are that package's lack of a name; a module that imported keeps no record."""
    (package / "__init__.py").write_text("")
    (package / "tolerant.py").write_text(
        "try:\n    from svtest_absent_kafka import KafkaError\nexcept ImportError:\n    pass\n"
        "try:\n    import svtest_pkg.absent_submodule\nexcept ImportError:\n    pass\n\n"
        "class NoBrokers(KafkaError):\n    pass\n"
    )
    (package / "probing.py").write_text(
        "try:\n    import svtest_absent_speedup\nexcept ImportError:\n    pass\n"
    )
    before = list(sys.meta_path)

    results, _ = import_modules(
        ["svtest_pkg", "svtest_pkg.probing", "svtest_pkg.tolerant"], io.StringIO()
    )

    by_name = {result["module"]: result for result in results}
    assert by_name["svtest_pkg.probing"] == {
        "module": "svtest_pkg.probing",
        "ok": True,
        "error": None,
    }
    failed = by_name["svtest_pkg.tolerant"]
    assert failed["error"]["type"] == "NameError"
    assert failed["cause"]["missing"] == []
    assert failed["cause"]["swallowed"] == ["svtest_absent_kafka"]
    assert sys.meta_path == before  # the finder that listens is gone once the run is


def test_entry_points_modules_and_what_their_failure_attempted_are_reached(
    package: Path,
) -> None:
    """As its application does: an entry point's module imported first; a module it needed is
    reached when its failure failed the entry point's module, not when that survived it."""
    (package / "__init__.py").write_text("")
    (package / "plugin.py").write_text("from svtest_pkg import helper\n")
    (package / "helper.py").write_text("import svtest_missing_dependency\n")
    (package / "cli.py").write_text(
        "try:\n    from svtest_pkg import optional\nexcept ImportError:\n    optional = None\n"
    )
    (package / "optional.py").write_text("import svtest_missing_dependency\n")
    own = {"svtest_pkg", *(f"svtest_pkg.{n}" for n in ("plugin", "helper", "cli", "optional"))}
    progress = io.StringIO()

    reached = reach(
        {"svtest_pkg.plugin": "group:p", "svtest_pkg.cli": "console_scripts:c"}, own, progress
    )

    assert reached == {
        "svtest_pkg.plugin": "group:p",
        "svtest_pkg": "group:p",  # its package: imported first, as every import of it is
        "svtest_pkg.helper": "group:p",
        "svtest_pkg.cli": "console_scripts:c",
    }
    notes = [json.loads(line) for line in progress.getvalue().splitlines()]
    assert notes[0] == {"reaching": "svtest_pkg.plugin"}


def test_modules_from_outside_the_allowed_roots_are_named_with_the_pth_behind_them(
    package: Path, tmp_path: Path
) -> None:
    (package / "__init__.py").write_text("")
    site = tmp_path / "site"
    site.mkdir()
    (site / "shadow.pth").write_text(f"# a comment\nimport os\n{package.parent}\n")
    (site / "other.pth").write_text("/does/not/exist\n")
    __import__("svtest_pkg")

    sources = path_sources([str(site)], own=[str(site / "shadow.pth")])
    outside = outside_modules(allowed_roots(site_packages()), sources)

    assert sources == {str(package.parent.resolve()): {"pth": "shadow.pth", "shipped": True}}
    assert [entry for entry in outside if entry["module"].startswith("svtest_")] == [
        {
            "module": "svtest_pkg",
            "file": str(package / "__init__.py"),
            "pth": "shadow.pth",
            "shipped": True,
        }
    ]


def test_the_standard_library_and_the_runtime_are_allowed_roots() -> None:
    roots = allowed_roots(site_packages())

    assert RUNTIME_ROOT in roots
    outside = {entry["module"] for entry in outside_modules(roots, {})}
    loaded = {"json", "sysconfig", "_json", "pytest", "sandboxverify.runtime._imports"}
    assert loaded <= set(sys.modules)
    assert outside & loaded == set()


def test_a_standard_library_file_linked_elsewhere_is_inside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Debian's /usr/lib/python3.X/sitecustomize.py is a link to /etc/python3.X/sitecustomize.py
    stdlib, etc = tmp_path / "stdlib", tmp_path / "etc"
    stdlib.mkdir()
    etc.mkdir()
    (etc / "svtest_linked.py").write_text("")
    (stdlib / "svtest_linked.py").symlink_to(etc / "svtest_linked.py")
    monkeypatch.syspath_prepend(str(stdlib))
    __import__("svtest_linked")
    roots = allowed_roots(site_packages())

    def outside(**linked: Any) -> set[str]:
        return {entry["module"] for entry in outside_modules(roots, {}, **linked)}

    assert "svtest_linked" in outside()
    assert "svtest_linked" not in outside(linked_from=[str(stdlib)])
    assert os.path.abspath(sysconfig.get_paths()["stdlib"]) in standard_library()


def test_record_entries_that_were_not_installed_are_missing(tmp_path: Path) -> None:
    site = tmp_path / "site"
    info = site / "pkg-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "pkg").mkdir()
    (site / "pkg" / "__init__.py").write_text("")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    (info / "RECORD").write_text(
        "pkg/__init__.py,,\npkg/gone.py,,\npkg/__pycache__/gone.cpython-312.pyc,,\n"
        "pkg-1.0.dist-info/METADATA,,\npkg-1.0.dist-info/RECORD,,\n"
    )
    dist = Installed(str(info), "pkg", "1.0")
    files = record_entries(dist)
    assert files is not None

    missing = missing_files(files, [dist.locate_file(f) for f in files])

    assert missing == ["pkg/gone.py"]


@pytest.mark.parametrize("python", interpreters(), ids=lambda p: p.parent.parent.name)
def test_the_action_runs_in_a_venv_and_reports_through_the_progress_file(
    python: Path, tmp_path: Path
) -> None:
    """The whole action, on every Python, in a real environment with an installed distribution."""
    venv = tmp_path / "venv"
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(venv)], check=True)
    sandbox_python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [
                str(sandbox_python),
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "svtest_dist").mkdir()
    (site / "svtest_dist" / "__init__.py").write_text("")
    (site / "svtest_dist" / "ok.py").write_text("")
    (site / "svtest_dist" / "bad.py").write_text("raise RuntimeError('at import')\n")
    info = site / "svtest_dist-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: svtest-dist\nVersion: 1.0\n")
    (info / "RECORD").write_text(
        "svtest_dist/__init__.py,,\nsvtest_dist/ok.py,,\nsvtest_dist/bad.py,,\n"
        "svtest_dist/lost.py,,\nsvtest_dist-1.0.dist-info/RECORD,,\n"
    )
    progress = tmp_path / "progress"
    result_path = tmp_path / "result.json"
    request = {
        "action": "imports",
        "protocol": 1,
        "nonce": "n",
        "result": str(result_path),
        "dist": "svtest-dist",
        "skip": [],
        "exclude": {},
        "progress": str(progress),
    }
    with Workspace() as workspace:
        completed = subprocess.run(
            [
                str(sandbox_python),
                "-I",
                "-c",
                "import sys; sys.path.append(sys.argv[1]); "
                "from sandboxverify.runtime._probe import main; main()",
                str(workspace.install_runtime()),
            ],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            check=False,
            cwd=tmp_path,
        )
    assert completed.returncode == 0, completed.stderr

    result = json.loads(result_path.read_text())
    assert result["ok"] is True
    assert result["modules"] == ["svtest_dist", "svtest_dist.bad", "svtest_dist.ok"]
    assert [r["module"] for r in result["results"] if not r["ok"]] == ["svtest_dist.bad"]
    assert result["missing_files"] == ["svtest_dist/lost.py"]
    assert result["outside"] == []
    notes = [json.loads(line) for line in progress.read_text().splitlines()]
    assert notes[0] == {"planned": result["modules"]}
    assert notes[-1] == {"done": True}


def _dist(where: Path, entry_points: str) -> Installed:
    """A distribution with only entry points."""
    info = where / "dist-1.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    return Installed(str(info), "dist", "1")


def test_an_entry_point_naming_a_file_in_a_package_reaches_no_module(tmp_path: Path) -> None:
    # npe2 finds the package of 'napari_console:napari.yaml' and reads the file: it never
    # imports napari_console, whose import needs Qt bindings
    dist = _dist(
        tmp_path,
        "[napari.manifest]\nnapari-console = napari_console:napari.yaml\n\n"
        "[pytest11]\nconsole = napari_console.fixtures\n",
    )
    modules = ["napari_console", "napari_console.fixtures"]
    assert entry_modules(dist, modules) == {"napari_console.fixtures": "pytest11:console"}
