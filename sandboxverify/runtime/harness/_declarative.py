"""Running a declarative playbook: the normalized spec (parsed from TOML on the host side, which
has a TOML parser on every Python) turned into turns, captures, expectations and assertions."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from typing import Any

from sandboxverify.runtime._results import excerpt
from sandboxverify.runtime.harness._actions import Call, Parallel, Say, Turn
from sandboxverify.runtime.harness._compare import Normalize, compare_result, normalizer
from sandboxverify.runtime.harness._errors import HarnessError
from sandboxverify.runtime.harness._events import ToolResultRecord
from sandboxverify.runtime.harness._live import offered_tools
from sandboxverify.runtime.harness._plugin_files import absolute_file_spec
from sandboxverify.runtime.harness._requests import check_fresh
from sandboxverify.runtime.harness._secrets import secret_values
from sandboxverify.runtime.harness._session import TestSession

_REFERENCE = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def session_from_spec(spec: Mapping[str, Any], **options: Any) -> TestSession:
    """The session a playbook runs in: its mocks, its plugins (those ``options`` name instead
    are relative to where the command runs; a playbook's plugin files to the playbook)."""
    options.setdefault("mock_tools", spec.get("mock_tools") or {})
    options.setdefault("mock_ui", spec.get("mock_ui") or {})
    options.setdefault("has_ui", spec.get("has_ui", True))
    if not options.get("host"):  # a recording names the host its plugins were loaded with
        options["host"] = spec.get("host")
    return TestSession(options.pop("plugins", None) or spec_plugins(spec), **options)


def spec_plugins(spec: Mapping[str, Any]) -> list[str] | None:
    """The plugins a playbook names, its plugin files relative to the playbook."""
    if not spec.get("plugins"):
        return None
    base = str(spec.get("base") or ".")
    return [absolute_file_spec(plugin, base) for plugin in spec["plugins"]]


def run_spec(spec: Mapping[str, Any], session: TestSession) -> None:
    """Play the spec's turns, then check what ``run`` and ``check --smoke`` check: some tool was
    called (``nothing_called``) and some plugin code ran (``no_plugin_code``), the ``[expect]``
    process assertions hold (``approved`` included), and every list mock and UI answer was used
    (``mocks_unused``). A
    tool name ``[expect]`` gives that the session does not know fails before anything runs."""
    __tracebackhide__ = True  # pytest shows the test, not the harness
    expect = spec.get("expect") or {}
    source = spec.get("source", "playbook")
    for key in ("called", "not_called"):
        for index, name in enumerate(expect.get(key, [])):
            session.check_tool_name(name, f"{source}: expect.{key}[{index}]")
    for index, pair in enumerate(expect.get("called_before", [])):
        for name in pair:
            session.check_tool_name(name, f"{source}: expect.called_before[{index}]")
    try:
        check_fresh(spec, offered_tools(session))
    except HarnessError as exc:
        raise session.failed(exc) from None
    session.run(*turns_from_spec(spec))
    session.assert_plugin_code_ran()
    for name in expect.get("called", []):
        session.assert_called(name)
    for name in expect.get("not_called", []):
        session.assert_not_called(name)
    for first, second in expect.get("called_before", []):
        session.assert_called_before(first, second)
    for label in expect.get("approved", []):
        session.assert_approved(label)
    if session.auto_assert:
        session.assert_mocks_used()


def turns_from_spec(spec: Mapping[str, Any]) -> list[Turn]:
    captured: dict[str, str] = {}
    compare = results_compared(spec)
    turns = []
    for turn in spec["turns"]:
        actions: list[Call | Parallel | Say] = []
        for action in turn["actions"]:
            if action["kind"] == "say":
                actions.append(Say(action["text"], where=action["where"]))
            elif action["kind"] == "call":
                actions.append(_call(action, captured, compare))
            else:
                actions.append(
                    Parallel(
                        tuple(_call(c, captured, compare) for c in action["calls"]),
                        text=action.get("text"),
                        where=action["where"],
                    )
                )
        turns.append(Turn(turn["prompt"], tuple(actions), where=turn.get("where")))
    return turns


def results_compared(spec: Mapping[str, Any]) -> Normalize | None:
    """How result texts are normalised before they are compared with the recorded ones; None
    when nothing is compared: no call records a result, or ``compare_results = false``."""
    setting = spec.get("compare_results")
    if setting is False:
        return None
    recorded = [
        call
        for turn in spec["turns"]
        for action in turn["actions"]
        for call in (action.get("calls") or [action])
        if call.get("result") is not None
    ]
    if not recorded:
        if setting is not True:
            return None
        raise HarnessError(
            "playbook_invalid",
            f"{spec.get('source', 'the playbook')}: compare_results is on, but no call records "
            'a result to compare with (result = "..."); record the session with '
            "'sandboxverify record' or add result to the calls",
        )
    # a recording holds no secret: a live result's secrets are masked the same way
    return normalizer(spec.get("normalize") or [], secret_values(os.environ))


def _call(action: Mapping[str, Any], captured: dict[str, str], compare: Normalize | None) -> Call:
    where = action["where"]
    params = action.get("params") or {}

    def resolve() -> dict[str, Any]:  # late: captures of earlier actions exist by then
        resolved: dict[str, Any] = _substitute(params, captured, f"{where}.params")
        return resolved

    step = Call(
        tool=action["tool"],
        params=resolve,
        expect_error=action.get("expect_error", False),
        text=action.get("text"),
        where=where,
        sample=tuple(action.get("sample") or ()),
        validate=action.get("validate", True),
    )
    checks: list[Any] = []
    expect = action.get("expect")
    if expect is not None:
        checks.append(functools.partial(_expect, pattern=expect, where=where))
    recorded = action.get("result")
    if compare is not None and recorded is not None and action.get("compare_result", True):
        checks.append(
            functools.partial(compare_result, recorded=recorded, normalize=compare, where=where)
        )
    for name, pattern in (action.get("capture") or {}).items():
        checks.append(
            functools.partial(_capture, name=name, pattern=pattern, captured=captured, where=where)
        )
    for check in checks:
        check.harness_check = True  # a regex over the text: runs inline, nothing to bound
        step.then(check)
    return step


def _expect(record: ToolResultRecord, *, pattern: str, where: str) -> None:
    __tracebackhide__ = True  # pytest shows the test, not the harness
    if re.search(pattern, record.text) is None:
        raise HarnessError(
            "expect_mismatch",
            f"{_at(record, where)}: the result of {record.tool_name!r} does not match expect "
            f"{pattern!r}: "
            f"{excerpt(record.text, 300)!r}",
            turn=record.turn,
            action=record.action,
        )


def _capture(
    record: ToolResultRecord, *, name: str, pattern: str, captured: dict[str, str], where: str
) -> None:
    __tracebackhide__ = True  # pytest shows the test, not the harness
    match = re.search(pattern, record.text)
    if match is None:
        raise HarnessError(
            "capture_failed",
            f"{_at(record, where + '.capture.' + name)}: {pattern!r} found nothing in the "
            f"result of {record.tool_name!r}: {excerpt(record.text, 300)!r}",
            turn=record.turn,
            action=record.action,
        )
    captured[name] = match.group(1) if match.groups() else match.group(0)


def _at(record: ToolResultRecord, where: str) -> str:
    return f"turn {record.turn}, action {record.action} ({record.tool_call_id}) [{where}]"


def _substitute(value: Any, captured: Mapping[str, str], where: str) -> Any:
    if isinstance(value, str):

        def replace(match: re.Match[str]) -> str:
            if match.group(0) == "$${":
                return "${"
            name = match.group(1)
            if name not in captured:
                raise HarnessError(
                    "playbook_invalid",
                    f"{where}: ${{{name}}} was never captured before this action",
                )
            return captured[name]

        return _REFERENCE.sub(replace, value)
    if isinstance(value, Mapping):
        return {key: _substitute(item, captured, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, list):
        return [_substitute(item, captured, f"{where}[{i}]") for i, item in enumerate(value)]
    return value
