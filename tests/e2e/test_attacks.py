"""Hostile packages, checked end to end in each isolation: what the OS sandbox blocks, and what
process isolation still allows (the README's table says the same).

``fixtures/attack-escape`` tries one escape per plugin (and its build backend tries some while it
builds); each reports in a tool's description how far it got. Whatever it could change on the
host is checked here, on the host. It only writes where ``SVFIX_ATTACK_HINTS`` points: a copy of
sandboxverify this check runs from, a fake home, fake GITHUB_ENV/GITHUB_PATH files and a copy of
the fixture, all in a throwaway directory.

The other ``fixtures/attack-*`` each try one thing: reach the host's services, list its sockets,
read the caller's keyring, make system calls no plugin needs, forge a result nested too deep,
print 300 MiB. The half that needs the OS sandbox fails, never skips, under
``SANDBOXVERIFY_TEST_REQUIRE_OS_SANDBOX`` (``.ci/run`` sets it).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT, copy_fixture, fixture, run_cli, tree_digest
from tests.hostile_host import ANSWER, holding_a_key, host_services
from tests.os_sandbox import REQUIRE_OS_SANDBOX, require_os_sandbox

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

SECRET = "svfix-fake-secret-value"
MARKER = "svfix-attack-was-here"
#: what the attacker prints: none of it may start a line of our output (GitHub would obey it)
COMMANDS = ("::error::svfix", "::add-mask::svfix", "::stop-commands::svfix")


@dataclass(frozen=True)
class Attack:
    mode: str
    code: int
    stdout: str
    stderr: str
    seconds: float
    report: dict[str, Any]
    root: Path
    source_before: dict[str, str]
    installation_before: dict[str, str]
    survivors: str

    def outcome(self, plugin: str) -> dict[str, Any]:
        [tool] = [t for t in self.report["runs"][0]["tools"] if t["name"] == plugin]
        outcome = json.loads(tool["description"])
        assert isinstance(outcome, dict)
        return outcome

    def achieved(self, plugin: str) -> bool:
        return bool(self.outcome(plugin)["achieved"])

    @property
    def codes(self) -> list[str]:
        return [failure["code"] for failure in self.report["failures"]]


def _installation_digest(package: Path) -> dict[str, str]:
    return {
        name: digest for name, digest in tree_digest(package).items() if "__pycache__" not in name
    }


@pytest.fixture(scope="module", params=["namespaces", "process"])
def attack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Attack:
    mode: str = request.param
    if mode == "namespaces":
        require_os_sandbox()
    root = tmp_path_factory.mktemp(f"attack-{mode}")
    # the sandboxverify this check runs from: a copy, since the package may rewrite it
    install = root / "install"
    shutil.copytree(
        ROOT / "sandboxverify",
        install / "sandboxverify",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    home, tmp = root / "home", root / "tmp"
    home.mkdir()
    tmp.mkdir()
    (home / ".pypirc").write_text("[pypi]\nusername = __token__\npassword = svfix-pypirc-secret\n")
    for name in ("github_env", "github_path"):
        (root / name).write_text("")
    source = copy_fixture("attack-escape", root)
    hints = {
        "sandboxverify": str(install / "sandboxverify"),
        "source": str(source),
        "home": str(home),
        "github_env": str(root / "github_env"),
        "github_path": str(root / "github_path"),
    }
    env = {
        **os.environ,
        "PYTHONPATH": str(install),
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "UV_CACHE_DIR": str(root / "uv-cache"),
        # sandboxverify's own artifact cache, not in the home the attack is judged by
        "SANDBOXVERIFY_CACHE_DIR": str(root / "artifact-cache"),
        "FAKE_SECRET_TOKEN": SECRET,
        "GITHUB_ENV": str(root / "github_env"),
        "GITHUB_PATH": str(root / "github_path"),
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(root / "summary.md"),
        "SVFIX_ATTACK_HINTS": json.dumps(hints),
    }
    source_before = tree_digest(source)
    installation_before = _installation_digest(install / "sandboxverify")
    isolation = "strict" if mode == "namespaces" else "process"
    started = time.monotonic()
    # the output goes to pipes this test reads to the end: a daemon holding one would hang it
    result = run_cli(
        [
            "check",
            str(source),
            "--isolation",
            isolation,
            "--installer",
            "uv",
            "--pass-env",
            "SVFIX_ATTACK_HINTS",
            "--json",
            str(root / "report.json"),
            "--junit-xml",
            str(root / "junit.xml"),
            "-vv",
        ],
        env=env,
        cwd=root,
        timeout=400,
    )
    seconds = time.monotonic() - started
    survivors = subprocess.run(
        ["pgrep", "-f", f"svfix-attack-daemon {tmp}"], capture_output=True, text=True, check=False
    ).stdout.strip()
    report = json.loads((root / "report.json").read_text())
    return Attack(
        mode,
        result.code,
        result.stdout,
        result.stderr,
        seconds,
        report,
        root,
        source_before,
        installation_before,
        survivors,
    )


def test_the_check_ran_in_the_isolation_asked_for(attack: Attack) -> None:
    assert attack.report["isolation"] == attack.mode
    assert attack.report["isolation_fallback"] is None
    assert f"isolation: {attack.mode}" in attack.stdout


def test_the_callers_secret_in_other_processes_environments(attack: Attack) -> None:
    """/proc/<pid>/environ of sandboxverify and its callers: the OS sandbox has its own /proc."""
    assert SECRET not in attack.stdout + attack.stderr + json.dumps(attack.report)
    if attack.mode == "namespaces":
        assert attack.outcome("environ") == {"achieved": False, "detail": []}
    else:  # possible: the README says so
        assert attack.achieved("environ")


def test_the_callers_pypirc(attack: Attack) -> None:
    if attack.mode == "namespaces":
        assert not attack.achieved("pypirc")
    else:  # found through HOME in the environment of sandboxverify's process
        assert attack.outcome("pypirc")["detail"] == [str(attack.root / "home")]


def test_github_env_and_github_path(attack: Attack) -> None:
    written = {name: (attack.root / name).read_text() for name in ("github_env", "github_path")}
    if attack.mode == "namespaces":
        assert written == {"github_env": "", "github_path": ""}
    else:
        assert written == {"github_env": "SVFIX_INJECTED=1\n", "github_path": "/svfix\n"}


def test_workflow_commands_in_the_packages_output_never_reach_ours(attack: Attack) -> None:
    # -vv shows every command's output, and the plugin's error message carries one too
    assert "svfix-attack-annotation" in attack.stdout
    assert "plugin_load_failed" in attack.codes
    for line in (attack.stdout + attack.stderr).splitlines():
        assert not line.lstrip().startswith(COMMANDS), line


def test_patching_sandboxverify_never_changes_the_verdict(attack: Attack) -> None:
    """It rewrites modules sandboxverify only needs once the check is over, to exit 0."""
    assert attack.code == 1  # the verdict: the workflow_commands plugin fails
    assert (attack.root / "junit.xml").read_text().startswith("<?xml")
    assert attack.report["ok"] is False
    after = _installation_digest(attack.root / "install" / "sandboxverify")
    if attack.mode == "namespaces":
        assert not attack.achieved("patch_host")
        assert after == attack.installation_before
        assert "host_modified" not in attack.codes
    else:  # possible, and found: the check fails on it whatever else happened
        assert attack.achieved("patch_host")
        assert after != attack.installation_before
        assert "host_modified" in attack.codes


def test_the_source_tree_and_home(attack: Attack) -> None:
    source = attack.root / "attack-escape"
    left = sorted(p.name for p in [*source.iterdir(), *(attack.root / "home").iterdir()])
    if attack.mode == "namespaces":
        assert tree_digest(source) == attack.source_before
        assert left == sorted([".pypirc", *(p.name for p in fixture("attack-escape").iterdir())])
    else:  # the plugin and the build backend both wrote to both
        assert {MARKER, f"{MARKER}-sdist", f"{MARKER}-wheel"} <= set(left)


def test_a_setsid_daemon_is_gone_and_the_pipes_it_held_do_not_keep_us_waiting(
    attack: Attack,
) -> None:
    assert attack.achieved("daemon")
    assert attack.survivors == ""
    assert attack.seconds < 300  # the daemon sleeps for 600 s


def test_a_dependency_in_site_packages_and_uvs_cache(attack: Attack) -> None:
    if attack.mode == "namespaces":
        detail = attack.outcome("site_packages")["detail"][0]
        assert detail.endswith("Read-only file system")
    else:  # the throwaway environment's copy only: installed with --link-mode copy
        assert attack.achieved("site_packages")
    cached = list((attack.root / "uv-cache").rglob("six.py"))
    assert cached
    assert not [path for path in cached if MARKER in path.read_text()]


def test_the_build_backend_runs_with_nothing_of_the_installers_and_no_real_home(
    attack: Attack,
) -> None:
    build = attack.outcome("build")["detail"]
    assert set(build) == {"sdist", "wheel"}
    for seen in build.values():
        assert seen["installer_settings"] == []  # no PIP_*, no UV_*
        assert seen["credentials"] == []
        assert seen["home"] != str(attack.root / "home")
        if attack.mode == "namespaces":
            assert seen["pypirc_read"] == []
            assert seen["secret_seen"] == []
            assert not any(ok for ok, _ in seen["written"])
        else:
            assert seen["pypirc_read"] == [str(attack.root / "home")]
            assert seen["secret_seen"]
            assert all(ok for ok, _ in seen["written"])


@pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap is Linux's")
def test_strict_isolation_without_the_os_sandbox_is_a_usage_error_before_any_work(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "bin"  # a PATH without bwrap
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty), "TMPDIR": str(tmp_path)}

    result = run_cli(["check", str(fixture("good-hatch")), "--isolation", "strict"], env=env)

    assert result.code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines()[0] == (
        "ERROR --isolation strict: the OS sandbox is unavailable: "
        "bubblewrap (bwrap) is not installed"
    )
    assert [p for p in tmp_path.iterdir() if p.name.startswith("sandboxverify-")] == []


# --- one attack each --------------------------------------------------------------------------

MODES = ["namespaces", "process"]


@dataclass(frozen=True)
class Checked:
    """A check of one ``fixtures/attack-*``: how it ended, its report, where it ran."""

    code: int
    stdout: str
    stderr: str
    report: dict[str, Any]

    def outcome(self, tool: str) -> dict[str, Any]:
        [found] = [t for t in self.report["runs"][0]["tools"] if t["name"] == tool]
        outcome = json.loads(found["description"])
        assert isinstance(outcome, dict)
        return outcome

    @property
    def failures(self) -> dict[str, dict[str, Any]]:
        return {failure["plugin"]: failure for failure in self.report["failures"]}


def check_hostile(
    name: str, mode: str, root: Path, hints: dict[str, Any], *options: str
) -> Checked:
    """``sandboxverify check`` of ``fixtures/<name>`` in ``mode``, the hints passed on."""
    if mode == "namespaces":
        require_os_sandbox()
    source = copy_fixture(name, root)
    (root / "tmp").mkdir()
    env = {**os.environ, "SVFIX_ATTACK_HINTS": json.dumps(hints), "TMPDIR": str(root / "tmp")}
    result = run_cli(
        [
            "check",
            str(source),
            "--isolation",
            "strict" if mode == "namespaces" else "process",
            "--installer",
            "uv",
            "--pass-env",
            "SVFIX_ATTACK_HINTS",
            "--json",
            str(root / "report.json"),
            *options,
        ],
        env=env,
        cwd=root,
    )
    assert "Traceback" not in result.stdout + result.stderr
    report = json.loads((root / "report.json").read_text())
    assert report["isolation"] == mode
    return Checked(result.code, result.stdout, result.stderr, report)


@pytest.fixture(scope="module")
def services() -> Iterator[dict[str, Any]]:
    with host_services() as (port, abstract):
        yield {"port": port, "abstract": abstract}


@pytest.mark.parametrize("mode", MODES)
def test_the_hosts_services_on_loopback_and_abstract_sockets(
    tmp_path: Path, mode: str, services: dict[str, Any]
) -> None:
    checked = check_hostile("attack-host-services", mode, tmp_path, services)

    assert checked.code == 0, checked.stderr
    reached = {tool: checked.outcome(tool) for tool in ("tcp", "abstract")}
    if mode == "namespaces":  # a network of its own: nothing listens on its loopback
        assert reached == {
            tool: {"achieved": False, "detail": ["Connection refused"]} for tool in reached
        }
        assert checked.report["network"] == "none"
    else:  # no network namespace without the OS sandbox: the report says so
        assert reached == {tool: {"achieved": True, "detail": [ANSWER]} for tool in reached}
        assert checked.report["network"] == "host"


def test_with_network_the_os_sandbox_shares_the_hosts(
    tmp_path: Path, services: dict[str, Any]
) -> None:
    checked = check_hostile("attack-host-services", "namespaces", tmp_path, services, "--network")

    assert checked.code == 0, checked.stderr
    assert checked.outcome("tcp") == {"achieved": True, "detail": [ANSWER]}
    assert checked.report["network"] == "host"


def test_a_project_cannot_give_its_own_code_the_network(tmp_path: Path) -> None:
    project = copy_fixture("attack-host-services", tmp_path)
    with (project / "pyproject.toml").open("a") as handle:
        handle.write("\n[tool.sandboxverify]\nnetwork = true\n")

    result = run_cli(["check", str(project)], cwd=tmp_path)

    assert result.code == 2
    assert "[tool.sandboxverify] cannot set 'network'" in result.stderr
    assert "--network" in result.stderr


@pytest.mark.parametrize("mode", MODES)
def test_the_hosts_sockets_in_proc_net(tmp_path: Path, mode: str, services: dict[str, Any]) -> None:
    checked = check_hostile("attack-proc-net", mode, tmp_path, services)

    assert checked.code == 0, checked.stderr
    listed = checked.outcome("proc_net")
    if mode == "namespaces":  # its /proc/net is its own network's: no socket at all
        assert listed == {"achieved": False, "detail": ["unix: 0", "tcp: 0"]}
    else:
        assert listed["achieved"] is True


@pytest.mark.parametrize("mode", MODES)
def test_the_callers_session_keyring(tmp_path: Path, mode: str) -> None:
    """Both isolations start package code with a keyring of its own, under a filter that
    refuses keyctl (where this machine has a table: the skip below is for the others)."""
    secret = f"svfix-keyring-{secrets.token_hex(4)}"
    hints = {"key": f"svfix-{secrets.token_hex(4)}", "secret": secret}
    checked = holding_a_key(
        hints["key"], lambda: check_hostile("attack-keyring", mode, tmp_path, hints), secret
    )

    assert checked.code == 0, checked.stderr
    assert secret not in checked.stdout + checked.stderr
    assert checked.report["syscall_filter"] is not None
    assert checked.outcome("keyring") == {"achieved": False, "detail": ["search: EPERM"]}


@pytest.mark.parametrize("mode", MODES)
def test_system_calls_no_plugin_needs(tmp_path: Path, mode: str) -> None:
    checked = check_hostile("attack-syscalls", mode, tmp_path, {})

    assert checked.code == 0, checked.stderr
    for tool in ("io_uring", "ptrace", "unshare"):
        assert checked.outcome(tool) == {"achieved": False, "detail": ["EPERM"]}, tool


@pytest.mark.parametrize("mode", MODES)
def test_a_forged_result_nested_too_deep_is_a_failure_not_a_crash(
    tmp_path: Path, mode: str
) -> None:
    checked = check_hostile("attack-deep-result", mode, tmp_path, {})

    assert checked.code == 1  # a verdict: never 3
    failure = checked.failures["deep"]
    assert failure["code"] == "limit_exceeded"
    assert "nests deeper than 100 levels (the bound on a result)" in failure["message"]


@pytest.mark.parametrize("mode", MODES)
def test_300_mib_on_stdout_is_stopped_and_never_reaches_the_disk(tmp_path: Path, mode: str) -> None:
    checked = check_hostile("attack-flood", mode, tmp_path, {}, "--keep")

    assert checked.code == 1
    failure = checked.failures["flood"]
    assert failure["code"] == "limit_exceeded"
    assert "printed more than 64 MiB (the bound on a command's output)" in failure["message"]
    logs = list(Path(checked.report["workdir"]).rglob("*.log"))
    assert logs
    assert max(log.stat().st_size for log in logs) < 2 * 1024 * 1024 + 200
    shutil.rmtree(checked.report["workdir"])


def test_ci_turns_a_missing_os_sandbox_into_a_failure() -> None:
    """The README's test command skips the namespace half of this suite where there is no OS
    sandbox; CI must never pass without it."""
    script = (ROOT / ".ci" / "run").read_text()
    assert f"export {REQUIRE_OS_SANDBOX}=1" in script
    assert script.index(f"export {REQUIRE_OS_SANDBOX}=1") < script.index("python -m pytest")
