"""What a plugin that failed to load is told to change."""

from __future__ import annotations

import pytest

from sandboxverify.report import PluginError, PluginRecord
from sandboxverify.runtime.hosts import HOSTS
from sandboxverify.stages._load_hints import load_hint


def _failed(stage: str, kind: str, message: str) -> PluginRecord:
    error = PluginError(type=kind, message=message, traceback="", stage=stage)
    return PluginRecord("sub", "markdown.extensions", "mdx_sub:Ext", ok=False, error=error)


@pytest.mark.parametrize("stage", ["application", "setup", "exercise", "import"])
def test_a_module_that_no_longer_exists_is_named_in_every_stage(stage: str) -> None:
    """MarkdownSubscript imports pkg_resources while Markdown builds the extension."""
    record = _failed(stage, "ModuleNotFoundError", "No module named 'pkg_resources'")
    hint = load_hint(record, frozenset({"mdx_sub"}), "3.11.7", HOSTS["markdown"].wording)
    assert hint.startswith("'pkg_resources' was part of setuptools, which removed it in ")


def test_another_failure_in_the_application_keeps_the_hosts_wording() -> None:
    record = _failed("application", "ModuleNotFoundError", "No module named 'yaml'")
    wording = HOSTS["markdown"].wording
    assert load_hint(record, frozenset({"mdx_sub"}), "3.11.7", wording) == wording.setup


@pytest.mark.parametrize(
    ("message", "blames_the_entry_point"),
    [
        # the entry point's attribute, as resolving it says
        ("module 'mdx_sub' has no attribute 'Ext'", True),
        # raised by the module's own code while it imported (ipython-memory-usage outside a
        # running shell): the entry point is right
        ("'NoneType' object has no attribute 'user_ns'", False),
    ],
)
def test_only_the_entry_points_own_attribute_missing_blames_the_entry_point(
    message: str, blames_the_entry_point: bool
) -> None:
    record = _failed("import", "AttributeError", message)
    hint = load_hint(record, frozenset({"mdx_sub"}), "3.11.7", HOSTS["markdown"].wording)
    assert ("fix 'mdx_sub:Ext' in [project.entry-points]" in hint) is blames_the_entry_point
