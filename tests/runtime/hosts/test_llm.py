"""The llm host against the real ``llm`` package: registration, validation, tool calls."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import PluginRegistrationError, Registry
from sandboxverify.runtime.hosts import HostContext, LoadedPlugin, PluginLoadError, load_plugin
from sandboxverify.runtime.hosts._llm import describe_hooks, load_llm
from tests.runtime.hosts.installed import probe_load

REPO = Path(__file__).resolve().parents[3]

Write = Callable[[str, str], None]


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Any]:
    """llm, imported the way the host imports it; plugins registered by the test are removed."""
    outside = os.environ.get("LLM_LOAD_PLUGINS")
    monkeypatch.setenv("LLM_LOAD_PLUGINS", "")
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-user"))
    module = importlib.import_module("llm")  # in the test extra: never skipped
    plugins = sys.modules["llm.plugins"]
    monkeypatch.setattr(plugins, "_loaded", getattr(plugins, "_loaded", False))
    setattr(plugins, "LLM_LOAD_PLUGINS", "")  # noqa: B010 - llm types no such name
    before = set(plugins.pm.get_plugins())
    yield module
    for plugin in set(plugins.pm.get_plugins()) - before:
        plugins.pm.unregister(plugin)
    # llm reads the variable once, when first imported (maybe just now, with it set): the
    # tests after this one in the process load their plugins as a fresh import would
    setattr(plugins, "LLM_LOAD_PLUGINS", outside)  # noqa: B010


@pytest.fixture
def write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Write]:
    """Write a plugin module into an importable directory."""
    root = tmp_path / "plugins"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    written: list[str] = []

    def write_module(name: str, code: str) -> None:
        (root / f"{name}.py").write_text(textwrap.dedent(code))
        written.append(name)

    yield write_module
    for name in written:
        sys.modules.pop(name, None)


def ref(value: str, name: str | None = None) -> EntryPointRef:
    return EntryPointRef(name=name or value.split(":", maxsplit=1)[0], group="llm", value=value)


def load(value: str, registry: Registry | None = None, name: str | None = None) -> LoadedPlugin:
    return load_llm(
        ref(value, name), registry if registry is not None else Registry(), HostContext()
    )


def load_error(value: str, registry: Registry | None = None) -> PluginLoadError:
    with pytest.raises(PluginLoadError) as info:
        load(value, registry)
    return info.value


TOOLS = """
    import llm

    def reverse_text(text: str) -> str:
        "Reverse the text."
        return text[::-1]

    async def add(a: int, b: int = 2) -> int:
        "Add two numbers."
        return a + b

    def divide(a: float, b: float) -> float:
        "Divide a by b."
        return a / b

    def pairs(n: int) -> dict:
        return {"pairs": [[i, i * i] for i in range(n)], "odd": {1}}

    def nothing() -> None:
        pass

    class Counter(llm.Toolbox):
        "Counts."

        def __init__(self):
            self.count = 0

        def increment(self, by: int = 1) -> int:
            "Add to the count."
            self.count += by
            return self.count

        def total(self) -> str:
            "The count so far."
            return f"total {self.count}"

    shout = llm.Tool(
        name="shout",
        description="Upper-case the text.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        implementation=lambda text: text.upper(),
    )

    @llm.hookimpl
    def register_tools(register):
        register(reverse_text)
        register(add, name="add_numbers")
        register(divide)
        register(pairs)
        register(nothing)
        register(Counter)
        register(shout)
