"""The verdict logic on its own: what the probe saw -> which failures, with which words."""

from __future__ import annotations

from sandboxverify.report._model import Failure, PluginError, PluginRecord, ToolRecord
from sandboxverify.stages._expectations import Expectations, evaluate
from sandboxverify.stages._probe import Discovery, PluginLoad


def discovery(
    *names: str,
    declared: tuple[str, ...] = ("sandboxverify.plugins",),
    others: tuple[dict[str, str], ...] = (),
) -> Discovery:
    return Discovery(
        dist="demo",
        version="1.0",
        plugins=tuple(
            {"name": n, "group": "sandboxverify.plugins", "value": f"demo.{n}:setup"} for n in names
        ),
        declared_groups=declared,
        others=others,
        sys_path=(),
    )


def loaded(name: str, *tools: str) -> PluginLoad:
    record = PluginRecord(name=name, group="g", value=f"demo.{name}:setup", ok=True)
    return PluginLoad(record, tuple(ToolRecord(t, name, None) for t in tools), None)


def failed(name: str, type_: str, message: str, stage: str = "import") -> PluginLoad:
    error = PluginError(type=type_, message=message, traceback="tb", stage=stage)
    return PluginLoad(
        PluginRecord(name=name, group="g", value=f"demo.{name}:setup", ok=False, error=error),
        (),
        None,
    )


NOTHING_EXPECTED = Expectations()


def run(
    disc: Discovery,
    loads: list[PluginLoad],
    expected: Expectations = NOTHING_EXPECTED,
    own: frozenset[str] = frozenset({"demo"}),
) -> list[Failure]:
    return evaluate(
        python="3.12.1",
        groups=["sandboxverify.plugins"],
        discovery=disc,
        loads=loads,
        expected=expected,
        own_modules=own,
    )


def test_all_good_is_no_failures() -> None:
    assert (
        run(discovery("a"), [loaded("a", "x")], Expectations(("x",), exact=True, plugins=1)) == []
    )


def test_no_plugins_names_the_group_what_is_declared_and_who_else_has_some() -> None:
    [failure] = run(
        discovery(
            declared=("console_scripts",),
            others=({"name": "p", "group": "sandboxverify.plugins", "dist": "other"},),
        ),
        [],
    )
    assert failure.code == "no_plugins"
    assert "group 'sandboxverify.plugins'" in failure.message
    assert "it declares: console_scripts" in failure.message
    assert "other installed distributions do: other" in failure.message
    assert (
        failure.hint is not None
        and '[project.entry-points."sandboxverify.plugins"]' in failure.hint
    )


def test_load_failures_get_hints_by_cause() -> None:
    hints = {
        "undeclared": (
            "ModuleNotFoundError",
            "No module named 'requests'",
            "declare it in [project] dependencies",
        ),
        "own": ("ModuleNotFoundError", "No module named 'demo.helpers'", "belongs to this project"),
        "attr": (
            "AttributeError",
            "module 'demo.x' has no attribute 'setpu'",
            "fix 'demo.attr:setup'",
        ),
        "data": ("FileNotFoundError", "[Errno 2] data.json", "declare it as package data"),
        "syntax": ("SyntaxError", "invalid syntax", "does not compile on Python 3.12.1"),
    }
    for name, (type_, message, hint) in hints.items():
        [failure] = run(discovery(name), [failed(name, type_, message)])
        assert failure.code == "plugin_load_failed"
        assert failure.plugin == name
        assert f"{type_}: {message}" in failure.message
        assert failure.hint is not None and hint in failure.hint, name
        assert failure.details == "tb"


def test_setup_stage_failure_says_it_raised_while_registering() -> None:
    [failure] = run(discovery("a"), [failed("a", "RuntimeError", "nope", stage="setup")])
    assert "raised while registering: RuntimeError: nope" in failure.message


def test_probe_failures_pass_through_unchanged() -> None:
    crash = Failure("timeout", "plugin 'a' did not finish", plugin="a")
    record = PluginRecord(name="a", group="g", value="v", ok=False)
    assert run(discovery("a"), [PluginLoad(record, (), crash)]) == [crash]


def test_a_plugin_that_registers_nothing_is_empty_but_hooks_alone_count() -> None:
    [failure] = run(discovery("a"), [loaded("a")])
    assert failure.code == "plugin_empty"
    assert failure.plugin == "a"
    hooks_only = PluginRecord(
        name="h", group="g", value="demo.h:setup", ok=True, handlers={"tool_call": 1}
    )
    assert run(discovery("h"), [PluginLoad(hooks_only, (), None)]) == []


def test_duplicates_across_plugins() -> None:
    [failure] = run(discovery("a", "b"), [loaded("a", "search"), loaded("b", "search")])
    assert failure.code == "tool_duplicate"
    assert failure.tool == "search"
    assert "registered by 2 plugins: 'a', 'b'" in failure.message


def test_missing_tool_suggests_a_close_name() -> None:
    [failure] = run(discovery("a"), [loaded("a", "greet")], Expectations(("gret",)))
    assert failure.code == "tool_missing"
    assert failure.hint == "did you mean 'greet'? fix the tool's name or --expect-tools"


def test_exact_flags_only_tools_not_expected() -> None:
    failures = run(discovery("a"), [loaded("a", "x", "y")], Expectations(("x",), exact=True))
    assert [(f.code, f.tool, f.plugin) for f in failures] == [("tool_unexpected", "y", "a")]


def test_plugin_count_counts_declared_entry_points() -> None:
    [failure] = run(
        discovery("a", "b"), [loaded("a", "x"), loaded("b", "y")], Expectations(plugins=1)
    )
    assert failure.code == "plugin_count_mismatch"
    assert failure.message == "expected 1 plugin(s) in group 'sandboxverify.plugins', found 2: a, b"


def test_an_llm_plugin_without_tools_says_which_hooks_it_implements_instead() -> None:
    def verdict(*hooks: str) -> Failure:
        record = PluginRecord(name="fragments", group="llm", value="llm_fragments_x", ok=True)
        [failure] = evaluate(
            python="3.12.1",
            host="llm",
            groups=["llm"],
            discovery=discovery("fragments", declared=("llm",)),
            loads=[PluginLoad(record, (), None, hooks)],
            expected=NOTHING_EXPECTED,
            own_modules=frozenset(),
        )
        assert failure.code == "plugin_empty"
        return failure

    no_hook = verdict("register_fragment_loaders")
    assert no_hook.message == (
        "plugin 'fragments' (llm_fragments_x) loaded but implements no register_tools hook "
        "(it implements register_fragment_loaders)"
    )
    assert no_hook.hint is not None and "def register_tools(register)" in no_hook.hint
    assert verdict("register_tools").message.endswith("its register_tools hook registered nothing")


def test_missing_tools_hints_speak_the_hosts_language() -> None:
    def hint(host: str) -> str:
        [failure] = evaluate(
            python="3.12.1",
            host=host,
            groups=["g"],
            discovery=discovery("p"),
            loads=[loaded("p", "other")],
            expected=Expectations(tools=("wanted",)),
            own_modules=frozenset(),
        )
        assert failure.code == "tool_missing" and failure.hint is not None
        return failure.hint

    assert "setup(api)" in hint("native")
    assert "<Class>_<method>" in hint("llm")
    assert "tools/list" in hint("mcp")
