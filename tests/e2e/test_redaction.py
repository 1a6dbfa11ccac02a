"""The caller's secrets never leave in any output, whatever carried them: a plugin's error
message and traceback, a tool's description, what a plugin prints while it loads."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

# as a CI job would have them; plugin code never gets them, so the package carries them itself
SECRETS = {
    "TWINE_PASSWORD": "pypi-AgEIcHlwaS5vcmc-twine-secret",
    "MY_SERVICE_API_KEY": "sk-live-0123456789abcdef-api-key",
    "DEPLOY_TOKEN": "ghs_deploy_token_0123456789",
}

PYPROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "leaky-plugins"
version = "1.0"
requires-python = ">=3.9"

[project.entry-points."sandboxverify.plugins"]
describes = "leaky_plugins:describes"
raises = "leaky_plugins:raises"

[tool.hatch.build.targets.wheel]
packages = ["leaky_plugins"]
"""

PLUGINS = '''\
"""Plugins that carry secrets into what they report (read from a file, baked in by mistake)."""
import sys

print("loading with {token}", file=sys.stderr)


def describes(api):
    api.register_tool(
        "upload", lambda: "ok", description="Uploads with the password {password}"
    )


def raises(api):
    raise RuntimeError("the service refused the key {key}")
'''


def leaky_project(tmp_path: Path) -> Path:
    project = tmp_path / "leaky-plugins"
    (project / "leaky_plugins").mkdir(parents=True)
    (project / "pyproject.toml").write_text(PYPROJECT)
    (project / "leaky_plugins" / "__init__.py").write_text(
        PLUGINS.format(
            token=SECRETS["DEPLOY_TOKEN"],
            password=SECRETS["TWINE_PASSWORD"],
            key=SECRETS["MY_SERVICE_API_KEY"],
        )
    )
    return project


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_no_output_carries_the_callers_secrets(installer: str, tmp_path: Path) -> None:
    project = leaky_project(tmp_path)
    reports = tmp_path / "reports"
    summary = tmp_path / "step-summary.md"
    env = {
        **os.environ,
        **SECRETS,
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_STEP_SUMMARY": str(summary),
    }

    result = run_cli(
        [
            "check",
            str(project),
            "--installer",
            installer,
            "--expect-tools",
            "upload,download",
            "--json",
            str(reports / "check.json"),
            "--junit-xml",
            str(reports / "junit.xml"),
            "-vv",
        ],
        env=env,
        cwd=tmp_path,
    )

    assert result.code == 1, result.stdout + result.stderr
    outputs = {
        "text and annotations": result.stdout,
        "stderr": result.stderr,
        "json": (reports / "check.json").read_text(),
        "junit": (reports / "junit.xml").read_text(),
        "summary": summary.read_text(),
    }
    for output, text in outputs.items():
        for name, value in SECRETS.items():
            assert value not in text, f"{name} in {output}"
    # the plugins' words did reach every output, with the secrets masked
    report = json.loads(outputs["json"])
    [tool] = report["runs"][0]["tools"]
    assert tool["description"] == "Uploads with the password ***"
    failed = {plugin["name"]: plugin for plugin in report["runs"][0]["plugins"]}["raises"]
    assert failed["error"]["message"] == "the service refused the key ***"
    assert "::error " in outputs["text and annotations"]
    for output in ("text and annotations", "junit", "summary"):
        assert "the service refused the key ***" in outputs[output], output
    assert "loading with ***" in outputs["text and annotations"]
