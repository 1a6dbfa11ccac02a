"""The verdict logic on its own: what the probe saw -> which failures, with which words."""

from __future__ import annotations

from dataclasses import replace

from sandboxverify.report._model import Failure, PluginError, PluginRecord, ToolRecord
from sandboxverify.runtime.hosts import HOSTS
from sandboxverify.stages._expectations import Expectations, evaluate
from sandboxverify.stages._hosts import PluginPlan
from sandboxverify.stages._probe import Discovery, PluginLoad


def plan(*groups: str, near_misses: dict[str, str] | None = None) -> PluginPlan:
    return PluginPlan(groups or ("sandboxverify.plugins",), (), near_misses or {})


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
    host: str = "native",
) -> list[Failure]:
    return list(
        evaluate(
            python="3.12.1",
            plan=plan(),
            discovery=disc,
            loads=loads,
            expected=expected,
            own_modules=own,
            host=host,
        ).failures
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
            "module 'demo.attr' has no attribute 'setup' (did you mean 'setpu'?)",
            "fix 'demo.attr:setup'",
        ),
        "data": ("FileNotFoundError", "[Errno 2] data.json", "declare it as package data"),
        "syntax": ("SyntaxError", "invalid syntax", "does not compile on Python 3.12.1"),
        "py2": ("ModuleNotFoundError", "No module named 'hotshot'", "Python 2's standard library"),
        "gone": (
            "ModuleNotFoundError",
            "No module named 'distutils'",
            "removed from the standard library in Python 3.12",
        ),
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


def test_a_plugin_its_application_skips_by_design_is_a_note_not_empty() -> None:
    record = PluginRecord(name="requests", group="g", value="demo.requests:Instrumentor", ok=True)
    skipped = PluginLoad(record, (), None, skipped="the library it instruments is not installed")
    judgement = evaluate(
        python="3.12.1",
        plan=plan(),
        discovery=discovery("requests"),
        loads=[skipped],
        expected=NOTHING_EXPECTED,
        own_modules=frozenset({"demo"}),
    )
    assert judgement.failures == ()
    assert judgement.notes == (
        "plugin 'requests' (demo.requests:Instrumentor) registers nothing here: the library it "
        "instruments is not installed",
    )


def test_duplicates_across_plugins() -> None:
    [failure] = run(discovery("a", "b"), [loaded("a", "search"), loaded("b", "search")])
    assert failure.code == "tool_duplicate"
    assert failure.tool == "search"
    assert "registered by 2 plugins: 'a', 'b'" in failure.message


def test_plugins_of_different_groups_may_register_the_same_name() -> None:
    """Each group's application keeps its own registry: Mako's ``mako`` lexer and ``mako``
    extractor are two registrations, not one registered twice."""
    lexer, extractor = loaded("mako", "mako"), loaded("mako", "mako")
    extractor = PluginLoad(
        replace(extractor.record, group="babel.extractors"), extractor.tools, None
    )
    assert run(discovery("mako"), [lexer, extractor]) == []


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


def test_an_llm_plugin_that_registers_nothing_says_which_hooks_it_implements() -> None:
    record = PluginRecord(name="fragments", group="llm", value="llm_fragments_x", ok=True)
    [failure] = evaluate(
        python="3.12.1",
        host="llm",
        plan=plan("llm"),
        discovery=discovery("fragments", declared=("llm",)),
        loads=[PluginLoad(record, (), None, ("register_fragment_loaders",))],
        expected=NOTHING_EXPECTED,
        own_modules=frozenset(),
    ).failures
    assert failure.code == "plugin_empty"
    assert failure.message == (
        "plugin 'fragments' (llm_fragments_x) loaded but registered nothing through its hooks "
        "(register_fragment_loaders)"
    )
    assert failure.hint is not None and "register_models" in failure.hint


def test_an_llm_plugin_registering_a_model_is_not_empty() -> None:
    record = PluginRecord(name="echo", group="llm", value="llm_echo", ok=True, host="llm")
    model = ToolRecord("echo", "echo", None, kind="model")
    judged = evaluate(
        python="3.12.1",
        plan=plan("llm"),
        discovery=discovery("echo", declared=("llm",)),
        loads=[PluginLoad(record, (model,), None)],
        expected=Expectations(tools=("echo", "model:echo")),
        own_modules=frozenset(),
    )
    assert judged.failures == ()


