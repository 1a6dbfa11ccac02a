"""The ``ipython`` host against the real IPython: ``%load_ext <module>`` in a fresh shell, then a
cell, in a fresh interpreter each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.runtime.hosts.installed import assert_failed_at, load_named

pytest.importorskip("IPython")  # in the test extra

FILES = {
    "demo_ipython/__init__.py": "",
    "demo_ipython/timer.py": '''
        """Times each cell."""

        import time

        _started = []


        def _start(info):
            _started.append(time.perf_counter())


        def _stop(result):
            _started.pop()


        def shout(line):
            return line.upper()


        def load_ipython_extension(ipython):
            ipython.events.register("pre_run_cell", _start)
            ipython.events.register("post_run_cell", _stop)
            ipython.register_magic_function(shout, "line", "shout")
    ''',
    # IPython catches what a callback raises, shows it after every cell and goes on
    "demo_ipython/broken_callback.py": """
        def _after(result):
            raise RuntimeError("the callback lost its state")


        def load_ipython_extension(ipython):
            ipython.events.register("post_run_cell", _after)
    """,
    # an event IPython never had: register refuses it
    "demo_ipython/unknown_event.py": """
        def load_ipython_extension(ipython):
            ipython.events.register("post_cell_run", print)
    """,
    "demo_ipython/broken_import.py": """
        from IPython.core.magic import no_such_decorator

        def load_ipython_extension(ipython):
            pass
    """,
    "demo_ipython/no_function.py": "VALUE = 1\n",
}


def load(tmp_path: Path, module: str) -> dict[str, Any]:
    return load_named(tmp_path, "ipython", module, FILES, env=_env(tmp_path))


def _env(tmp_path: Path) -> dict[str, str]:
    import os  # noqa: PLC0415

    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {**os.environ, "HOME": str(home)}


def test_an_extension_that_adds_a_magic_and_callbacks_loads_and_runs_a_cell(
    tmp_path: Path,
) -> None:
    loaded = load(tmp_path, "demo_ipython.timer")

    assert loaded["ok"] is True, loaded
    assert [(t["kind"], t["name"]) for t in loaded["tools"]] == [
        ("extension", "demo_ipython.timer"),
        ("magic", "%shout"),
        ("callback", "pre_run_cell: _start"),
        ("callback", "post_run_cell: _stop"),
    ]
    assert loaded["tools"][0]["description"] == "Times each cell."
    # history off, its profile in a directory of its own: nothing written to the home
    assert not any((tmp_path / "home").iterdir())


@pytest.mark.parametrize(
    ("module", "stage", "words"),
    [
        ("demo_ipython.broken_callback", "exercise", "the callback lost its state"),
        ("demo_ipython.unknown_event", "setup", "post_cell_run"),
        ("demo_ipython.broken_import", "import", "no_such_decorator"),
        ("demo_ipython.no_function", "application", "no load function"),
    ],
)
def test_a_broken_extension_fails_at_its_stage(
    tmp_path: Path, module: str, stage: str, words: str
) -> None:
    assert_failed_at(load(tmp_path, module), stage, words)


def test_ipython_missing(tmp_path: Path) -> None:
    missing = load_named(tmp_path, "ipython", "demo_ipython.timer", FILES, no_site=True)
    assert missing["error"]["type"] == "ApplicationMissing"
