"""What a check does before the package's code runs: in process isolation, where build code
could write the cache directory, the compiled ``pyproject.toml`` validator is already loaded."""

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