"""


def test_functions_toolboxes_and_tool_objects_are_collected(llm: Any, write: Write) -> None:
    write("llmdemo_tools", TOOLS)
    registry = Registry()
    loaded = load("llmdemo_tools", registry)
    names = [tool["name"] for tool in loaded.tools]
    assert names == [
        "reverse_text",
        "add_numbers",
        "divide",
        "pairs",
        "nothing",
        "Counter_increment",
        "Counter_total",
        "shout",
    ]
    assert loaded.handlers == {}
    tools = {tool["name"]: tool for tool in loaded.tools}
    assert tools["reverse_text"]["description"] == "Reverse the text."
    assert tools["reverse_text"]["parameters"] == {
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "type": "object",
    }
    assert tools["add_numbers"]["parameters"]["properties"]["b"] == {
        "default": 2,
        "type": "integer",
    }
    assert tools["Counter_increment"]["description"] == "Add to the count."
    assert tools["shout"]["description"] == "Upper-case the text."
    assert {spec.plugin for spec in registry.tools.values()} == {"llmdemo_tools"}
    assert not any(spec.wants_ctx for spec in registry.tools.values())
    # the same names and schemas llm itself derives for these tools
    module = sys.modules["llmdemo_tools"]
    for tool in [llm.Tool.function(module.reverse_text), *module.Counter.method_tools()]:
        assert tools[tool.name]["parameters"] == tool.input_schema
        assert tools[tool.name]["description"] == tool.description
    assert describe_hooks("llmdemo_tools") == ["register_tools"]


def test_tools_are_called_the_way_llm_calls_them(llm: Any, write: Write) -> None:
    write("llmdemo_calls", TOOLS)
    registry = Registry()
    load("llmdemo_calls", registry)

    def call(name: str, **arguments: Any) -> Any:
        return registry.tools[name].fn(**arguments)

    assert call("reverse_text", text="abc").text == "cba"
    assert call("add_numbers", a=1).text == "3"  # a coroutine function, run with asyncio
    assert call("shout", text="hey").text == "HEY"
    # not a string: json.dumps(result, default=repr), as llm sends it to the model
    pairs = call("pairs", n=2)
    assert pairs.text == json.dumps({"pairs": [[0, 0], [1, 1]], "odd": {1}}, default=repr)
    assert pairs.details == {"pairs": [[0, 0], [1, 1]], "odd": "{1}"}
    assert call("nothing").text == "null"
    assert call("divide", a=1, b=4).text == "0.25"


def test_results_are_what_llms_own_tool_execution_sends_the_model(llm: Any, write: Write) -> None:
    execute = llm.Response.execute_tool_calls
    if "tools" not in inspect.signature(execute).parameters:
        pytest.skip("this llm cannot execute tool calls without a model response")
    write("llmdemo_same", TOOLS)
    registry = Registry()
    load("llmdemo_same", registry)
    module = sys.modules["llmdemo_same"]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("reverse_text", {"text": "abc"}),
        ("add_numbers", {"a": 1}),
        ("pairs", {"n": 2}),
        ("nothing", {}),
        ("divide", {"a": 1, "b": 0}),
        ("reverse_text", {"txt": "abc"}),
        ("Counter_increment", {"by": 2}),
        ("Counter_total", {}),
        ("shout", {"text": "hey"}),
    ]
    tools = [
        module.reverse_text,
        llm.Tool.function(module.add, name="add_numbers"),
        module.pairs,
        module.nothing,
        module.divide,
        module.Counter(),
        module.shout,
    ]
    tool_calls = [
        llm.ToolCall(name=name, arguments=arguments, tool_call_id=f"call_{index}")
        for index, (name, arguments) in enumerate(calls)
    ]
    # a response is only needed for its prompt's tools and tool calls, both given here
    theirs = execute(object(), tool_calls_list=tool_calls, tools=tools)
    ours = [registry.tools[name].fn(**arguments) for name, arguments in calls]
    assert [result.text for result in ours] == [result.output for result in theirs]
    assert [result.is_error for result in ours] == [
        result.exception is not None for result in theirs
    ]


def test_a_toolbox_keeps_its_state_in_one_instance_per_load(llm: Any, write: Write) -> None:
    write("llmdemo_counter", TOOLS)
    first, second = Registry(), Registry()
    load("llmdemo_counter", first)
    load("llmdemo_counter", second)  # loading again in one process is fine
    assert first.tools["Counter_increment"].fn().text == "1"
    assert first.tools["Counter_increment"].fn(by=5).text == "6"
    assert first.tools["Counter_total"].fn().text == "total 6"
    assert second.tools["Counter_total"].fn().text == "total 0"


def test_an_exception_in_a_tool_is_llms_error_text(llm: Any, write: Write) -> None:
    write("llmdemo_raises", TOOLS)
    registry = Registry()
    load("llmdemo_raises", registry)
    result = registry.tools["divide"].fn(a=1, b=0)
    assert result.is_error
    with pytest.raises(ZeroDivisionError) as raised:
        _ = 1 / 0
    assert result.text == f"Error: {raised.value}"  # llm's f"Error: {ex}"
    assert result.details["error_type"] == "ZeroDivisionError"
    assert "return a / b" in result.details["traceback"]
    missing = registry.tools["reverse_text"].fn()
    assert missing.is_error
    assert missing.text == ("Error: reverse_text() missing 1 required positional argument: 'text'")


def test_toolbox_prepare_runs_once_before_the_first_call(llm: Any, write: Write) -> None:
    if not hasattr(llm.Toolbox, "prepare"):
        pytest.skip("this llm has no Toolbox.prepare()")
    write(
        "llmdemo_prepare",
        """
        import llm

        class Notes(llm.Toolbox):
            def prepare(self):
                self.prepared = getattr(self, "prepared", 0) + 1

            def count(self) -> int:
                return self.prepared

        @llm.hookimpl
        def register_tools(register):
            register(Notes)
        """,
    )
    registry = Registry()
    assert [tool["name"] for tool in load("llmdemo_prepare", registry).tools] == ["Notes_count"]
    assert registry.tools["Notes_count"].fn().text == "1"
    assert registry.tools["Notes_count"].fn().text == "1"


def test_a_toolbox_that_needs_arguments_fails_its_calls_with_the_reason(
    llm: Any, write: Write
) -> None:
    write(
        "llmdemo_needs_args",
        """
        import llm

        class Database(llm.Toolbox):
            def __init__(self, path: str):
                self.path = path

            def query(self, sql: str) -> str:
                "Run SQL."
                return sql

        @llm.hookimpl
        def register_tools(register):
            register(Database)
        """,
    )
    registry = Registry()
    loaded = load("llmdemo_needs_args", registry)  # listing the tools needs no instance
    assert [tool["name"] for tool in loaded.tools] == ["Database_query"]
    result = registry.tools["Database_query"].fn(sql="select 1")
    assert result.is_error
    assert result.text.startswith("Error: toolbox Database could not be created without arguments")
    assert "'path'" in result.text
    assert result.text.endswith("llm users pass them (llm -T 'Database(...)'), a smoke call cannot")
    assert result.details["error_type"] == "TypeError"


def test_tool_output_attachments_are_described(llm: Any, write: Write, tmp_path: Path) -> None:
    if not hasattr(llm, "ToolOutput"):
        pytest.skip("this llm has no ToolOutput")
    picture = tmp_path / "picture.png"
    write(
        "llmdemo_output",
        f"""
        import llm

        def render(title: str):
            return llm.ToolOutput(
                output={{"title": title}},
                attachments=[llm.Attachment(path={str(picture)!r}, type="image/png")],
            )

        @llm.hookimpl
        def register_tools(register):
            register(render)
        """,
    )
    registry = Registry()
    load("llmdemo_output", registry)
    result = registry.tools["render"].fn(title="Map")
    assert result.text == '{"title": "Map"}'
    assert result.details == {
        "output": {"title": "Map"},
        "attachments": [{"type": "image/png", "path": str(picture)}],
    }


def test_an_llm_tool_call_parameter_receives_the_call(llm: Any, write: Write) -> None:
    if not hasattr(sys.modules["llm.models"], "_accepts_llm_tool_call"):
        pytest.skip("this llm does not pass llm_tool_call")
    write(
        "llmdemo_tool_call",
        """
        import llm

        def whoami(greeting: str, llm_tool_call) -> str:
            return f"{greeting} {llm_tool_call.name} {llm_tool_call.arguments}"

        @llm.hookimpl
        def register_tools(register):
            register(whoami)
        """,
    )
    registry = Registry()
    loaded = load("llmdemo_tool_call", registry)
    assert list(loaded.tools[0]["parameters"]["properties"]) == ["greeting"]
    assert registry.tools["whoami"].fn(greeting="hi").text == "hi whoami {'greeting': 'hi'}"


def test_an_entry_point_may_name_an_object(llm: Any, write: Write) -> None:
    write(
        "llmdemo_object",
        """
        import llm

        class Plugin:
            @staticmethod
            @llm.hookimpl
            def register_tools(register):
                register(len, name="length")
        """,
    )
    loaded = load("llmdemo_object:Plugin", name="object")
    assert [tool["name"] for tool in loaded.tools] == ["length"]


# -- what does not load ----------------------------------------------------------------------


def test_a_module_that_does_not_import_fails_at_import(llm: Any, write: Write) -> None:
    write("llmdemo_bad_import", "import llmdemo_not_installed\n")
    error = load_error("llmdemo_bad_import")
    assert error.stage == "import"
    assert isinstance(error.cause, ModuleNotFoundError)
    assert error.cause.name == "llmdemo_not_installed"
    assert load_error("llmdemo_missing_module").stage == "import"


def test_llm_not_installed_says_the_distribution_must_depend_on_it(
    llm: Any, write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    write("llmdemo_no_llm", "X = 1\n")
    monkeypatch.setitem(sys.modules, "llm", None)  # what importing a missing llm looks like
    error = load_error("llmdemo_no_llm")
    assert error.stage == "import"
    assert isinstance(error.cause, ModuleNotFoundError)
    assert "an llm plugin's distribution must depend on llm" in str(error.cause)


def test_register_tools_raising_fails_at_setup(llm: Any, write: Write) -> None:
    write(
        "llmdemo_setup_raises",
        """
        import llm

        def fine() -> str:
            return "fine"

        @llm.hookimpl
        def register_tools(register):
            register(fine)
            raise RuntimeError("no API key configured")
        """,
    )
    registry = Registry()
    error = load_error("llmdemo_setup_raises", registry)
    assert error.stage == "setup"
    assert str(error.cause) == "no API key configured"
    assert error.message == "no API key configured (in its register_tools hook)"
    assert registry.tools == {}  # what it registered before raising is withdrawn
    assert describe_hooks("llmdemo_setup_raises") == []  # and llm no longer has it


@pytest.mark.parametrize(
    ("registered", "message"),
    [
        ("'not a tool'", "register() takes a function, an llm.Tool or an llm.Toolbox subclass"),
        ("Box()", "register() takes a Toolbox class, not an instance: register(Box)"),
        ("Plain", "Toolbox classes must inherit from llm.Toolbox, Plain does not."),
    ],
)
def test_registering_what_is_not_a_tool_fails_at_setup(
    llm: Any, write: Write, registered: str, message: str
) -> None:
    write(
        "llmdemo_not_a_tool",
        f"""
        import llm

        class Box(llm.Toolbox):
            def open(self) -> str:
                return "open"

        class Plain:
            pass

        @llm.hookimpl
        def register_tools(register):
            register({registered})
        """,
    )
    error = load_error("llmdemo_not_a_tool")
    assert error.stage == "setup"
    assert isinstance(error.cause, TypeError)
    assert message in str(error.cause)


def test_a_duplicate_tool_name_fails_at_setup(llm: Any, write: Write) -> None:
    write(
        "llmdemo_duplicate",
        """
        import llm

        def search(q: str) -> str:
            return q

        @llm.hookimpl
        def register_tools(register):
            register(search)
            register(lambda q: q, name="search")
        """,
    )
    error = load_error("llmdemo_duplicate")
    assert error.stage == "setup"
    assert isinstance(error.cause, PluginRegistrationError)
    assert "'search' is already registered by this plugin" in str(error.cause)


def test_a_misspelled_hook_fails_validation_with_a_suggestion(llm: Any, write: Write) -> None:
    write(
        "llmdemo_typo_hook",
        """
        import llm

        @llm.hookimpl
        def register_tool(register):
            register(len)
        """,
    )
    error = load_error("llmdemo_typo_hook")
    assert error.stage == "validate"
    assert type(error.cause).__name__ == "PluginValidationError"
    message = str(error.cause)
    assert message.startswith(
        "register_tool() is marked with @llm.hookimpl, but llm has no hook 'register_tool' "
        "(did you mean 'register_tools'?), so llm never calls it; llm's hooks are: "
    )
    assert "register_models" in message
    assert describe_hooks("llmdemo_typo_hook") == []  # not left registered with llm


def test_a_hook_function_without_hookimpl_fails_validation(llm: Any, write: Write) -> None:
    write(
        "llmdemo_unmarked",
        """
        def register_tools(register):
            register(len)
        """,
    )
    error = load_error("llmdemo_unmarked")
    assert error.stage == "validate"
    assert str(error.cause) == (
        "register_tools() is not marked with @llm.hookimpl, so llm never calls it: "
        "decorate it with @llm.hookimpl"
    )


def test_a_hook_signature_pluggy_rejects_fails_validation(llm: Any, write: Write) -> None:
    write(
        "llmdemo_bad_signature",
        """
        import llm

        @llm.hookimpl
        def register_tools(registry):
            registry(len)
        """,
    )
    error = load_error("llmdemo_bad_signature")
    assert error.stage == "validate"
    assert type(error.cause).__name__ == "PluginValidationError"
    assert "registry" in str(error.cause)


def test_hooks_that_register_nothing_load_with_no_registrations(llm: Any, write: Write) -> None:
    write(
        "llmdemo_commands",
        """
        import llm

        @llm.hookimpl
        def register_commands(cli):
            pass

        @llm.hookimpl
        def register_models(register):
            pass
        """,
    )
    registry = Registry()
    loaded = load("llmdemo_commands", registry)
    assert loaded.tools == []
    assert loaded.handlers == {}
    assert registry.tools == {}
    assert describe_hooks("llmdemo_commands") == ["register_commands", "register_models"]
    assert describe_hooks(sys.modules["llmdemo_commands"]) == [
        "register_commands",
        "register_models",
    ]
    assert describe_hooks("llmdemo_never_loaded") == []


# -- what else a plugin registers --------------------------------------------------------------

MODELS = """
    import llm

    class Markov(llm.Model):
        model_id = "markov"

        class Options(llm.Options):
            length: int = 10

        def execute(self, prompt, stream, response, conversation):
            yield "hello"

    class AsyncMarkov(llm.AsyncModel):
        model_id = "markov"

        async def execute(self, prompt, stream, response, conversation):
            yield "hello"

    class Chain(llm.Model):
        model_id = "chain"

        def execute(self, prompt, stream, response, conversation):
            yield "chain"

    class Embed(llm.EmbeddingModel):
        model_id = "embed-demo"

        def embed_batch(self, items):
            return [[1.0, 0.0] for _ in items]

    @llm.hookimpl
    def register_models(register):
        register(Markov(), AsyncMarkov(), aliases=("mk",))
        register(Chain())

    @llm.hookimpl
    def register_embedding_models(register):
        register(Embed(), aliases=["e"])
