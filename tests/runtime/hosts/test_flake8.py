"""The ``flake8`` host against the real flake8: its plugin finder, its validation, a real run."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime._tracebacks import format_traceback
from sandboxverify.runtime.hosts import LoadedPlugin, PluginLoadError, load_plugin
from tests.runtime.hosts.installed import install, probe_load

pytest.importorskip("flake8")  # in the test extra: never skipped there

PLUGIN = '''
import ast
import sys

from flake8.formatting.base import BaseFormatter

#: what flake8 ran: (plugin, what it saw), for the tests to read back
RUNS = []


class PrintChecker:
    """Finds print calls."""

    name = "flake8-demo"
    version = "1.0"

    def __init__(self, tree, filename):
        self.tree = tree
        self.filename = filename

    def run(self):
        RUNS.append(("DEM", self.filename))
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "print":
                yield node.lineno, node.col_offset, "DEM100 print found", type(self)


class OffByDefault(PrintChecker):
    off_by_default = True

    def run(self):
        RUNS.append(("OFF", self.filename))
        return iter(())


def long_lines(physical_line):
    """Flags long lines."""
    RUNS.append(("DPL", physical_line))
    if len(physical_line) > 60:
        return 60, "DPL100 long line"


def crashes_on_lambda(logical_line):
    if "lambda" in logical_line:
        raise ZeroDivisionError("a logical line with a lambda")


class CrashesInRun(PrintChecker):
    def run(self):
        yield from super().run()
        raise KeyError("a checker that breaks on real input")


def not_a_checker(source, lines):
    return []


class Formatter(BaseFormatter):
    """Code and line, one a line."""

    def format(self, error):
        RUNS.append(("demo", error.code))
        return f"{error.code}@{error.line_number}"


class BrokenFormatter(BaseFormatter):
    def format(self, error):
        raise RuntimeError("cannot format " + error.code)
'''

ENTRY_POINTS = {
    "flake8.extension": {
        "DEM": "flake8_demo:PrintChecker",
        "OFF": "flake8_demo:OffByDefault",
        "DPL": "flake8_demo:long_lines",
        "DLG": "flake8_demo:crashes_on_lambda",
        "DCR": "flake8_demo:CrashesInRun",
        "ABCD1": "flake8_demo:PrintChecker",
        "DNC": "flake8_demo:not_a_checker",
        "DMI": "flake8_demo_missing:Checker",
    },
    "flake8.report": {
        "demo": "flake8_demo:Formatter",
        "demo-broken": "flake8_demo:BrokenFormatter",
        "demo-checker": "flake8_demo:PrintChecker",
    },
}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The demo distribution, installed where flake8's finder (importlib.metadata) finds it."""
    site = install(tmp_path / "site", "flake8-demo", ENTRY_POINTS, {"flake8_demo.py": PLUGIN})
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop("flake8_demo", None)


def ref(name: str, group: str = "flake8.extension") -> EntryPointRef:
    return EntryPointRef(name, group, ENTRY_POINTS[group][name])


def load(name: str, group: str = "flake8.extension") -> LoadedPlugin:
    return load_plugin("flake8", ref(name, group), Registry())


def load_error(name: str, group: str = "flake8.extension") -> PluginLoadError:
    with pytest.raises(PluginLoadError) as info:
        load(name, group)
    return info.value


def runs() -> list[tuple[str, Any]]:
    return list(sys.modules["flake8_demo"].RUNS)


def test_a_checker_registers_its_code_prefix_and_flake8_runs_it(site: Path) -> None:
    loaded = load("DEM")
    assert loaded.tools == [
        {
            "name": "DEM",
            "kind": "code",
            "description": "tree checker flake8_demo.PrintChecker: Finds print calls.",
            "parameters": None,
        }
    ]
    assert runs() == [("DEM", "example.py")]  # one flake8 run, on the sample file


def test_flake8_classifies_checkers_by_their_parameters(site: Path) -> None:
    loaded = load("DPL")
    assert loaded.tools[0]["kind"] == "code"
    assert loaded.tools[0]["description"] == (
        "physical_line checker flake8_demo.long_lines: Flags long lines."
    )
    assert len(runs()) > 10  # called for each physical line of the sample


def test_a_checker_off_by_default_is_enabled_for_its_run(site: Path) -> None:
    assert load("OFF").tools[0]["name"] == "OFF"
    assert runs() == [("OFF", "example.py")]


def test_a_formatter_registers_its_name_and_formats_flake8s_report(site: Path) -> None:
    loaded = load("demo", "flake8.report")
    assert loaded.tools == [
        {
            "name": "demo",
            "kind": "formatter",
            "description": "Code and line, one a line.",
            "parameters": None,
        }
    ]
    assert ("demo", "F401") in runs()  # the sample's unused import, formatted by the plugin


