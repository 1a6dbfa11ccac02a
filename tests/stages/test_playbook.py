"""Smoke playbooks: the TOML contract, the normalised spec, and one-line errors naming the place."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sandboxverify._errors import ConfigError
from sandboxverify.stages.playbook import load_playbook, parse_playbook
from tests.helpers import schema_errors

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older hosts
    import tomli as tomllib

PLAYBOOKS = Path(__file__).parent / "playbooks"

DESIGN = """\
[mock_tools]
bash = "ok"                                  # static text
read = ["first read", "second read"]         # consumed in order; a third call fails: mocks_exhausted

[mock_ui]
confirm = true
select = "Approve"

[[turns]]
prompt = "Propose a plan"
actions = [
  { call = "plan_propose", params = { title = "Cook omelette" }, capture = { plan_id = "PLAN-[0-9a-f]+" } },
  { say = "Plan created." },
]

[[turns]]
prompt = "Approve it"
actions = [
  { call = "plan_approve", params = { id = "${plan_id}" }, expect = "approved" },
  { say = "Approved." },
]

[expect]
called = ["plan_propose", "plan_approve"]
called_before = [["plan_propose", "plan_approve"]]
"""

#: a valid turn to append to snippets that test something else
TURN = '[[turns]]\nprompt = "p"\nactions = [{ say = "hi" }]\n'


def parse(text: str) -> dict[str, object]:
    """The spec of a playbook the loader accepts, which the shipped schema accepts too."""
    spec = parse_playbook(text, "smoke.toml")
    assert schema_errors("playbook", tomllib.loads(text)) == []
    return spec


def error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse(text)
    return info.value


def actions(*lines: str) -> str:
    """A playbook of one turn with these actions (inline tables)."""
    return '[[turns]]\nprompt = "p"\nactions = [\n' + "".join(f"  {a},\n" for a in lines) + "]\n"


def call(**fields: object) -> dict[str, object]:
    """A normalised call action with the defaults filled in."""
    return {
        "kind": "call",
        "where": "turns[0].actions[0]",
        "tool": "t",
        "params": {},
        "capture": {},
        "expect": None,
        "expect_error": False,
        "text": None,
        **fields,
    }


# -- valid playbooks -------------------------------------------------------------------------


def test_the_design_example_parses_into_exactly_the_spec() -> None:
    assert (PLAYBOOKS / "design.toml").read_text(encoding="utf-8") == DESIGN
    path = PLAYBOOKS / "design.toml"

    spec = load_playbook(path)

    assert spec == {
        "source": str(path),
        "base": str(path.parent.resolve()),
        "name": None,
        "mock_tools": {"bash": "ok", "read": ["first read", "second read"]},
        "mock_ui": {"confirm": True, "select": "Approve"},
        "plugins": None,
        "turns": [
            {
                "prompt": "Propose a plan",
                "where": "turns[0]",
                "actions": [
                    {
                        "kind": "call",
                        "where": "turns[0].actions[0]",
                        "tool": "plan_propose",
                        "params": {"title": "Cook omelette"},
                        "capture": {"plan_id": "PLAN-[0-9a-f]+"},
                        "expect": None,
                        "expect_error": False,
                        "text": None,
                    },
                    {"kind": "say", "where": "turns[0].actions[1]", "text": "Plan created."},
                ],
            },
            {
                "prompt": "Approve it",
                "where": "turns[1]",
                "actions": [
                    {
                        "kind": "call",
                        "where": "turns[1].actions[0]",
                        "tool": "plan_approve",
                        "params": {"id": "${plan_id}"},
                        "capture": {},
                        "expect": "approved",
                        "expect_error": False,
                        "text": None,
                    },
                    {"kind": "say", "where": "turns[1].actions[1]", "text": "Approved."},
                ],
            },
        ],
        "expect": {
            "called": ["plan_propose", "plan_approve"],
            "not_called": [],
            "called_before": [["plan_propose", "plan_approve"]],
            "approved": [],
        },
    }
    assert json.loads(json.dumps(spec)) == spec
    assert parse_playbook(DESIGN, "smoke.toml") == {
        **spec,
        "source": "smoke.toml",
        "base": str(Path.cwd().resolve()),  # plugin files are relative to the playbook
    }


def test_every_extension_at_once() -> None:
    path = PLAYBOOKS / "extended.toml"

    spec = load_playbook(path)

    assert json.loads(json.dumps(spec)) == spec
    assert spec == {
        "source": str(path),
        "base": str(path.parent.resolve()),
        "name": "planner, the long way",
        "mock_tools": {
            "bash": {"content": [{"type": "text", "text": "done"}], "is_error": False},
            "read": [
                "plain text",
                {
                    "content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}],
                    "details": {"size": 2},
                },
            ],
        },
        "mock_ui": {
            "confirm": [True, False],
            "select": [0, "Reject"],
            "input": "a note",
            "editor": ["first draft", "second draft"],
            "notify": "collect",
            "set_status": "collect",
            "set_widget": "collect",
        },
        "plugins": ["svfix_planner.plugin:setup", "planner"],
        "turns": [
            {
                "prompt": "Propose two plans",
                "where": "turns[0]",
                "actions": [
                    {
                        "kind": "parallel",
                        "where": "turns[0].actions[0]",
                        "text": "Proposing both.",
                        "calls": [
                            call(
                                where="turns[0].actions[0].parallel[0]",
                                tool="plan_propose",
                                params={"title": "A"},
                                capture={"first": "PLAN-([0-9a-f]+)"},
                            ),
                            call(
                                where="turns[0].actions[0].parallel[1]",
                                tool="plan_propose",
                                params={"title": "B"},
                                capture={"second": "PLAN-[0-9a-f]+"},
                                expect="PLAN-",
                            ),
                        ],
                    },
                    call(where="turns[0].actions[1]", tool="plan_list", text="Let me check."),
                    {"kind": "say", "where": "turns[0].actions[2]", "text": "Two plans."},
                ],
            },
            {
                "prompt": "Approve the first, reject the second",
                "where": "turns[1]",
                "actions": [
                    call(
                        where="turns[1].actions[0]",
                        tool="plan_approve",
                        params={
                            "id": "PLAN-${first}",
                            "meta": {"tags": ["${second}", {"literal": "$${first}"}]},
                        },
                    ),
                    call(
                        where="turns[1].actions[1]",
                        tool="plan_reject",
                        params={"id": "${second}", "reason": "costs $5"},
                        expect_error="KeyError|unknown",
                    ),
                    {"kind": "say", "where": "turns[1].actions[2]", "text": "Done."},
                ],
            },
        ],
        "expect": {
            "called": ["plan_propose", "plan_approve"],
            "not_called": ["bash"],
            "called_before": [["plan_propose", "plan_approve"], ["plan_list", "plan_reject"]],
            "approved": [],
        },
    }


def test_defaults_of_a_minimal_playbook() -> None:
    assert parse(TURN) == {
        "source": "smoke.toml",
        "base": str(Path.cwd().resolve()),
        "name": None,
        "mock_tools": {},
        "mock_ui": {},
        "plugins": None,
        "turns": [
            {
                "prompt": "p",
                "where": "turns[0]",
                "actions": [{"kind": "say", "where": "turns[0].actions[0]", "text": "hi"}],
            }
        ],
        "expect": {"called": [], "not_called": [], "called_before": [], "approved": []},
    }


def test_a_call_with_text_and_expect_error() -> None:
    spec = parse(
        actions(
            '{ call = "t", text = "Let me try.", expect_error = true }',
            '{ call = "t", expect_error = "Key(Error)?" }',
            '{ say = "ok" }',
        )
    )

    first, second, _ = spec["turns"][0]["actions"]  # type: ignore[index]
    assert first == call(text="Let me try.", expect_error=True)
    assert second == call(where="turns[0].actions[1]", expect_error="Key(Error)?")


def test_a_parallel_action() -> None:
    spec = parse(
        actions(
            '{ parallel = [{ call = "a", params = { x = 1 } }, { call = "b" }], text = "Both." }',
            '{ parallel = [{ call = "c", expect_error = true }] }',
        )
    )

    first, second = spec["turns"][0]["actions"]  # type: ignore[index]
    assert first == {
        "kind": "parallel",
        "where": "turns[0].actions[0]",
        "text": "Both.",
        "calls": [
            call(where="turns[0].actions[0].parallel[0]", tool="a", params={"x": 1}),
            call(where="turns[0].actions[0].parallel[1]", tool="b"),
        ],
    }
    assert second["text"] is None
    assert second["calls"] == [
        call(where="turns[0].actions[1].parallel[0]", tool="c", expect_error=True)
    ]


def test_references_deep_inside_params_are_kept_as_written() -> None:
    params = (
        '{ top = "${a}", list = ["x", ["${a}-${a}"]], table = { inner = [{ deep = "${a}" }] } }'
    )
    spec = parse(
        actions("{ call = 't', capture = { a = '\\d+' } }", f'{{ call = "u", params = {params} }}')
    )

    assert spec["turns"][0]["actions"][1]["params"] == {  # type: ignore[index]
        "top": "${a}",
        "list": ["x", ["${a}-${a}"]],
        "table": {"inner": [{"deep": "${a}"}]},
    }


def test_dollar_dollar_brace_is_a_literal_and_needs_no_capture() -> None:
    spec = parse(actions('{ call = "t", params = { s = "$${x} costs $5 and $$ stays" } }'))

    assert spec["turns"][0]["actions"][0]["params"] == {"s": "$${x} costs $5 and $$ stays"}  # type: ignore[index]


def test_captures_reach_later_turns_and_the_actions_after_a_parallel() -> None:
    parse(
        '[[turns]]\nprompt = "one"\nactions = [\n'
        '  { parallel = [{ call = "a", capture = { x = "." } }, '
        '{ call = "b", capture = { y = "." } }] },\n'
        '  { call = "c", params = { both = "${x}${y}" }, capture = { x = "(.)" } },\n'
        "]\n"
        '[[turns]]\nprompt = "two"\nactions = [{ call = "d", params = { x = "${x}" } }]\n'
    )


def test_top_level_keys_may_come_in_any_order_and_values_stay_json() -> None:
    spec = parse(
        'name = "n"\n' + TURN + '[expect]\nnot_called = ["bash"]\n[mock_tools.bash]\n'
        'content = [{ type = "text", text = "x" }]\ndetails = { n = 1.5, ok = true, l = [] }\n'
    )

    assert spec["mock_tools"] == {
        "bash": {
            "content": [{"type": "text", "text": "x"}],
            "details": {"n": 1.5, "ok": True, "l": []},
        }
    }
    assert spec["expect"] == {
        "called": [],
        "not_called": ["bash"],
        "called_before": [],
        "approved": [],
    }
    assert json.loads(json.dumps(spec)) == spec


def test_a_regex_python_warns_about_is_accepted_silently() -> None:
    # "[[" draws a FutureWarning from re; pytest turns warnings into errors, so this also shows
    # that nothing escapes to stderr.
    spec = parse(actions("{ call = 't', expect = '[[a]' }"))

    assert spec["turns"][0]["actions"][0]["expect"] == "[[a]"  # type: ignore[index]


def test_mock_tool_names_are_not_checked_here() -> None:
    spec = parse('[mock_tools]\n"my.tool" = "x"\nanything_at_all = "y"\n' + TURN)

    assert spec["mock_tools"] == {"my.tool": "x", "anything_at_all": "y"}


# -- errors ----------------------------------------------------------------------------------

ERRORS: list[tuple[str, str, str, str | None]] = [
    # (id, playbook, message after "smoke.toml: ", hint substring or None)
    # top level
    (
        "unknown-top-key",
        "turn = 1\n" + TURN,
        "unknown top-level key 'turn'",
        "did you mean 'turns'?",
    ),
    (
        "unknown-top-key-far",
        "zzz = 1\n" + TURN,
        "unknown top-level key 'zzz'",
        "known keys: name, description, plugins, mock_tools, mock_ui, turns, expect",
    ),
    ("no-turns", 'name = "x"\n', "a playbook needs at least one [[turns]]", "add [[turns]]"),
    ("empty-turns", "turns = []\n", "turns: a playbook needs at least one [[turns]]", "[[turns]]"),
    (
        "turns-a-table",
        '[turns]\nprompt = "p"\n',
        "turns: must be an array of tables, got {'prompt': 'p'}",
        "double brackets",
    ),
    ("name-type", "name = 1\n" + TURN, "name: must be a string, got 1", None),
    (
        "description-type",
        "description = []\n" + TURN,
        "description: must be a string, got []",
        None,
    ),
    (
        "plugins-type",
        'plugins = "x"\n' + TURN,
        "plugins: must be an array of strings, got 'x'",
        None,
    ),
    ("plugins-item", "plugins = [1]\n" + TURN, "plugins[0]: must be a string, got 1", None),
    ("plugins-blank", 'plugins = ["a", " "]\n' + TURN, "plugins[1]: must not be empty", None),
    ("plugins-empty", "plugins = []\n" + TURN, "plugins: must list at least one plugin", "leave"),
    # turns
    (
        "turn-unknown-key",
        '[[turns]]\npromt = "p"\nactions = [{ say = "x" }]\n',
        "turns[0]: unknown key 'promt'",
        "did you mean 'prompt'?",
    ),
    (
        "turn-no-prompt",
        '[[turns]]\nactions = [{ say = "x" }]\n',
        'turns[0]: a turn needs a "prompt" (what the user says)',
        None,
    ),
    (
        "turn-empty-prompt",
        TURN + '[[turns]]\nprompt = ""\nactions = [{ say = "x" }]\n',
        "turns[1].prompt: must not be empty",
        None,
    ),
    (
        "turn-prompt-type",
        '[[turns]]\nprompt = 3\nactions = [{ say = "x" }]\n',
        "turns[0].prompt: must be a string, got 3",
        None,
    ),
    (
        "turn-no-actions",
        '[[turns]]\nprompt = "p"\n',
        "turns[0].actions: a turn needs a non-empty array of actions",
        "actions = [",
    ),
    (
        "turn-empty-actions",
        '[[turns]]\nprompt = "p"\nactions = []\n',
        "turns[0].actions: a turn needs a non-empty array of actions",
        None,
    ),
    # actions
    (
        "action-not-table",
        actions('"hello"'),
        'turns[0].actions[0]: an action must be a table such as { call = "tool" } or '
        "{ say = \"...\" }, got 'hello'",
        None,
    ),
    (
        "action-unknown-key",
        actions('{ call = "t", captur = { x = "." } }'),
        "turns[0].actions[0]: unknown key 'captur'",
        "did you mean 'capture'?",
    ),
    (
        "action-no-kind",
        TURN + '[[turns]]\nprompt = "p"\nactions = [{ params = {} }]\n',
        'turns[1].actions[0]: an action needs "call", "say" or "parallel"',
        None,
    ),
    (
        "action-two-kinds",
        actions('{ call = "t", say = "x" }'),
        'turns[0].actions[0]: an action has one of call, say or parallel, this one has "call" '
        'and "say"',
        "split it",
    ),
    (
        "action-three-kinds",
        actions('{ say = "x", parallel = [], call = "t" }'),
        'turns[0].actions[0]: an action has one of call, say or parallel, this one has "call" '
        'and "say" and "parallel"',
        None,
    ),
    ("say-type", actions("{ say = 1 }"), "turns[0].actions[0].say: must be a string, got 1", None),
    (
        "say-other-keys",
        actions('{ say = "x", text = "y" }'),
        "turns[0].actions[0]: a \"say\" action takes no other keys, got 'text'",
        '"text"',
    ),
    (
        "after-say",
        actions('{ say = "x" }', '{ call = "t" }'),
        'turns[0].actions[1]: comes after the "say" at turns[0].actions[0], which ends the turn',
        "last action",
    ),
    ("call-empty", actions('{ call = "" }'), "turns[0].actions[0].call: must not be empty", None),
    (
        "call-type",
        actions("{ call = 1 }"),
        "turns[0].actions[0].call: must be a string, got 1",
        None,
    ),
    (
        "params-type",
        actions('{ call = "t", params = "x=1" }'),
        "turns[0].actions[0].params: must be a table, got 'x=1'",
        "params = {",
    ),
    (
        "text-type",
        actions('{ call = "t", text = 1 }'),
        "turns[0].actions[0].text: must be a string, got 1",
        None,
    ),
    # captures and regexes
    (
        "capture-type",
        actions('{ call = "t", capture = "x" }'),
        "turns[0].actions[0].capture: must be a table, got 'x'",
        "capture = {",
    ),
    (
        "capture-name",
        actions('{ call = "t", capture = { plan-id = "." } }'),
        "turns[0].actions[0].capture.plan-id: capture name 'plan-id' is not an identifier",
        "letters, digits and _",
    ),
    (
        "capture-name-digit",
        actions('{ call = "t", capture = { 1st = "." } }'),
        "turns[0].actions[0].capture.1st: capture name '1st' is not an identifier",
        None,
    ),
    (
        "capture-value-type",
        actions('{ call = "t", capture = { x = 1 } }'),
        "turns[0].actions[0].capture.x: must be a string, got 1",
        None,
    ),
    (
        "capture-bad-regex",
        actions('{ call = "t", capture = { plan_id = "PLAN-[0-9" } }'),
        "turns[0].actions[0].capture.plan_id: bad regex 'PLAN-[0-9': unterminated character set "
        "at position 5",
        "regular expression",
    ),
    (
        "expect-bad-regex",
        actions('{ call = "t", expect = "(approved" }'),
        "turns[0].actions[0].expect: bad regex '(approved': missing ), unterminated subpattern at "
        "position 0",
        None,
    ),
    (
        "expect-type",
        actions('{ call = "t", expect = true }'),
        "turns[0].actions[0].expect: must be a string, got True",
        None,
    ),
    (
        "expect-error-type",
        actions('{ call = "t", expect_error = 1 }'),
        "turns[0].actions[0].expect_error: must be true, false or a regex the error text must "
        "match; got 1",
        None,
    ),
    (
        "expect-error-bad-regex",
        actions('{ call = "t", expect_error = "*" }'),
        "turns[0].actions[0].expect_error: bad regex '*': nothing to repeat at position 0",
        None,
    ),
    # references
    (
        "ref-uncaptured",
        DESIGN.replace("capture = { plan_id", "capture = { plan_ref"),
        "turns[1].actions[0].params.id: ${plan_id} is not captured by any earlier action",
        "did you mean ${plan_ref}? captured so far: plan_ref",
    ),
    (
        "ref-nothing-captured",
        actions('{ call = "t", params = { id = "${plan_id}" } }'),
        "turns[0].actions[0].params.id: ${plan_id} is not captured by any earlier action",
        "no earlier action captures anything; add capture = { plan_id = 'regex' } to one",
    ),
    (
        "ref-captured-so-far",
        actions(
            '{ call = "t", capture = { a = "." } }',
            '{ call = "t", capture = { b = "." } }',
            '{ call = "t", params = { id = "${zzz}" } }',
        ),
        "turns[0].actions[2].params.id: ${zzz} is not captured by any earlier action",
        "captured so far: a, b",
    ),
    (
        "ref-same-action",
        actions('{ call = "t", params = { id = "${x}" }, capture = { x = "." } }'),
        "turns[0].actions[0].params.id: ${x} is not captured by any earlier action",
        None,
    ),
    (
        "ref-later-action",
        actions(
            '{ call = "t", params = { id = "${x}" } }', '{ call = "t", capture = { x = "." } }'
        ),
        "turns[0].actions[0].params.id: ${x} is not captured by any earlier action",
        None,
    ),
    (
        "ref-parallel-sibling",
        actions(
            '{ parallel = [{ call = "a", capture = { x = "." } }, '
            '{ call = "b", params = { id = "${x}" } }] }'
        ),
        "turns[0].actions[0].parallel[1].params.id: ${x} is not captured by any earlier action",
        None,
    ),
    (
        "ref-nested",
        actions(
            '{ call = "t", capture = { x = "." } }',
            '{ call = "t", params = { a = [1, { b = ["${x}", "${y}"] }] } }',
        ),
        "turns[0].actions[1].params.a[1].b[1]: ${y} is not captured by any earlier action",
        "captured so far: x",
    ),
    (
        "ref-quoted-key",
        actions('{ call = "t", params = { "a.b" = "${y}" } }'),
        'turns[0].actions[0].params."a.b": ${y} is not captured by any earlier action',
        None,
    ),
    (
        "ref-malformed",
        actions('{ call = "t", params = { id = "${1x}" } }'),
        "turns[0].actions[0].params.id: malformed reference in '${1x}': write ${name} with a "
        "capture name",
        "write $${ for a literal ${",
    ),
    (
        "ref-unterminated",
        actions('{ call = "t", params = { id = "${x" } }'),
        "turns[0].actions[0].params.id: malformed reference in '${x': write ${name} with a "
        "capture name",
        None,
    ),
    (
        "params-datetime",
        actions('{ call = "t", params = { when = 2024-01-02 } }'),
        "turns[0].actions[0].params.when: a TOML date/time (2024-01-02) cannot be passed on as "
        "JSON",
        "quote it",
    ),
    (
        "params-nan",
        actions('{ call = "t", params = { n = [nan] } }'),
        "turns[0].actions[0].params.n[0]: nan cannot be passed on as JSON",
        None,
    ),
    # parallel
    (
        "parallel-type",
        actions('{ parallel = { call = "a" } }'),
        "turns[0].actions[0].parallel: must be a non-empty array of calls, got {'call': 'a'}",
        "parallel = [",
    ),
    (
        "parallel-empty",
        actions("{ parallel = [] }"),
        "turns[0].actions[0].parallel: must be a non-empty array of calls, got []",
        None,
    ),
    (
        "parallel-extra-key",
        actions('{ parallel = [{ call = "a" }], capture = { x = "." } }'),
        'turns[0].actions[0]: a "parallel" action takes only "parallel" and "text", got '
        "'capture'",
        "inside parallel",
    ),
    (
        "parallel-text-type",
        actions('{ parallel = [{ call = "a" }], text = 1 }'),
        "turns[0].actions[0].text: must be a string, got 1",
        None,
    ),
    (
        "parallel-inner-not-table",
        actions('{ parallel = ["a"] }'),
        'turns[0].actions[0].parallel[0]: must be a call table such as { call = "tool" }, '
        "got 'a'",
        None,
    ),
    (
        "parallel-inner-text",
        actions('{ parallel = [{ call = "a", text = "x" }] }'),
        'turns[0].actions[0].parallel[0]: "text" is not allowed inside "parallel"',
        '"text" on the parallel action',
    ),
    (
        "parallel-inner-say",
        actions('{ parallel = [{ call = "a" }, { say = "x" }] }'),
        "turns[0].actions[0].parallel[1]: 'say' is not allowed inside \"parallel\"",
        "separate action",
    ),
    (
        "parallel-inner-parallel",
        actions("{ parallel = [{ parallel = [] }] }"),
        "turns[0].actions[0].parallel[0]: 'parallel' is not allowed inside \"parallel\"",
        None,
    ),
    (
        "parallel-inner-unknown",
        actions('{ parallel = [{ call = "a", parms = {} }] }'),
        "turns[0].actions[0].parallel[0]: unknown key 'parms'",
        "did you mean 'params'?",
    ),
    (
        "parallel-inner-no-call",
        actions("{ parallel = [{ params = {} }] }"),
        'turns[0].actions[0].parallel[0]: a call inside "parallel" needs "call"',
        None,
    ),
    (
        "parallel-inner-bad-regex",
        actions('{ parallel = [{ call = "a", expect = "[" }] }'),
        "turns[0].actions[0].parallel[0].expect: bad regex '[': unterminated character set at "
        "position 0",
        None,
    ),
    (
        "parallel-duplicate-capture",
        actions(
            '{ parallel = [{ call = "a", capture = { x = "." } }, '
            '{ call = "b", capture = { x = "." } }] }'
        ),
        "turns[0].actions[0].parallel[1].capture.x: 'x' is also captured by "
        "turns[0].actions[0].parallel[0], in the same parallel action",
        "different name",
    ),
    # mock_tools
    (
        "mock-tools-type",
        "mock_tools = 1\n" + TURN,
        "mock_tools: must be a table, got 1",
        "[mock_tools]",
    ),
    (
        "mock-tool-int",
        "[mock_tools]\nbash = 1\n" + TURN,
        'mock_tools.bash: must be a string, a result table { content = [{ type = "text", text = '
        '"..." }], details = ..., is_error = false }, or a non-empty array of those (used in '
        "order); got 1",
        None,
    ),
    (
        "mock-tool-quoted-name",
        '[mock_tools]\n"my.tool" = true\n' + TURN,
        'mock_tools."my.tool": must be a string, a result table',
        None,
    ),
    (
        "mock-tool-empty-list",
        "[mock_tools]\nread = []\n" + TURN,
        "mock_tools.read: an empty array mocks no call",
        "a string, a result table",
    ),
    (
        "mock-tool-list-item",
        '[mock_tools]\nread = ["a", ["b"]]\n' + TURN,
        "mock_tools.read[1]: must be a string, a result table",
        None,
    ),
    (
        "mock-tool-no-content",
        "[mock_tools]\nbash = { is_error = true }\n" + TURN,
        'mock_tools.bash: a result table needs "content"',
        "content = [",
    ),
    (
        "mock-tool-unknown-key",
        '[mock_tools]\nbash = { contents = [{ type = "text", text = "x" }] }\n' + TURN,
        "mock_tools.bash: unknown key 'contents'",
        "did you mean 'content'?",
    ),
    (
        "mock-tool-empty-content",
        "[mock_tools]\nbash = { content = [] }\n" + TURN,
        "mock_tools.bash.content: must be a non-empty array of content blocks, got []",
        None,
    ),
    (
        "mock-tool-block-no-type",
        '[mock_tools]\nbash = { content = [{ text = "x" }] }\n' + TURN,
        'mock_tools.bash.content[0]: a content block must be a table with a string "type", '
        "got {'text': 'x'}",
        None,
    ),
    (
        "mock-tool-text-block-no-text",
        '[mock_tools]\nbash = { content = [{ type = "text", text = 1 }] }\n' + TURN,
        'mock_tools.bash.content[0]: a "text" block needs a string "text"',
        None,
    ),
    (
        "mock-tool-is-error-type",
        '[mock_tools]\nbash = { content = [{ type = "text", text = "x" }], is_error = "yes" }\n'
        + TURN,
        "mock_tools.bash.is_error: must be true or false, got 'yes'",
        None,
    ),
    (
        "mock-tool-details-datetime",
        '[mock_tools]\nbash = [{ content = [{ type = "text", text = "x" }], details = { at = '
        "12:00:00 } }]\n" + TURN,
        "mock_tools.bash[0].details.at: a TOML date/time (12:00:00) cannot be passed on as JSON",
        None,
    ),
    # mock_ui
    ("mock-ui-type", 'mock_ui = "x"\n' + TURN, "mock_ui: must be a table, got 'x'", None),
    (
        "mock-ui-unknown",
        "[mock_ui]\nconfrim = true\n" + TURN,
        "mock_ui: unknown key 'confrim'",
        "did you mean 'confirm'?",
    ),
    (
        "mock-ui-confirm-type",
        '[mock_ui]\nconfirm = "yes"\n' + TURN,
        "mock_ui.confirm: must be true or false, or a non-empty array of those; got 'yes'",
        None,
    ),
    (
        "mock-ui-confirm-empty",
        "[mock_ui]\nconfirm = []\n" + TURN,
        "mock_ui.confirm: an empty array answers nothing",
        "give at least one answer: true or false",
    ),
    (
        "mock-ui-confirm-list-item",
        "[mock_ui]\nconfirm = [true, 1]\n" + TURN,
        "mock_ui.confirm[1]: must be true or false, or a non-empty array of those; got 1",
        None,
    ),
    (
        "mock-ui-confirm-nested-list",
        "[mock_ui]\nconfirm = [[true]]\n" + TURN,
        "mock_ui.confirm[0]: must be true or false, or a non-empty array of those; got [True]",
        None,
    ),
    (
        "mock-ui-select-negative",
        "[mock_ui]\nselect = -1\n" + TURN,
        "mock_ui.select: must be an index (integer >= 0) or an item (string), or a non-empty "
        "array of those; got -1",
        None,
    ),
    (
        "mock-ui-select-bool",
        "[mock_ui]\nselect = [0, true]\n" + TURN,
        "mock_ui.select[1]: must be an index (integer >= 0) or an item (string)",
        None,
    ),
    (
        "mock-ui-select-float",
        "[mock_ui]\nselect = 1.0\n" + TURN,
        "mock_ui.select: must be an index (integer >= 0) or an item (string)",
        None,
    ),
    (
        "mock-ui-input-type",
        "[mock_ui]\ninput = 5\n" + TURN,
        "mock_ui.input: must be a string, or a non-empty array of those; got 5",
        None,
    ),
    (
        "mock-ui-editor-list-item",
        '[mock_ui]\neditor = ["a", false]\n' + TURN,
        "mock_ui.editor[1]: must be a string, or a non-empty array of those; got False",
        None,
    ),
    (
        "mock-ui-notify",
        '[mock_ui]\nnotify = "show"\n' + TURN,
        'mock_ui.notify: the only value is "collect" (its calls are always collected), got '
        "'show'",
        None,
    ),
    (
        "mock-ui-set-widget-list",
        '[mock_ui]\nset_widget = ["collect"]\n' + TURN,
        'mock_ui.set_widget: the only value is "collect"',
        None,
    ),
    (
        "mock-ui-set-status",
        "[mock_ui]\nset_status = true\n" + TURN,
        'mock_ui.set_status: the only value is "collect"',
        None,
    ),
    # [expect]
    ("expect-type", "expect = 1\n" + TURN, "expect: must be a table, got 1", "[expect]"),
    (
        "expect-unknown",
        TURN + '[expect]\ncalld = ["a"]\n',
        "expect: unknown key 'calld'",
        "did you mean 'called'?",
    ),
    (
        "expect-called-type",
        TURN + '[expect]\ncalled = "a"\n',
        "expect.called: must be an array of strings, got 'a'",
        None,
    ),
    (
        "expect-not-called-item",
        TURN + "[expect]\nnot_called = [1]\n",
        "expect.not_called[0]: must be a string, got 1",
        None,
    ),
    (
        "expect-called-before-type",
        TURN + '[expect]\ncalled_before = ["a", "b"]\n',
        "expect.called_before[0]: must be a pair of tool names [first, second], got 'a'",
        'called_before = [["first_tool", "second_tool"]',
    ),
    (
        "expect-called-before-three",
        TURN + '[expect]\ncalled_before = [["a", "b", "c"]]\n',
        "expect.called_before[0]: must be a pair of tool names [first, second], got "
        "['a', 'b', 'c']",
        None,
    ),
    (
        "expect-called-before-item",
        TURN + '[expect]\ncalled_before = [["a", 2]]\n',
        "expect.called_before[0][1]: must be a string, got 2",
        None,
    ),
    (
        "expect-called-before-not-array",
        TURN + "[expect]\ncalled_before = 3\n",
        "expect.called_before: must be an array of [first, second] pairs, got 3",
        None,
    ),
    (
        "expect-called-before-itself",
        TURN + '[expect]\ncalled_before = [["a", "a"]]\n',
        "expect.called_before[0]: 'a' cannot be called before itself",
        "two different tools",
    ),
    (
        "empty-expect",
        actions('{ call = "t", expect = "" }'),
        "turns[0].actions[0].expect: an empty regex matches any text, so it checks nothing",
        "leave the key out",
    ),
    (
        "empty-capture",
        actions('{ call = "t", capture = { id = "" } }'),
        "turns[0].actions[0].capture.id: an empty regex matches any text",
        None,
    ),
    (
        "empty-expect-error",
        actions('{ call = "t", expect_error = "" }'),
        "turns[0].actions[0].expect_error: an empty regex matches any error",
        "expect_error = true",
    ),
    (
        "validate-not-bool",
        actions('{ call = "t", validate = "no" }'),
        "turns[0].actions[0].validate: must be true or false, got 'no'",
        None,
    ),
    (
        "expect-contradiction",
        TURN + '[expect]\ncalled = ["a", "b"]\nnot_called = ["c", "b"]\n',
        "expect.not_called[1]: 'b' is also in expect.called",
        "remove one",
    ),
]


@pytest.mark.parametrize(
    ("text", "message", "hint"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_errors_name_the_file_and_the_place(text: str, message: str, hint: str | None) -> None:
    exc = error(text)

    assert exc.message.startswith("smoke.toml: " + message)
    assert "\n" not in exc.message
    if hint is not None:
        assert exc.hint is not None
        assert hint in exc.hint


def test_the_first_problem_in_the_document_is_reported() -> None:
    bad_expect = '[expect]\ncalld = ["a"]\n'
    bad_turn = '[[turns]]\nprompt = ""\nactions = [{ say = "x" }]\n'

    assert "expect: unknown key" in error(bad_expect + bad_turn).message
    assert "turns[0].prompt" in error(bad_turn + bad_expect).message
    # within one action: its keys in the order written
    assert (
        ".expect:" in error(actions('{ call = "t", expect = "(", capture = { x = "(" } }')).message
    )
    assert (
        ".capture.x:"
        in error(actions('{ call = "t", capture = { x = "(" }, expect = "(" }')).message
    )
    # and the earlier action before the later one
    assert "actions[0]" in error(actions("{ say = 1 }", "{ say = 2 }")).message


def test_invalid_toml_keeps_the_line_and_column() -> None:
    exc = error('[[turns]]\nprompt = "p\n')

    assert exc.message.startswith("smoke.toml: invalid TOML: ")
    assert "line 2" in exc.message
    assert "\n" not in exc.message


def test_load_playbook_names_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"

    with pytest.raises(ConfigError) as info:
        load_playbook(missing)

    assert info.value.message == f"cannot read playbook {missing}: No such file or directory"
    assert info.value.hint is not None


def test_load_playbook_names_an_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read playbook .*: Is a directory"):
        load_playbook(tmp_path)
    binary = tmp_path / "smoke.toml"
    binary.write_bytes(b"name = '\xff'\n")
    with pytest.raises(ConfigError, match=r"cannot read playbook .*smoke\.toml: not UTF-8 text"):
        load_playbook(binary)


def test_load_playbook_errors_name_the_path_as_given(tmp_path: Path) -> None:
    path = tmp_path / "smoke.toml"
    path.write_text("[[turns]]\nprompt = 'p'\nactions = [{ sya = 'x' }]\n", encoding="utf-8")

    with pytest.raises(ConfigError) as info:
        load_playbook(path)

    assert info.value.message == f"{path}: turns[0].actions[0]: unknown key 'sya'"
    assert info.value.hint == "did you mean 'say'?"


# -- MCP: sampling answers on calls, elicitation answers in mock_ui ----------------------------


def test_sample_answers_and_elicit_answers_parse() -> None:
    spec = parse(
        "[mock_ui]\n"
        'elicit = ["decline", { name = "Ada" }, { action = "accept", content = { n = 1 } }]\n'
        + actions(
            '{ call = "summarize", sample = "short" }',
            '{ call = "t", sample = ["a", { content = { type = "text", text = "b" }, '
            'model = "m" }] }',
            '{ say = "done" }',
        )
    )
    assert spec["mock_ui"] == {
        "elicit": ["decline", {"name": "Ada"}, {"action": "accept", "content": {"n": 1}}]
    }
    first, second = spec["turns"][0]["actions"][:2]  # type: ignore[index]
    assert first["sample"] == ["short"]
    assert second["sample"] == ["a", {"content": {"type": "text", "text": "b"}, "model": "m"}]


@pytest.mark.parametrize(
    ("snippet", "place", "message"),
    [
        ('{ call = "t", sample = 3 }', "turns[0].actions[0].sample", "text or a sampling"),
        ('{ call = "t", sample = [] }', "turns[0].actions[0].sample", "empty array"),
        (
            '{ call = "t", sample = { content = { type = "text" } } }',
            "turns[0].actions[0].sample.content",
            'needs a string "text"',
        ),
        (
            '{ call = "t", sample = { content = { type = "text", text = "x" }, temp = 1 } }',
            "turns[0].actions[0].sample",
            "unknown key 'temp'",
        ),
    ],
)
def test_bad_sample_answers_name_the_place(snippet: str, place: str, message: str) -> None:
    problem = error(actions(snippet, '{ say = "x" }'))
    assert place in str(problem)
    assert message in str(problem)


@pytest.mark.parametrize(
    ("value", "place", "message"),
    [
        ('"maybe"', "mock_ui.elicit", '"accept", "decline", "cancel"'),
        ('{ action = "ok" }', "mock_ui.elicit.action", 'must be "accept"'),
        ('{ action = "accept", content = 3 }', "mock_ui.elicit.content", "must be a table"),
        ('{ action = "accept", extra = 1 }', "mock_ui.elicit", "unknown key 'extra'"),
    ],
)
def test_bad_elicit_answers_name_the_place(value: str, place: str, message: str) -> None:
    problem = error(f"[mock_ui]\nelicit = {value}\n" + TURN)
    assert place in str(problem)
    assert message in str(problem)


def test_validate_false_is_kept_for_calls_and_calls_in_parallel() -> None:
    spec = parse(
        actions(
            '{ call = "t", params = { n = "x" }, validate = false }',
            '{ parallel = [{ call = "t", validate = false }, { call = "u" }] }',
            '{ say = "done" }',
        )
    )
    first, parallel = spec["turns"][0]["actions"][:2]  # type: ignore[index]
    assert first["validate"] is False
    assert [c.get("validate", True) for c in parallel["calls"]] == [False, True]
