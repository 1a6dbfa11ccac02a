"""The ``mypy`` host against the real mypy: a module named in ``plugins = ...``, run on a small
typed module in a fresh interpreter each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.runtime.hosts.installed import assert_failed_at, load_named

pytest.importorskip("mypy")  # in the test extra

FILES = {
    "demo_mypy/__init__.py": "",
    "demo_mypy/good.py": '''
        """Types the demo's factories."""

        from mypy.plugin import Plugin


        class DemoPlugin(Plugin):
            """Looks at every function."""

            def get_function_hook(self, fullname):
                return None


        def plugin(version):
            return DemoPlugin
    ''',
    # a hook that breaks on the first call it sees: mypy's INTERNAL ERROR
    "demo_mypy/crashing.py": """
        from mypy.plugin import Plugin


        class CrashingPlugin(Plugin):
            def get_function_hook(self, fullname):
                return self._check

            def _check(self, ctx):
                return ctx.no_such_attribute


        def plugin(version):
            return CrashingPlugin
    """,
    "demo_mypy/returns_instance.py": """
        from mypy.plugin import Plugin


        def plugin(version):
            return object()
    """,
    "demo_mypy/refuses.py": """
        def plugin(version):
            raise RuntimeError(f"mypy {version} is too new for this plugin")
    """,
    "demo_mypy/no_entry.py": "VALUE = 1\n",
    # stops mypy on purpose without its section in the users' configuration (django-stubs)
    "demo_mypy/needs_section.py": """
        import sys

        from mypy.plugin import Plugin


        class NeedsSection(Plugin):
            def __init__(self, options):
                super().__init__(options)
                print("error: no section [mypy.plugins.demo] found", file=sys.stderr)
                sys.exit(2)


        def plugin(version):
            return NeedsSection
    """,
    # stops mypy on purpose for anything else: its users meet that too
    "demo_mypy/refuses_version.py": """
        import sys

        from mypy.plugin import Plugin


        class TooNew(Plugin):
            def __init__(self, options):
                sys.exit("error: this plugin does not support mypy 2")


        def plugin(version):
            return TooNew
    """,
}


def load(tmp_path: Path, module: str) -> dict[str, Any]:
    return load_named(tmp_path, "mypy", module, FILES)


def test_a_plugin_returning_its_class_runs_in_mypy(tmp_path: Path) -> None:
    loaded = load(tmp_path, "demo_mypy.good")

    assert loaded["ok"] is True, loaded
    assert [(t["kind"], t["name"]) for t in loaded["tools"]] == [
        ("plugin", "demo_mypy.good"),
        ("plugin_class", "demo_mypy.good.DemoPlugin"),
    ]


@pytest.mark.parametrize(
    ("module", "stage", "words"),
    [
        ("demo_mypy.crashing", "exercise", "no_such_attribute"),
        ("demo_mypy.returns_instance", "validate", "return value of"),
        ("demo_mypy.refuses", "setup", "is too new for this plugin"),
        ("demo_mypy.no_entry", "validate", "has no plugin(version)"),
        ("demo_mypy.refuses_version", "setup", "does not support mypy 2"),
    ],
)
def test_a_broken_plugin_fails_at_its_stage(
    tmp_path: Path, module: str, stage: str, words: str
) -> None:
    assert_failed_at(load(tmp_path, module), stage, words)


def test_a_plugin_that_stops_mypy_for_its_users_configuration_is_noted(tmp_path: Path) -> None:
    loaded = load(tmp_path, "demo_mypy.needs_section")

    assert loaded["ok"] is True, loaded
    assert loaded["tools"] == []
    assert loaded["skipped"] == (
        "it needs its users' configuration: the plugin stopped mypy without it "
        "(error: no section [mypy.plugins.demo] found)"
    )