def test_a_code_prefix_flake8_rejects_fails_validation_with_flake8s_message(site: Path) -> None:
    error = load_error("ABCD1")
    assert error.stage == "validate"
    assert type(error.cause).__name__ == "ExecutionError"
    assert str(error.cause) == (
        "plugin code for `flake8-demo[ABCD1]` does not match ^[A-Z]{1,3}[0-9]{0,3}$"
    )


def test_a_checker_raising_on_real_input_fails_in_the_application(site: Path) -> None:
    error = load_error("DLG")  # raises when flake8 calls it: flake8 wraps the exception
    assert error.stage == "application"
    assert type(error.cause).__name__ == "PluginExecutionFailed"
    assert str(error.cause).startswith('example.py: "flake8-demo[DLG]" failed during execution')
    assert error.message.endswith("(in flake8 example.py --select=DLG)")
    traceback = format_traceback(error.cause)
    assert "in crashes_on_lambda" in traceback
    assert "ZeroDivisionError: a logical line with a lambda" in traceback

    error = load_error("DCR")  # raises while flake8 iterates its run(): unwrapped
    assert error.stage == "application"
    assert isinstance(error.cause, KeyError)
    assert "in run" in format_traceback(error.cause)


def test_what_flake8_cannot_classify_fails_validation(site: Path) -> None:
    error = load_error("DNC")
    assert error.stage == "validate"
    assert str(error.cause) == (
        "flake8 cannot tell what kind of checker DNC = flake8_demo:not_a_checker is "
        "(flake8: what plugin type?): a checker takes a 'tree', 'logical_line' or "
        "'physical_line' parameter; it takes (source, lines)"
    )


def test_a_formatter_must_be_a_base_formatter_and_format_without_raising(site: Path) -> None:
    error = load_error("demo-checker", "flake8.report")
    assert error.stage == "validate"
    assert "not a subclass of flake8.formatting.base.BaseFormatter" in str(error.cause)
    error = load_error("demo-broken", "flake8.report")
    assert error.stage == "application"
    assert str(error.cause).startswith("cannot format ")


def test_an_import_error_is_the_plugins_own(site: Path) -> None:
    error = load_error("DMI")
    assert error.stage == "import"
    assert isinstance(error.cause, ModuleNotFoundError)
    assert error.cause.name == "flake8_demo_missing"


def test_a_plugin_flake8_does_not_find_fails_validation(site: Path) -> None:
    with pytest.raises(PluginLoadError) as info:
        load_plugin("flake8", EntryPointRef("DUN", "flake8.extension", "flake8_demo:X"), Registry())
    assert info.value.stage == "validate"
    assert str(info.value.cause).endswith(
        "among the installed plugins: no installed distribution declares this entry point"
    )


def test_a_group_flake8_does_not_load_fails_validation(site: Path) -> None:
    with pytest.raises(PluginLoadError) as info:
        load_plugin("flake8", EntryPointRef("DEM", "flake8.other", "flake8_demo:X"), Registry())
    assert info.value.stage == "validate"
    assert "not 'flake8.other'" in str(info.value.cause)


def test_the_probe_loads_a_checker_in_a_fresh_interpreter(tmp_path: Path) -> None:
    site = install(tmp_path / "site", "flake8-demo", ENTRY_POINTS, {"flake8_demo.py": PLUGIN})
    plugin = ref("DEM").to_json()
    result = probe_load(tmp_path, "flake8", plugin, sites=[site])
    assert result["ok"] is True, result["error"]
    assert [(tool["name"], tool["kind"]) for tool in result["tools"]] == [("DEM", "code")]
    failed = probe_load(tmp_path, "flake8", ref("DLG").to_json(), sites=[site])
    assert failed["error"]["stage"] == "application"
    assert failed["error"]["message"].endswith("(in flake8 example.py --select=DLG)")


def test_flake8_not_installed_is_the_application_missing(tmp_path: Path) -> None:
    site = install(tmp_path / "site", "flake8-demo", ENTRY_POINTS, {"flake8_demo.py": PLUGIN})
    result = probe_load(tmp_path, "flake8", ref("DEM").to_json(), sites=[site], no_site=True)
    assert result["ok"] is False
    assert result["error"]["stage"] == "application"
    assert result["error"]["type"] == "ApplicationMissing"
    assert result["error"]["message"] == (
        "flake8 is not installed in the sandbox, and it is the application that loads "
        "'flake8.extension' plugins"
    )
