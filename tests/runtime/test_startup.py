"""Every sandbox process starts the runtime: it reports what it did, cheaply."""

from __future__ import annotations

import json
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.runtime._probe import python_version
from sandboxverify.sandbox._workspace import Workspace
from tests.runtime.hosts.installed import install
from tests.runtime.test_stdlib_only import interpreters

VERSIONS = [
    "3.12.1 (main, Dec 19 2023, 20:14:15) [GCC 12.2.0]",
    "3.9.18 (main, Nov 22 2024, 03:04:05) \n[GCC 12.2.0]",
    "3.13.0rc1 (main, Aug  1 2024, 10:11:12) [Clang 15.0.0 (clang-1500.3.9.4)]",
    "3.14.0a1+ (heads/main:0123abc, Oct 16 2024, 10:00:00) [GCC 13.2.0]",
    "3.10.14 (75b3de9d9da1, Aug 27 2024, 14:33:33)\n[PyPy 7.3.17 with GCC 10.2.1 20210130]",
]


def test_the_python_version_is_the_one_platform_reports() -> None:
    assert python_version() == platform.python_version()


@pytest.mark.parametrize("version", VERSIONS)
def test_the_python_version_of_a_prerelease_or_a_dev_build(
    monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    monkeypatch.setattr(sys, "version", version)
    assert python_version() == platform.python_version()


# Every sandbox process imports the runtime before its action starts, several per check: an
# action must not pay for what only another needs. The runtime copy runs under ``python -I -S``
# (nothing of the test environment importable), the plugin from a site directory of its own.
WHAT_AN_ACTION_RUNS = (
    "import json, sys; sys.path[:0] = [sys.argv[1]]; sys.path.append(sys.argv[2]);"
    "from sandboxverify.runtime import _probe;"
    "request = json.loads(sys.argv[3]);"
    "result = getattr(_probe, request['action'])(request);"
    "print(json.dumps({'ok': result['ok'], 'error': result['error'], 'modules': list(sys.modules)}))"
)
PLUGIN = '''
def add(a: int, b: int = 1) -> int:
    """Add two numbers."""
    return a + b

def setup(api):
    api.register_tool("add", add)

def main():
    """The command line."""

class Host:
    protocol = 1
    groups = ["sandboxverify.plugins"]

    def load(self, entry_point, context):
        return [{"name": entry_point.name, "kind": "command", "description": None}]

host = Host()
'''
SERVER = Path(__file__).parent / "hosts" / "mcp_fake_server.py"
#: what no load needs, whatever its host
NOT_FOR_A_LOAD = {
    "dataclasses",
    "difflib",
    "importlib.metadata",
    "pathlib",
    "platform",
    "traceback",
    "sandboxverify.runtime._discovery",
    "sandboxverify.runtime._imports",
    "sandboxverify.runtime._sitedirs",
}
HOSTS = {f"sandboxverify.runtime.hosts._{host}" for host in ("native", "entrypoints", "mcp")}


def requests(python: Path) -> dict[str, tuple[dict[str, Any], set[str]]]:
    """Per case: the request, and the modules its process must not import."""
    server = " ".join(shlex.quote(str(word)) for word in (python, SERVER, "normal"))
    return {
        "discover": (
            {"action": "discover", "dist": "svstart-demo", "groups": ["sandboxverify.plugins"]},
            {
                "dataclasses",
                "platform",
                "sandboxverify.runtime._imports",
                "sandboxverify.runtime._registrations",
                "sandboxverify.runtime.hosts",
                # the metadata of wheels is read directly (``_discovery``), but on Python 3.9; and
                # the runtime imports ``typing`` only where an action needs it
                *(
                    ("importlib.metadata", "email", "typing", "zipfile")
                    if reads_directly(python)
                    else ()
                ),
            },
        ),
        "native": (
            {"action": "load", "host": "native", "plugin": ref("demo", "svstart_demo:setup")},
            NOT_FOR_A_LOAD | HOSTS - {"sandboxverify.runtime.hosts._native"},
        ),
        "entrypoints": (
            {"action": "load", "host": "entrypoints", "plugin": ref("cli", "svstart_demo:main")},
            NOT_FOR_A_LOAD
            | HOSTS - {"sandboxverify.runtime.hosts._entrypoints"}
            | {"sandboxverify.runtime._schema"},
        ),
        "applications": (
            {"action": "applications", "dist": "svstart-demo", "groups": {"svstart.x": None}},
            {
                "dataclasses",
                "platform",
                "sandboxverify.runtime._imports",
                "sandboxverify.runtime._registrations",
                *HOSTS,
                "sandboxverify.runtime.hosts._application_host",
            },
        ),
        "shipped": (
            {
                "action": "load",
                "host": "svstart-demo",
                "plugin": ref("cli", "svstart_demo:main"),
                "options": {"shipped": {"dist": "svstart-demo", "value": "svstart_demo:host"}},
            },
            # the application's host is handed an importlib.metadata.EntryPoint (and so pathlib)
            (NOT_FOR_A_LOAD - {"importlib.metadata", "pathlib"})
            | HOSTS
            | {"sandboxverify.runtime._applications", "sandboxverify.runtime._schema"},
        ),
        "mcp": (
            {"action": "load", "host": "mcp", "timeout": 30, "plugin": ref("fake", server)},
            NOT_FOR_A_LOAD
            | HOSTS - {"sandboxverify.runtime.hosts._mcp"}
            | {"inspect", "sandboxverify.runtime._results"},
        ),
    }


def reads_directly(python: Path) -> bool:
    """Whether the runtime reads metadata without ``importlib.metadata`` there (3.10 on)."""
    newer = "import sys; print(sys.version_info >= (3, 10))"
    done = subprocess.run([str(python), "-c", newer], capture_output=True, text=True, check=True)
    return done.stdout.strip() == "True"


def ref(name: str, value: str) -> dict[str, str]:
    return {"name": name, "group": "sandboxverify.plugins", "value": value}


@pytest.mark.parametrize("python", interpreters(), ids=lambda p: p.parent.parent.name)
def test_an_action_imports_only_what_it_needs(tmp_path: Path, python: Path) -> None:
    site = install(
        tmp_path / "site",
        "svstart-demo",
        {"sandboxverify.plugins": {"demo": "svstart_demo:setup"}},
        {"svstart_demo.py": PLUGIN},
    )
    with Workspace() as workspace:
        runtime = workspace.install_runtime()
        for case, (request, unwanted) in requests(python).items():
            argv = [str(site), str(runtime), json.dumps(request)]
            completed = subprocess.run(
                [str(python), "-I", "-S", "-c", WHAT_AN_ACTION_RUNS, *argv],
                capture_output=True,
                text=True,
                check=False,
                cwd=tmp_path,
                timeout=60,
            )
            assert completed.returncode == 0, completed.stderr
            done = json.loads(completed.stdout)
            assert done["ok"], (case, done["error"])
            assert sorted(unwanted & set(done["modules"])) == [], case
