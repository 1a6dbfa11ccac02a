"""What one check's steps share: where empty sandboxes and the runtime may be kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandboxverify.options._check_options import CheckOptions
from sandboxverify.pipeline._state import run_context
from sandboxverify.sandbox._bwrap import Bubblewrap
from sandboxverify.sandbox._confinement import ProcessIsolation
from sandboxverify.sandbox._seccomp import syscall_filter
from tests.helpers import FIXTURES


@pytest.mark.parametrize(
    ("isolation", "cache", "kept"),
    [("strict", True, True), ("strict", False, False), ("process", True, False)],
)
def test_sandboxes_and_the_runtime_are_kept_only_in_the_os_sandbox_with_the_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, isolation: str, cache: bool, kept: bool
) -> None:
    """Unconfined code could write a kept sandbox that every later check copies, or the
    runtime every later check reads."""
    monkeypatch.setenv("SANDBOXVERIFY_CACHE_DIR", str(tmp_path))
    options = CheckOptions(targets=(str(FIXTURES / "good-hatch"),), installer="uv", cache=cache)
    chosen = (
        ProcessIsolation(syscall_filter())
        if isolation == "process"
        else Bubblewrap(Path("/usr/bin/bwrap"))
    )
    context = run_context(options, chosen, lambda event: None)
    assert context.venv_templates == (tmp_path / "venv-templates" if kept else None)
    assert context.runtime_templates == (tmp_path / "runtime" if kept else None)