def test_expectations_match_any_kind_or_exactly_one_with_kind_prefix() -> None:
    record = PluginRecord(name="p", group="pytest11", value="p", ok=True, host="pytest")
    loads = [
        PluginLoad(
            record,
            (
                ToolRecord("mocker", "p", None, kind="fixture"),
                ToolRecord("pytest_configure", "p", None, kind="hook"),
            ),
            None,
        )
    ]

    def codes(*names: str, exact: bool = False) -> list[tuple[str, str | None]]:
        judged = evaluate(
            python="3.12.1",
            plan=plan("pytest11"),
            discovery=discovery("p", declared=("pytest11",)),
            loads=loads,
            expected=Expectations(tools=names, exact=exact),
            own_modules=frozenset(),
        )
        return [(f.code, f.tool) for f in judged.failures]

    assert codes("mocker") == []
    assert codes("fixture:mocker") == []
    assert codes("marker:mocker") == [("tool_missing", "marker:mocker")]
    # hooks are how a plugin works, not what it offers: --exact does not demand them
    assert codes("mocker", exact=True) == []


def test_a_library_without_plugins_passes_with_a_note() -> None:
    judged = evaluate(
        python="3.12.1",
        plan=PluginPlan((), (), {}),
        discovery=discovery(declared=("console_scripts",)),
        loads=[],
        expected=NOTHING_EXPECTED,
        own_modules=frozenset(),
        host="auto",
    )
    assert judged.failures == ()
    assert "verified as a library" in judged.notes[0]


def test_no_plugins_fails_when_plugins_were_expected() -> None:
    def codes(expected: Expectations) -> list[str]:
        judged = evaluate(
            python="3.12.1",
            plan=PluginPlan((), (), {}),
            discovery=discovery(declared=()),
            loads=[],
            expected=expected,
            own_modules=frozenset(),
            host="auto",
        )
        return [f.code for f in judged.failures]

    assert codes(Expectations(tools=("x",))) == ["no_plugins"]
    assert codes(Expectations(plugins=1)) == ["no_plugins"]
    assert codes(Expectations(plugins_asked_for=True)) == ["no_plugins"]
    assert codes(Expectations(plugins=0)) == []


def test_a_misspelled_known_group_is_no_plugins_with_did_you_mean() -> None:
    [failure] = evaluate(
        python="3.12.1",
        plan=PluginPlan((), (), {"pytest_11": "pytest11"}),
        discovery=discovery(declared=("pytest_11",)),
        loads=[],
        expected=NOTHING_EXPECTED,
        own_modules=frozenset(),
        host="auto",
    ).failures
    assert failure.code == "no_plugins"
    assert "did you mean 'pytest11'?" in failure.message


def test_the_no_plugins_hint_names_the_host_of_the_declared_groups() -> None:
    [failure] = evaluate(
        python="3.12.1",
        plan=plan(),
        discovery=discovery(declared=("console_scripts", "pytest11")),
        loads=[],
        expected=Expectations(plugins_asked_for=True),
        own_modules=frozenset(),
        host="native",
    ).failures
    assert failure.hint is not None
    assert "'pytest11' (host pytest)" in failure.hint and "--host pytest" in failure.hint


def test_a_missing_application_says_how_to_install_it() -> None:
    error = PluginError(
        type="ApplicationMissing",
        message="pytest is not installed in the sandbox, and it is the application that loads "
        "'pytest11' plugins",
        traceback="",
        stage="application",
    )
    record = PluginRecord(
        name="p", group="pytest11", value="p", ok=False, error=error, host="pytest"
    )
    [failure] = evaluate(
        python="3.12.1",
        plan=plan("pytest11"),
        discovery=discovery("p", declared=("pytest11",)),
        loads=[PluginLoad(record, (), None)],
        expected=NOTHING_EXPECTED,
        own_modules=frozenset(),
    ).failures
    assert failure.code == "plugin_load_failed"
    assert failure.hint is not None and "--with pytest" in failure.hint


def test_missing_tools_hints_speak_the_hosts_language() -> None:
    def hint(host: str) -> str:
        [failure] = evaluate(
            python="3.12.1",
            host=host,
            plan=plan("g"),
            discovery=discovery("p"),
            loads=[loaded("p", "other")],
            expected=Expectations(tools=("wanted",)),
            own_modules=frozenset(),
        ).failures
        assert failure.code == "tool_missing" and failure.hint is not None
        return failure.hint

    assert "setup(api)" in hint("native")
    assert "<Class>_<method>" in hint("llm")
    assert "tools/list" in hint("mcp")


def test_a_plugin_that_reaches_for_the_network_while_loading_says_so() -> None:
    message = (
        "ConnectionError: HTTPSConnectionPool(host='github.com', port=443): Failed to resolve "
        "'github.com' ([Errno -2] Name or service not known)"
    )
    [failure] = run(discovery("info"), [failed("info", "ConnectionError", message, "application")])
    assert failure.code == "plugin_load_failed"
    assert failure.hint is not None
    assert "reached for the network" in failure.hint
    assert "--plugin-allow-fail info" in failure.hint


