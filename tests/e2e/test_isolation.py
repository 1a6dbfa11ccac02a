"""Clean means clean: no secrets, no host packages, no source tree; the tree is never touched."""

from __future__ import annotations

import json
import os
import site
import sys
import sysconfig
from pathlib import Path
from typing import Any, Literal

import pytest

from sandboxverify import CheckOptions, check
from sandboxverify.pipeline import CommandFinished, Event
from sandboxverify.sandbox import PROCESS_RISKS
from sandboxverify.sandbox._bwrap import available
from sandboxverify.sandbox._seccomp import native_arch
from tests.helpers import copy_fixture, edited_fixture, fixture, run_cli, tree_digest

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


_LOOKS_AROUND = '''
"""Lists what it can see on the way from the runtime's directory up to /, and reads .pypirc."""
import json, os, sys

def setup(api):
    seen, path = {}, sys.path[-1]
    while path != "/":
        path = os.path.dirname(path)
        try:
            seen[path] = sorted(os.listdir(path))
        except OSError as exc:
            seen[path] = str(exc)
    home = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(sys.path[-1]))))
    try:
        with open(os.path.join(home, ".pypirc")) as handle:
            secret = handle.read()
    except OSError as exc:
        secret = None
    report = json.dumps({"runtime": sys.path[-1], "seen": seen, "secret": secret})
    api.register_tool("report", lambda: report, description=report)
'''


@pytest.mark.usefixtures("os_sandbox")
def test_a_runtime_kept_in_the_users_home_shows_nothing_else_of_it(tmp_path: Path) -> None:
    """The default cache directory is ~/.cache/sandboxverify; the runtime kept there is bound
    read-only into later checks' OS sandboxes, and the rest of the home stays out of sight."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".pypirc").write_text("[pypi]\npassword = svfix-secret-in-home\n")
    project = tmp_path / "looks-around"
    (project / "svfix_looks_around").mkdir(parents=True)
    (project / "svfix_looks_around" / "__init__.py").write_text(_LOOKS_AROUND)
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
        '[project]\nname = "svfix-looks-around"\nversion = "1.0.0"\n'
        '[project.entry-points."sandboxverify.plugins"]\nlooks = "svfix_looks_around:setup"\n'
    )
    unset = ("SANDBOXVERIFY_CACHE_DIR", "XDG_CACHE_HOME")
    env = {name: value for name, value in os.environ.items() if name not in unset}
    env["HOME"] = str(home)
    args = ["check", str(project), "--installer", "uv", "--isolation", "strict", "--json", "-"]
    for _ in range(2):  # the first keeps the runtime, the second reads the kept one
        result = run_cli(args, env=env)
        assert result.code == 0, result.stderr
    [tool] = result.json()["runs"][0]["tools"]
    seen = json.loads(tool["description"])
    kept = home / ".cache" / "sandboxverify" / "runtime"
    assert Path(seen["runtime"]).parent == kept
    assert seen["secret"] is None
    assert seen["seen"][str(home)] == [".cache"]
    assert seen["seen"][str(home / ".cache")] == ["sandboxverify"]
    assert seen["seen"][str(kept.parent)] == ["runtime"]


#: prepended to a package: importing it fails where package code holds a pipe beyond the
#: standard streams (the one discovery came back through, left open)
_NO_PIPE_OF_OURS = """
import os as _os, stat as _stat
def _pipes():
    for name in _os.listdir("/proc/self/fd"):
        try:
            if int(name) > 2 and _stat.S_ISFIFO(_os.fstat(int(name)).st_mode):
                yield name
        except OSError:  # the descriptor listdir itself read through
            continue
if list(_pipes()):
    raise RuntimeError(f"package code holds pipes {list(_pipes())}")
"""


@pytest.mark.parametrize("isolation", ["auto", "process"])
def test_discovery_comes_from_the_import_run_before_any_package_code(
    tmp_path: Path, isolation: Literal["auto", "process"]
) -> None:
    """One process fewer: the import run sends discovery down a pipe it closes before it
    imports the package, whose modules (imported there too) find no pipe of ours."""
    project = edited_fixture(
        "good-hatch",
        tmp_path / "project",
        "svfix_good_hatch/__init__.py",
        lambda text: _NO_PIPE_OF_OURS + text,
    )
    events: list[Event] = []

    report = check(
        CheckOptions(
            targets=(str(project),),
            installer="uv",
            isolation=isolation,
            expect_tools=("greet", "add"),
            exact=True,
        ),
        on_event=events.append,
    )

    assert report.ok, report.failures
    [run] = report.runs
    assert run.imports is not None
    assert "svfix_good_hatch" in run.imports.imported  # the guard ran in the import run too
    labels = {e.outcome.command.label for e in events if isinstance(e, CommandFinished)}
    assert {"imports", "load-0-greeter"} <= labels
    assert "discover" not in labels
