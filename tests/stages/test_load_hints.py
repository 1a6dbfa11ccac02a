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
