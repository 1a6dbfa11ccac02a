"""The ``pylint`` host against the real pylint: a module named in ``--load-plugins``, run on a
small module in a fresh interpreter each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.runtime.hosts.installed import assert_failed_at, load_named

pytest.importorskip("pylint")  # in the test extra

FILES = {
    "demo_pylint/__init__.py": "",
    "demo_pylint/checkers.py": '''
        from pylint.checkers import BaseChecker


        class NoPrint(BaseChecker):
            """Flags calls of print."""

            name = "demo-no-print"
            msgs = {"W9901": ("print called", "demo-print", "Use logging.")}

            def visit_call(self, node):
                if getattr(node.func, "name", None) == "print":
                    self.add_message("demo-print", node=node)


        class Crashing(BaseChecker):
            name = "demo-crashing"
            msgs = {"W9902": ("never", "demo-never", "never")}

            def visit_functiondef(self, node):
                raise RuntimeError("the checker cannot walk a function")
    ''',
    "demo_pylint/good.py": '''
        """Flags print calls."""

        from demo_pylint.checkers import NoPrint


        def register(linter):
            linter.register_checker(NoPrint(linter))
            # pylint groups checkers of one name: one registration
            linter.register_checker(NoPrint(linter))
    ''',
    # changes what pylint says, registers no checker (as plugins built on
    # pylint-plugin-utils' suppressions do)
    "demo_pylint/quiet.py": """
        def register(linter):
            linter.disable("missing-module-docstring")
    """,
    "demo_pylint/crashing.py": """
        from demo_pylint.checkers import Crashing


        def register(linter):
            linter.register_checker(Crashing(linter))
    """,
    # pylint 3 removed the interfaces checkers once declared (__implements__)
    "demo_pylint/old_api.py": """
        def register(linter):
            linter.register_checker(linter.IAstroidChecker)
    """,
    "demo_pylint/broken_import.py": """
        from pylint.interfaces import IAstroidChecker

        def register(linter):
            pass
    """,
    "demo_pylint/no_register.py": "VALUE = 1\n",
}


def load(tmp_path: Path, module: str) -> dict[str, Any]:
    return load_named(tmp_path, "pylint", module, FILES)


def test_a_plugin_that_registers_a_checker_runs_in_pylint(tmp_path: Path) -> None:
    loaded = load(tmp_path, "demo_pylint.good")

    assert loaded["ok"] is True, loaded
    assert [(t["kind"], t["name"]) for t in loaded["tools"]] == [
        ("plugin", "demo_pylint.good"),
        ("checker", "demo-no-print"),
    ]
    assert loaded["tools"][0]["description"] == "Flags print calls."


def test_a_plugin_that_registers_no_checker_still_loads(tmp_path: Path) -> None:
    loaded = load(tmp_path, "demo_pylint.quiet")

    assert loaded["ok"] is True, loaded
    assert [(t["kind"], t["name"]) for t in loaded["tools"]] == [("plugin", "demo_pylint.quiet")]


@pytest.mark.parametrize(
    ("module", "stage", "words"),
    [
        # pylint goes on without a checker that crashed: the user sees "Fatal error" per file
        ("demo_pylint.crashing", "exercise", "astroid-error"),
        ("demo_pylint.old_api", "setup", "IAstroidChecker"),
        ("demo_pylint.broken_import", "import", "IAstroidChecker"),
        ("demo_pylint.no_register", "validate", "has no register(linter)"),
    ],
)
def test_a_broken_plugin_fails_at_its_stage(
    tmp_path: Path, module: str, stage: str, words: str
) -> None:
    assert_failed_at(load(tmp_path, module), stage, words)


def test_the_crash_names_the_plugins_checker(tmp_path: Path) -> None:
    error = load(tmp_path, "demo_pylint.crashing")["error"]

    assert "pylint --load-plugins=demo_pylint.crashing" in error["message"]
    assert "the checker cannot walk a function" in error["traceback"], error


def test_pylint_missing(tmp_path: Path) -> None:
    missing = load_named(tmp_path, "pylint", "demo_pylint.good", FILES, no_site=True)
    assert missing["error"]["type"] == "ApplicationMissing"