def test_plugin_allow_fail_turns_a_matching_failure_into_a_note() -> None:
    loads = [
        failed("material/info", "SystemExit", "1", "application"),
        failed("other", "RuntimeError", "boom"),
        loaded("fine", "tool"),
    ]
    expected = Expectations(allow_fail=("material/*", "never-*"))
    judgement = evaluate(
        python="3.12.1",
        plan=plan(),
        discovery=discovery("material/info", "other", "fine"),
        loads=loads,
        expected=expected,
        own_modules=frozenset({"demo"}),
        host="native",
    )
    # the glob covers material/info only: 'other' still fails, and a glob that matches no
    # plugin is said, so a stale allowance does not hide in a configuration file
    assert [failure.plugin for failure in judgement.failures] == ["other"]
    assert judgement.notes[0].startswith(
        "allowed to fail by --plugin-allow-fail material/*: plugin 'material/info'"
    )
    assert judgement.notes[1] == (
        "--plugin-allow-fail never-* matches no plugin (there are: material/info, other, fine)"
    )


def test_a_plugin_that_runs_a_missing_program_names_it() -> None:
    message = (
        "mkdocs build with plugins: [material/optimize] failed:\nERROR: Couldn't optimize image "
        "'favicon.png': 'pngquant' not found. Make sure 'pngquant' is installed and in your path"
    )
    [failure] = run(
        discovery("material/optimize"),
        [failed("material/optimize", "ApplicationFailed", message, "application")],
    )
    assert failure.hint is not None
    assert failure.hint.startswith("the plugin runs the program 'pngquant', which is not installed")
    assert "--plugin-allow-fail material/optimize" in failure.hint
    # a data file missing at import keeps its own hint
    [data] = run(discovery("d"), [failed("d", "FileNotFoundError", "No such file: 'data.json'")])
    assert data.hint is not None and "package data" in data.hint


def test_plugin_allow_fail_never_excuses_every_plugin() -> None:
    # nothing loaded at all: an allowance would turn a check that verified nothing green
    judgement = evaluate(
        python="3.12.1",
        plan=plan(),
        discovery=discovery("only"),
        loads=[failed("only", "RuntimeError", "boom")],
        expected=Expectations(allow_fail=("*",)),
        own_modules=frozenset({"demo"}),
        host="native",
    )
    [failure] = judgement.failures
    assert failure.code == "plugin_load_failed"
    assert failure.hint is not None
    assert failure.hint.startswith("no plugin loaded, so --plugin-allow-fail * cannot excuse")


def test_a_plugin_that_broke_when_its_application_used_it_says_so() -> None:
    [failure] = run(
        discovery("a"),
        [failed("a", "RuntimeError", "boom (in the startup hook)", stage="exercise")],
        host="pluggy",
    )
    assert failure.message == (
        "plugin 'a' (demo.a:setup) broke when its application used it: RuntimeError: boom (in "
        "the startup hook)"
    )
    assert failure.hint == HOSTS["pluggy"].wording.exercise_hint


def test_a_plugin_that_needs_what_the_sandbox_lacks_says_what_and_how_to_allow_it() -> None:
    need = "needs a service it cannot reach: ConnectionRefusedError: refused (in the startup hook)"
    [failure] = run(
        discovery("a"), [failed("a", "MissingPrerequisite", need, stage="exercise")], host="pluggy"
    )
    assert failure.message == f"plugin 'a' (demo.a:setup) {need}"
    assert failure.hint is not None and "--plugin-allow-fail a" in failure.hint


def test_a_registration_unavailable_here_is_a_note_not_a_failure() -> None:
    record = PluginRecord(name="db", group="pytest11", value="demo.db", ok=True)
    tools = (
        ToolRecord(
            "database",
            "db",
            None,
            kind="fixture",
            exercise="unavailable",
            exercise_note="needs a service it cannot reach: refused",
        ),
        ToolRecord("url", "db", None, kind="fixture", exercise="passed"),
        ToolRecord(
            "pytest_configure",
            "db",
            None,
            kind="hook",
            exercise="not_exercised",
            exercise_note="not called",
        ),
    )
    judgement = evaluate(
        python="3.12.1",
        plan=plan("pytest11"),
        discovery=discovery("db"),
        loads=[PluginLoad(record, tools, None)],
        expected=NOTHING_EXPECTED,
        own_modules=frozenset({"demo"}),
        host="pytest",
    )
    assert judgement.failures == ()
    assert judgement.notes == (
        "fixture 'database' of plugin 'db' was not exercised: needs a service it cannot reach: "
        "refused",
    )
