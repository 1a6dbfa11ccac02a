"""Clean means clean: no secrets, no host packages, no source tree; the tree is never touched."""

from __future__ import annotations

import json
import os
import site
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.sandbox import PROCESS_RISKS
from sandboxverify.sandbox._bwrap import available
from sandboxverify.sandbox._seccomp import native_arch
from tests.helpers import copy_fixture, fixture, run_cli, tree_digest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

SECRETS = {
    "GITHUB_TOKEN": "ghp_secret_github_token_value",
    "PYPI_API_TOKEN": "pypi-secret-token-value",
    "TWINE_PASSWORD": "twine-secret-password",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-access-key-value",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-secret-request-token",
}


@pytest.fixture(scope="module")
def spy_report() -> dict[str, Any]:
    """What the spy plugin saw while loading inside the sandbox (run once, via the real CLI)."""
    env = {**os.environ, **SECRETS, "PIP_INDEX_URL_EXTRA_MARKER": "installer-only-setting"}
    result = run_cli(
        ["check", str(fixture("spy")), "--installer", "uv", "--json", "-", "-v"], env=env
    )
    assert result.code == 0, result.stderr
    report = result.json()
    [tool] = report["runs"][0]["tools"]
    seen = json.loads(tool["description"])
    seen["_stderr"] = result.stderr
    seen["_report"] = report
    assert isinstance(seen, dict)
    return seen


def test_plugin_code_sees_none_of_the_callers_secrets(spy_report: dict[str, Any]) -> None:
    leaked = set(SECRETS) & set(spy_report["env"])
    assert leaked == set()


def test_the_report_says_how_plugin_code_was_isolated(spy_report: dict[str, Any]) -> None:
    report = spy_report["_report"]
    expected = "namespaces" if available()[0] is not None else "process"
    assert report["isolation"] == expected
    assert f"isolation: {expected}" in spy_report["_stderr"]
    # no network of its own without the OS sandbox; the filter wherever there is a table
    assert report["network"] == ("none" if expected == "namespaces" else "host")
    arch = native_arch()
    assert report["syscall_filter"] == (arch.name if arch is not None else None)
    assert (f"process isolation: {PROCESS_RISKS}" in report["notes"]) == (expected == "process")


def test_plugin_code_sees_no_installer_settings(spy_report: dict[str, Any]) -> None:
    assert [name for name in spy_report["env"] if name.startswith(("PIP_", "UV_"))] == []


def test_secret_values_never_appear_in_our_output(spy_report: dict[str, Any]) -> None:
    rendered = spy_report["_stderr"] + json.dumps(spy_report["_report"])
    for value in SECRETS.values():
        assert value not in rendered


def test_plugin_code_gets_a_private_home_and_an_empty_working_directory(
    spy_report: dict[str, Any],
) -> None:
    assert spy_report["home"] != str(Path.home())
    assert spy_report["home"].endswith("/home")
    assert spy_report["cwd"].endswith("/work")
    assert Path(spy_report["home"]).parent == Path(spy_report["cwd"]).parent


def test_host_packages_are_not_importable_in_the_sandbox(spy_report: dict[str, Any]) -> None:
    importable = spy_report["importable"]
    # all installed on the host (sandboxverify or its test extra needs them), none declared by the spy
    for name in ("click", "packaging", "virtualenv", "build"):
        __import__(name)
        assert importable[name] is False, name


def test_sys_path_has_no_host_site_packages_and_no_source_tree(spy_report: dict[str, Any]) -> None:
    sandbox_path = [Path(entry) for entry in spy_report["sys_path"] if entry]
    host_site = {Path(p) for p in [*site.getsitepackages(), site.getusersitepackages()]}
    host_site.add(Path(sysconfig.get_paths()["purelib"]))
    for entry in sandbox_path:
        assert entry not in host_site, entry
        assert not str(entry).startswith(str(fixture("spy"))), entry
        assert "/src" not in str(entry), entry
    site_packages = [entry for entry in sandbox_path if entry.name == "site-packages"]
    assert site_packages, sandbox_path
    # the sandbox's own environment, wherever it was made (its workspace, or a slot)
    prefix = Path(spy_report["prefix"])
    assert prefix not in (Path(sys.prefix), Path(sys.base_prefix))
    assert all(entry.is_relative_to(prefix) for entry in site_packages), (prefix, site_packages)
    # the runtime is appended last, after everything the package could need: the check's
    # copy (``<workspace>/runtime``), or one an earlier check kept (``<cache>/runtime/<key>``)
    assert "runtime" in (sandbox_path[-1].name, sandbox_path[-1].parent.name)
    assert Path(sys.prefix) not in sandbox_path


def test_the_source_tree_is_byte_for_byte_unchanged(tmp_path: Path) -> None:
    """setuptools writes build/ and *.egg-info into the tree it builds: we build a copy."""
    for installer in ("uv", "pip"):
        project = copy_fixture("good-setuptools-src", tmp_path / installer)
        before = tree_digest(project)

        result = run_cli(["check", str(project), "--installer", installer, "-q"])

        assert result.code == 0, result.stdout + result.stderr
        assert tree_digest(project) == before
        leftovers = [
            p.name
            for p in project.rglob("*")
            if p.name in ("build", "dist") or p.name.endswith(".egg-info")
        ]
        assert leftovers == []
