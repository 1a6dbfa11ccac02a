"""What a check does before the package's code runs: in process isolation, where build code
could write the cache directory and our modules, the compiled ``pyproject.toml`` validator is
already loaded, and so is every module a verdict may need; in the OS sandbox what only failures
need is imported when they happen."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_process_isolation_loads_the_compiled_validator_before_the_build(tmp_path: Path) -> None:
    code = (
        "from sandboxverify.artifacts import pyproject_validator\n"
        "from sandboxverify.pipeline._headstart import import_later_stages\n"
        "from sandboxverify.sandbox._confinement import PROCESS\n"
        "assert pyproject_validator.cache_info().currsize == 0\n"
        "import_later_stages(PROCESS)\n"
        "print(pyproject_validator.cache_info().currsize)\n"
    )
    env = {**os.environ, "SANDBOXVERIFY_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"
    assert list((tmp_path / "validate-pyproject").iterdir())


#: imported only when a check needs them (something failed, new artifacts to inspect): in
#: process isolation, before any package code runs all the same
_ON_DEMAND = (
    "sandboxverify.pipeline._dependents",
    "sandboxverify.stages._dependents",
    "sandboxverify.stages._application_needs",
    "sandboxverify.artifacts._metadata",
    "sandboxverify.artifacts._index",
    "packaging.metadata",
    "email.parser",
)


def _imported_after(isolation: str) -> set[str]:
    """The modules imported once ``import_later_stages(isolation)`` is done (``isolation``:
    Python that makes one)."""
    code = (
        "import sys, threading\n"
        "from pathlib import Path\n"
        "from sandboxverify.pipeline._headstart import import_later_stages\n"
        "from sandboxverify.sandbox._bwrap import Bubblewrap\n"
        "from sandboxverify.sandbox._confinement import PROCESS\n"
        f"import_later_stages({isolation})\n"
        "for thread in threading.enumerate():\n"  # the OS sandbox's imports run on a thread
        "    if thread is not threading.current_thread():\n"
        "        thread.join(60)\n"
        "assert 'sandboxverify.pipeline._inspect' in sys.modules\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def test_process_isolation_imports_what_failures_need_before_the_build() -> None:
    """Package code run without the OS sandbox could rewrite a module not yet imported."""
    assert set(_ON_DEMAND) <= _imported_after("PROCESS")


def test_otherwise_what_only_failures_need_is_not_imported_ahead() -> None:
    imported = _imported_after("Bubblewrap(Path('/usr/bin/bwrap'))")
    assert "sandboxverify.pipeline._run" in imported
    assert not set(_ON_DEMAND) & imported
