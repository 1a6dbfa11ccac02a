"""Loading entry points in-process: resolution, the native host and the entrypoints host."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime._tracebacks import format_traceback
from sandboxverify.runtime.hosts import PluginLoadError, resolve
from sandboxverify.runtime.hosts._entrypoints import load_entrypoint
from sandboxverify.runtime.hosts._native import load_native


@pytest.fixture
def modules(tmp_path: Path) -> Iterator[Path]:
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in [n for n in sys.modules if n.startswith("hostdemo_")]:
        del sys.modules[name]


def module(root: Path, name: str, code: str) -> None:
    (root / f"{name}.py").write_text(textwrap.dedent(code))


def ref(value: str, name: str = "demo") -> EntryPointRef:
    return EntryPointRef(name=name, group="sandboxverify.plugins", value=value)


def test_native_plugin_registers_tools_and_handlers(modules: Path) -> None:
    module(
        modules,
        "hostdemo_ok",
        """
        def setup(api):
            api.register_tool("greet", lambda name: "hi " + name, description="Greet")
            api.on("tool_call", lambda event: None)
    """,
    )
    loaded = load_native(ref("hostdemo_ok:setup"), Registry())
    assert [tool["name"] for tool in loaded.tools] == ["greet"]
    assert loaded.handlers == {"tool_call": 1}


def test_a_misspelled_attribute_suggests_the_right_one(modules: Path) -> None:
    module(modules, "hostdemo_typo", "def setup(api): pass\n")
    with pytest.raises(PluginLoadError) as info:
        resolve(ref("hostdemo_typo:setpu"))
    assert info.value.stage == "import"
    assert str(info.value.cause) == (
        "module 'hostdemo_typo' has no attribute 'setpu' (did you mean 'setup'?)"
    )


def test_nested_attribute_paths(modules: Path) -> None:
    module(
        modules, "hostdemo_nested", "class Plugins:\n    @staticmethod\n    def setup(api): pass\n"
    )
    assert callable(resolve(ref("hostdemo_nested:Plugins.setup")))


@pytest.mark.parametrize(
    ("code", "value", "stage", "type_name"),
    [
        ("raise RuntimeError('at import')", "m:setup", "import", "RuntimeError"),
        ("import sys; sys.exit(3)", "m:setup", "import", "SystemExit"),
        ("setup = 42", "m:setup", "validate", "TypeError"),
        ("def setup(api): pass", "m", "validate", "TypeError"),
        ("def setup(api): raise ValueError('in setup')", "m:setup", "setup", "ValueError"),
        (
            "def setup(api): api.on('tool_cal', print)",
            "m:setup",
            "setup",
            "PluginRegistrationError",
        ),
        ("async def setup(api): pass", "m:setup", "setup", "TypeError"),
    ],
)
def test_each_way_to_fail_has_a_stage(
    modules: Path, code: str, value: str, stage: str, type_name: str
) -> None:
    name = f"hostdemo_{abs(hash((code, value))) % 10**8}"
    module(modules, name, code + "\n")
    with pytest.raises(PluginLoadError) as info:
        load_native(ref(value.replace("m", name, 1)), Registry())
    assert info.value.stage == stage
    assert type(info.value.cause).__name__ == type_name


def test_entrypoints_host_one_tool_per_entry_point(modules: Path) -> None:
    module(modules, "hostdemo_cmd", 'def hello():\n    """Say hello."""\n')
    loaded = load_entrypoint(ref("hostdemo_cmd:hello", name="hello"))
    assert loaded.tools == [
        {"name": "hello", "kind": "tool", "description": "Say hello.", "parameters": None}
    ]


def test_entrypoints_host_accepts_a_module_only_where_the_application_loads_modules(
    modules: Path,
) -> None:
    # pytest11 plugins are modules: naming a module is a complete entry point there
    module(modules, "hostdemo_mod", '"""A pytest plugin."""\nVALUE = 1\n')
    pytest_plugin = EntryPointRef(name="mod", group="pytest11", value="hostdemo_mod")
    loaded = load_entrypoint(pytest_plugin)
    assert loaded.tools == [
        {"name": "mod", "kind": "tool", "description": "A pytest plugin.", "parameters": None}
    ]
    # elsewhere the application calls what it loads: a module is a forgotten ':function'
    with pytest.raises(PluginLoadError) as info:
        load_entrypoint(ref("hostdemo_mod", name="mod"))
    assert "resolved to a module, not a callable" in str(info.value.cause)


def test_entrypoints_host_refuses_an_attribute_that_is_not_callable(modules: Path) -> None:
    module(modules, "hostdemo_attr", "import os as submodule\nVALUE = 1\n")
    for value, kind in (("hostdemo_attr:VALUE", "an int"), ("hostdemo_attr:submodule", "a module")):
        with pytest.raises(PluginLoadError) as info:
            load_entrypoint(ref(value))
        assert info.value.stage == "validate"
        assert f"resolved to {kind}, not a callable" in str(info.value.cause)


def test_tracebacks_keep_the_plugins_frames_and_drop_the_machinery(modules: Path) -> None:
    module(modules, "hostdemo_tb", "def helper():\n    raise KeyError('x')\nhelper()\n")
    with pytest.raises(PluginLoadError) as info:
        resolve(ref("hostdemo_tb:setup"))
    text = format_traceback(info.value.cause)
    assert "hostdemo_tb.py" in text and "in helper" in text
    assert "importlib" not in text
    assert "sandboxverify/runtime" not in text  # no frame of the host machinery
    assert text.rstrip().endswith("KeyError: 'x'")