"""


def test_a_model_plugin_registers_its_models_by_model_id(llm: Any, write: Write) -> None:
    write("llmdemo_models", MODELS)
    registry = Registry()
    loaded = load("llmdemo_models", registry)
    markov, chain, embed = loaded.tools
    assert [(r["name"], r["kind"]) for r in loaded.tools] == [
        ("markov", "model"),
        ("chain", "model"),
        ("embed-demo", "embedding_model"),
    ]
    assert markov["description"] == "Markov: markov (and async) (aliases: mk)"
    assert markov["parameters"]["properties"]["length"]["default"] == 10
    assert chain == {
        "name": "chain",
        "kind": "model",
        "description": "Chain: chain",
        "parameters": None,
    }
    assert embed["description"] == "Embed: embed-demo (aliases: e)"
    assert registry.tools == {}  # models are reported, not called by smoke runs
    # what llm itself makes of the plugin
    llm.plugins.pm.unregister(name="llmdemo_models")
    llm.plugins.pm.register(sys.modules["llmdemo_models"], name="llmdemo_models")
    assert {"markov", "chain"} <= {model.model_id for model in llm.get_models()}


def test_a_command_plugin_registers_the_commands_it_adds_to_llms_cli(
    llm: Any, write: Write
) -> None:
    write(
        "llmdemo_cli",
        """
        import click
        import llm

        @llm.hookimpl
        def register_commands(cli):
            @cli.command()
            def hello():
                "Say hello."

            @cli.group(name="demo-tools")
            def demo_tools():
                "Demo commands."

            @demo_tools.command()
            def inner():
                pass

            @cli.commands["models"].command(name="llmdemo-extra")
            def extra():
                "An extra models subcommand."
        """,
    )
    try:
        loaded = load("llmdemo_cli")
        assert loaded.tools == [
            {"name": "hello", "kind": "command", "description": "Say hello.", "parameters": None},
            {
                "name": "demo-tools",
                "kind": "command",
                "description": "Demo commands.",
                "parameters": None,
            },
            {
                "name": "models llmdemo-extra",
                "kind": "command",
                "description": "An extra models subcommand.",
                "parameters": None,
            },
        ]
        cli = importlib.import_module("llm.cli").cli
        assert "hello" not in cli.commands  # added to a copy of llm's group, not llm's
    finally:
        importlib.import_module("llm.cli").cli.commands["models"].commands.pop(
            "llmdemo-extra", None
        )


def test_a_plugin_changing_llms_own_commands_registers_each_change(llm: Any, write: Write) -> None:
    write(
        "llmdemo_changes",
        """
        import click
        import llm

        @llm.hookimpl
        def register_commands(cli):
            aliases_set = cli.commands["aliases"].commands["set"]
            aliases_set.params.append(click.Option(["-o", "--option"], multiple=True))
            aliases_set.callback = lambda **kwargs: None
            cli.commands["prompt"].params.pop()
        """,
    )
    cli = importlib.import_module("llm.cli").cli
    aliases_set, prompt = cli.commands["aliases"].commands["set"], cli.commands["prompt"]
    kept = [(command, list(command.params), command.callback) for command in (aliases_set, prompt)]
    removed = "/".join(prompt.params[-1].opts)
    try:
        loaded = load("llmdemo_changes")
    finally:
        for command, params, callback in kept:
            command.params[:] = params
            command.callback = callback
    assert [(r["name"], r["description"]) for r in loaded.tools] == [
        ("prompt", f"llm's own command, options removed: {removed}"),
        ("aliases set", "llm's own command, options added: -o/--option; its callback replaced"),
    ]


def test_a_plugin_changing_the_models_llm_registers_itself_registers_those(
    llm: Any, write: Write
) -> None:
    """``model_aliases`` holds llm's own models, as in every user's llm."""
    write(
        "llmdemo_async_all",
        """
        import llm

        @llm.hookimpl(trylast=True)
        def register_models(register, model_aliases):
            for entry in model_aliases:
                if entry.async_model is None:
                    entry.async_model = object()
        """,
    )
    own = importlib.import_module("llm.default_plugins.openai_models")
    sync_only: list[str] = []
    own.register_models(
        lambda model, async_model=None, aliases=None: (
            sync_only.append(model.model_id) if async_model is None else None
        )
    )
    loaded = load("llmdemo_async_all")
    assert sync_only  # llm's own models include one without an async model
    assert [r["name"] for r in loaded.tools] == sync_only
    assert all("llm's own model, an async model added" in r["description"] for r in loaded.tools)


def test_loader_plugins_register_their_prefixes(llm: Any, write: Write) -> None:
    write(
        "llmdemo_loaders",
        """
        import llm

        def github(argument):
            "Fragments from a GitHub repository."
            return llm.Fragment("text", source=argument)

        def gist(argument):
            return llm.Fragment("gist", source=argument)

        @llm.hookimpl
        def register_fragment_loaders(register):
            register("gh", github)
            register("gh", gist)

        @llm.hookimpl
        def register_template_loaders(register):
            register("demo", lambda name: llm.Template(name=name, prompt="hi"))
        """,
    )
    loaded = load("llmdemo_loaders")
    assert loaded.tools == [
        {"name": "demo", "kind": "template_loader", "description": None, "parameters": None},
        {
            "name": "gh",
            "kind": "fragment_loader",
            "description": "Fragments from a GitHub repository.",
            "parameters": None,
        },
        {"name": "gh_1", "kind": "fragment_loader", "description": None, "parameters": None},
    ]
    assert set(llm.get_fragment_loaders()) >= {"gh", "gh_1"}  # llm's own names for them


def test_tools_and_other_kinds_come_hook_by_hook(llm: Any, write: Write) -> None:
    write(
        "llmdemo_mixed",
        MODELS
        + """
    def shout(text: str) -> str:
        return text.upper()

    @llm.hookimpl
    def register_tools(register):
        register(shout)
    """,
    )
    registry = Registry()
    loaded = load("llmdemo_mixed", registry)
    assert [(r["name"], r["kind"]) for r in loaded.tools] == [
        ("shout", "tool"),
        ("markov", "model"),
        ("chain", "model"),
        ("embed-demo", "embedding_model"),
    ]
    assert list(registry.tools) == ["shout"]


@pytest.mark.parametrize(
    ("hook", "body", "message"),
    [
        ("register_models(register)", "register(object())", "takes an llm model with a model_id"),
        (
            "register_fragment_loaders(register)",
            "register('x', 'not callable')",
            "register('x', loader): loader must be callable, got str",
        ),
        ("register_commands(cli)", "raise RuntimeError('no config')", "no config"),
    ],
)
def test_a_hook_raising_fails_at_setup_naming_the_hook(
    llm: Any, write: Write, hook: str, body: str, message: str
) -> None:
    write(
        "llmdemo_hook_raises",
        f"""
        import llm

        def tool() -> str:
            return "tool"

        @llm.hookimpl
        def register_tools(register):
            register(tool)

        @llm.hookimpl
        def {hook}:
            {body}
        """,
    )
    registry = Registry()
    error = load_error("llmdemo_hook_raises", registry)
    assert error.stage == "setup"
    assert message in str(error.cause)
    name = hook.partition("(")[0]
    assert error.where == f"its {name} hook"
    assert error.message == f"{error.cause} (in its {name} hook)"
    assert registry.tools == {}  # the tool registered first is withdrawn
    assert describe_hooks("llmdemo_hook_raises") == []


def test_the_probe_reports_every_kind_and_hooks_only_when_nothing_registered(
    tmp_path: Path,
) -> None:
    pytest.importorskip("llm")
    site = tmp_path / "site"
    site.mkdir()
    (site / "llmdemo_probe_models.py").write_text(textwrap.dedent(MODELS))
    (site / "llmdemo_probe_nothing.py").write_text(
        "import llm\n\n@llm.hookimpl\ndef register_commands(cli):\n    pass\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "LLM_LOAD_PLUGINS"}
    env["LLM_USER_PATH"] = str(tmp_path / "llm-user")
    results = {}
    for name in ("llmdemo_probe_models", "llmdemo_probe_nothing"):
        plugin = {"name": name, "group": "llm", "value": name}
        results[name] = probe_load(tmp_path, "llm", plugin, sites=[site], env=env)
    models = results["llmdemo_probe_models"]
    assert models["ok"] is True, models["error"]
    assert [tool["kind"] for tool in models["tools"]] == ["model", "model", "embedding_model"]
    assert "hooks" not in models
    nothing = results["llmdemo_probe_nothing"]
    assert nothing["ok"] is True, nothing["error"]
    assert nothing["tools"] == []
    assert nothing["hooks"] == ["register_commands"]


def test_only_this_plugins_tools_are_collected(llm: Any, write: Write) -> None:
    write(
        "llmdemo_other",
        """
        import llm

        def other_tool() -> str:
            return "other"

        @llm.hookimpl
        def register_tools(register):
            register(other_tool)
        """,
    )
    write(
        "llmdemo_mine",
        """
        import llm

        def my_tool() -> str:
            return "mine"

        @llm.hookimpl
        def register_tools(register):
            register(my_tool)
        """,
    )
    # llm's default plugins, and another plugin, registered with llm's plugin manager
    default_tools = set(llm.get_tools())
    llm.plugins.pm.register(importlib.import_module("llmdemo_other"), name="other")
    assert {"other_tool"} | default_tools <= set(llm.get_tools())
    registry = Registry()
    loaded = load("llmdemo_mine", registry)
    assert [tool["name"] for tool in loaded.tools] == ["my_tool"]
    assert list(registry.tools) == ["my_tool"]


def test_the_host_dispatcher_loads_llm_plugins(llm: Any, write: Write) -> None:
    write("llmdemo_dispatch", TOOLS)
    loaded = load_plugin("llm", ref("llmdemo_dispatch"), Registry())
    assert "Counter_total" in [tool["name"] for tool in loaded.tools]


def test_llm_user_path_points_into_the_temporary_directory(
    llm: Any, write: Write, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    private_tmp = tmp_path / "private-tmp"
    private_tmp.mkdir()
    monkeypatch.delenv("LLM_USER_PATH")
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    write("llmdemo_user_path", TOOLS)
    load("llmdemo_user_path")
    assert os.environ["LLM_USER_PATH"] == str(private_tmp / "llm-user")
    assert Path(llm.user_dir()).is_relative_to(private_tmp)


def test_installed_llm_plugins_are_not_loaded(tmp_path: Path) -> None:
    """A fresh interpreter without LLM_LOAD_PLUGINS: another installed llm plugin that raises
    at import is never imported, not by the load and not when llm later loads its plugins."""
    pytest.importorskip("llm")
    site = tmp_path / "site"
    dist_info = site / "llmdemo_broken_other-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: llmdemo-broken-other\nVersion: 1.0\n"
    )
    (dist_info / "entry_points.txt").write_text("[llm]\nbroken = llmdemo_broken_other\n")
    (site / "llmdemo_broken_other.py").write_text("raise RuntimeError('imported!')\n")
    (site / "llmdemo_good.py").write_text(
        textwrap.dedent(
            """
            import llm

            def ok() -> str:
                return "ok"

            @llm.hookimpl
            def register_tools(register):
                register(ok)
            """
        )
    )
    script = textwrap.dedent(
        """
        import json, os, sys
        from sandboxverify.runtime.hosts import HostContext
        from sandboxverify.runtime.hosts._llm import load_llm
        from sandboxverify.runtime._registrations import Registry
        from sandboxverify.runtime._protocol import EntryPointRef

        loaded = load_llm(EntryPointRef("good", "llm", "llmdemo_good"), Registry(), HostContext())
        import llm
        print(json.dumps({
            "tools": [tool["name"] for tool in loaded.tools],
            "llm_tools": sorted(llm.get_tools()),
            "imported": "llmdemo_broken_other" in sys.modules,
            "env": os.environ["LLM_LOAD_PLUGINS"],
        }))
        """
    )
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"LLM_LOAD_PLUGINS", "LLM_USER_PATH", "PYTHONPATH"}
    }
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO)])
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["tools"] == ["ok"]
    assert found["imported"] is False
    assert found["env"] == ""
    assert "ok" in found["llm_tools"]  # llm's own view: this plugin plus its default tools


def test_a_harness_session_hosts_llm_plugins_with_llms_error_semantics(
    llm: Any, write: Write
) -> None:
    from sandboxverify.harness import call, create_test_session, say, when  # noqa: PLC0415

    write("session_tools", TOOLS)
    with create_test_session(["session_tools"], host="llm") as t:
        assert {"reverse_text", "add_numbers", "Counter_increment", "shout"} <= set(t.tools)
        t.run(
            when(
                "go",
                [
                    call("reverse_text", {"text": "abc"}),
                    call("add_numbers", {"a": 1}),
                    call("divide", {"a": 1, "b": 0}, expect_error="^Error: division by zero$"),
                    call("Counter_increment", {"by": 5}),
                    call("Counter_total"),
                    say("done"),
                ],
            )
        )
        texts = [r.text for r in t.events.tool_results]
        assert texts == ["cba", "3", "Error: division by zero", "5", "total 5"]
