"""A host an application ships (group ``sandboxverify.hosts``, protocol 1): it judges the plugin
its way, and whatever it does wrong fails the plugin, never passes it. Each load runs as the
sandbox runs it, in a fresh isolated interpreter that sees only the test's site directory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.hosts.installed import PROBE, REPO, install, probe_load

GROUP = "svah.widgets"
WIDGET = '''
class Clock:
    """Shows the time."""

    def render(self):
        return "12:00"


class Broken:
    def render(self):
        raise ValueError("no template")
'''
#: hosts by what they do; each is the body of ``load(self, entry_point, context)``
LOADS = {
    "good": "widget = entry_point.load()\n"
    "        widget().render()\n"
    "        return [{'name': entry_point.name, 'kind': 'widget', 'description': widget.__doc__,"
    " 'ignored': context.group + str(context.protocol) + context.application}]",
    "raises": "raise RuntimeError('the host gave up')",
    "renders": "entry_point.load()().render()\n        return [{'name': 'x', 'kind': 'widget'}]",
    "int": "return 42",
    "dict": "return {'name': 'x', 'kind': 'widget'}",
    "strings": "return ['x']",
    "nameless": "return [{'kind': 'widget'}]",
    "kindless": "return [{'name': 'x'}]",
    "blank": "return [{'name': ' ', 'kind': 'widget'}]",
    "description": "return [{'name': 'x', 'kind': 'widget', 'description': 3}]",
    "subclass": "class D(dict):\n            pass\n        return [D(name='x', kind='widget')]",
    "exits": "import sys\n        sys.exit(0)",
    "empty": "return []",
}


def host_module(load: str, *, protocol: str = "1", groups: str = f"({GROUP!r},)") -> str:
    return (
        "class Host:\n"
        f"    protocol = {protocol}\n"
        f"    groups = {groups}\n"
        "    def load(self, entry_point, context):\n"
        f"        {load}\n"
        "host = Host()\n"
    )


def loaded(
    tmp_path: Path, module: str, value: str = "svah_app.verify:host", plugin: str = "Clock"
) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    """Load the widget ``plugin`` with the host ``module`` defines; the result (``{}`` when the
    process wrote none) and the process."""
    site = install(
        tmp_path / "site",
        "svah-app",
        {"sandboxverify.hosts": {GROUP: value}},
        {"svah_app/__init__.py": "", "svah_app/verify.py": module, "svah_widgets.py": WIDGET},
    )
    result = tmp_path / "result.json"
    request = {
        "action": "load",
        "host": "svah-app",
        "plugin": {"name": plugin.lower(), "group": GROUP, "value": f"svah_widgets:{plugin}"},
        "options": {"shipped": {"dist": "svah-app", "value": value}},
        "nonce": "x",
        "protocol": 1,
        "result": str(result),
    }
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", PROBE, str(site), str(REPO)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    return (json.loads(result.read_text()) if result.exists() else {}), done


def test_the_application_s_host_judges_the_plugin_and_reports_its_registrations(
    tmp_path: Path,
) -> None:
    result, _ = loaded(tmp_path, host_module(LOADS["good"]))
    assert result["ok"], result["error"]
    assert result["tools"] == [
        {"name": "clock", "kind": "widget", "description": "Shows the time.", "parameters": None}
    ]


def test_what_the_host_raises_is_the_plugin_s_failure_with_the_host_s_message(
    tmp_path: Path,
) -> None:
    result, _ = loaded(tmp_path, host_module(LOADS["renders"]), plugin="Broken")
    assert not result["ok"]
    assert result["error"]["type"] == "ValueError"
    assert result["error"]["message"] == "no template"
    assert result["error"]["stage"] == "application"
    assert "raise ValueError" in result["error"]["traceback"]


@pytest.mark.parametrize(
    ("load", "error", "says"),
    [
        ("raises", "RuntimeError", "the host gave up"),
        ("exits", "SystemExit", "0"),
        ("int", "HostUnusable", "returned int, not a list of registrations"),
        ("dict", "HostUnusable", "returned dict, not a list of registrations"),
        ("strings", "HostUnusable", "returned str as registration 0"),
        ("nameless", "HostUnusable", "without a name and a kind"),
        ("kindless", "HostUnusable", "without a name and a kind"),
        ("blank", "HostUnusable", "without a name and a kind"),
        ("description", "HostUnusable", "a description that is not a string"),
        ("subclass", "HostUnusable", "returned D as registration 0"),
    ],
)
def test_a_host_that_misbehaves_fails_the_plugin(
    tmp_path: Path, load: str, error: str, says: str
) -> None:
    result, _ = loaded(tmp_path, host_module(LOADS[load]))
    assert result["ok"] is False
    assert result["tools"] == []
    assert result["error"]["type"] == error
    assert says in result["error"]["message"]
    assert result["error"]["stage"] == "application"


def test_a_host_that_kills_the_interpreter_leaves_no_result(tmp_path: Path) -> None:
    """The host side turns a missing result into ``probe_crashed``; a printed one is no
    result."""
    load = "import os\n        print('{\"ok\": true}', flush=True)\n        os._exit(0)"
    result, done = loaded(tmp_path, host_module(load))
    assert result == {}
    assert done.returncode == 0 and '{"ok": true}' in done.stdout


@pytest.mark.parametrize(
    ("module", "says"),
    [
        (
            host_module(LOADS["good"], protocol="2"),
            "speaks protocol 2; this sandboxverify speaks 1",
        ),
        (host_module(LOADS["good"], protocol="'1'"), "speaks protocol '1'"),
        (host_module(LOADS["good"], protocol="True"), "speaks protocol True"),
        (host_module(LOADS["good"], groups="'svah.widgets'"), "has no list of the groups"),
        (host_module(LOADS["good"], groups="('other.group',)"), "does not judge group"),
        (
            "class Host:\n    protocol = 1\n    groups = ['svah.widgets']\nhost = Host()\n",
            "no load",
        ),
        (
            "class Host:\n    protocol = 1\n    @property\n    def groups(self):\n"
            "        raise KeyError('nope')\nhost = Host()\n",
            "could not be asked what it judges",
        ),
        ("raise ImportError('the host does not import')\n", "does not import"),
    ],
)
def test_a_host_that_cannot_judge_fails_the_plugin_and_says_the_host_is_at_fault(
    tmp_path: Path, module: str, says: str
) -> None:
    result, _ = loaded(tmp_path, module)
    assert result["ok"] is False
    assert result["error"]["type"] == "HostUnusable"
    assert says in result["error"]["message"]
    assert (
        "the host svah-app ships (sandboxverify.hosts 'svah.widgets'" in result["error"]["message"]
    )


def test_a_host_that_registers_nothing_passes_nothing(tmp_path: Path) -> None:
    """An empty list is a load without registrations: the host side makes it ``plugin_empty``."""
    result, _ = loaded(tmp_path, host_module(LOADS["empty"]))
    assert result["ok"] is True and result["tools"] == []


def checked_host(tmp_path: Path, module: str, name: str = GROUP) -> dict[str, Any]:
    """The application's own check of the host it ships (host ``host-protocol``)."""
    site = install(
        tmp_path / "site",
        "svah-app",
        {"sandboxverify.hosts": {name: "svah_app.verify:host"}},
        {"svah_app/__init__.py": "", "svah_app/verify.py": module},
    )
    plugin = {"name": name, "group": "sandboxverify.hosts", "value": "svah_app.verify:host"}
    return probe_load(tmp_path, "host-protocol", plugin, sites=[site], no_site=True)


def test_an_application_s_own_check_passes_a_host_that_speaks_the_protocol(
    tmp_path: Path,
) -> None:
    module = '"""The widgets\' host."""\n' + host_module(LOADS["good"]).replace(
        "class Host:\n", 'class Host:\n    """Renders each widget."""\n'
    )
    result = checked_host(tmp_path, module)
    assert result["ok"], result["error"]
    assert result["tools"] == [
        {"name": GROUP, "kind": "host", "description": "Renders each widget.", "parameters": None}
    ]


@pytest.mark.parametrize(
    ("module", "name", "says"),
    [
        (host_module(LOADS["good"], protocol="2"), GROUP, "speaks protocol 2"),
        (host_module(LOADS["good"]), "other.group", "does not judge group 'other.group'"),
        ("def host(entry_point, context):\n    return []\n", GROUP, "speaks protocol None"),
    ],
)
def test_an_application_s_own_check_fails_a_host_that_does_not(
    tmp_path: Path, module: str, name: str, says: str
) -> None:
    result = checked_host(tmp_path, module, name)
    assert result["ok"] is False
    assert (result["error"]["type"], result["error"]["stage"]) == ("HostUnusable", "validate")
    assert says in result["error"]["message"]
