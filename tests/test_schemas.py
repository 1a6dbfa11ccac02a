"""The JSON Schemas the package ships (report v1, ``[tool.sandboxverify]``, TOML playbooks): valid
draft 2020-12 schemas, in the wheel, and true to what the code writes and accepts.

conftest.py holds the rest: every report the suite makes, every configuration and playbook it
loads, is checked against them."""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any, get_args

import jsonschema
import pytest

from sandboxverify._errors import ConfigError
from sandboxverify.options import _pyproject as _config
from sandboxverify.options._kinds import Choice
from sandboxverify.options._schema import config_schema
from sandboxverify.report._excused import EXCUSE_REASONS
from sandboxverify.report._model import (
    REPORT_SCHEMA,
    ErrorCode,
    Failure,
    FailureCode,
    Report,
    ReportError,
    Run,
    Stage,
)
from sandboxverify.stages.playbook import load_playbook, parse_playbook
from tests.helpers import FIXTURES, ROOT, SCHEMAS, schema, schema_errors, uv_wheel

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older hosts
    import tomli as tomllib

NAMES = ("report-v1", "survey-v1", "config", "playbook")
PLAYBOOKS = sorted(
    [*(FIXTURES / "playbooks").glob("*.toml"), *(ROOT / "tests/stages/playbooks").glob("*.toml")]
)


@pytest.mark.parametrize("name", NAMES)
def test_each_schema_is_a_valid_draft_2020_12_schema_named_by_its_url(name: str) -> None:
    document = schema(name)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(document)
    assert document["$id"] == REPORT_SCHEMA.replace("report-v1", name)


def test_the_package_ships_exactly_these_schemas() -> None:
    assert sorted(path.name for path in SCHEMAS.iterdir()) == sorted(
        f"{name}.schema.json" for name in NAMES
    )


@pytest.mark.slow
@pytest.mark.usefixtures("needs_uv")
def test_the_schemas_are_in_the_wheel(tmp_path: Path) -> None:
    wheel = uv_wheel(ROOT, tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        shipped = json.loads(archive.read("sandboxverify/schemas/report-v1.schema.json"))
    assert {f"sandboxverify/schemas/{name}.schema.json" for name in NAMES} <= names
    assert shipped == schema("report-v1")


def _report(**fields: Any) -> Report:
    values: dict[str, Any] = {
        "target": ".",
        "artifacts": (),
        "runs": (),
        "failures": (),
        "host": "auto",
        "groups": (),
        "installer": "uv",
        "seconds": 0.5,
    }
    return Report(**{**values, **fields})


def test_a_failed_build_has_every_field_with_its_documented_type() -> None:
    """No ``null`` where the README documents a list or an object: a stage that did not run
    leaves its field empty."""
    failed = Run(
        python="3.12.1",
        interpreter="/usr/bin/python3.12",
        ok=False,
        stages=(Stage("build", "failed", 0.4), Stage("venv", "skipped", 0.0)),
    )
    report = _report(
        runs=(failed,), failures=(Failure("build_failed", "building the sdist failed"),)
    )
    document = report.to_json()  # validated (closed) by conftest.py

    [run] = document["runs"]
    assert run["scripts"] == []
    assert run["imports"]["modules"] == 0 and run["imports"]["imported"] == []
    assert document["$schema"] == REPORT_SCHEMA
    assert document["error"] is None


def test_an_error_report_is_a_failed_report_with_the_error() -> None:
    report = _report(error=ReportError("usage_error", "target not found: nope", "check the path"))
    document = report.to_json()

    assert document["ok"] is False
    assert document["error"] == {
        "code": "usage_error",
        "message": "target not found: nope",
        "hint": "check the path",
    }
    wrong = {**document, "error": {**document["error"], "code": "oops"}}
    assert schema_errors("report-v1", wrong)


def test_the_schema_refuses_what_the_report_never_holds() -> None:
    document = _report().to_json()
    assert schema_errors("report-v1", {**document, "runs": None})
    assert schema_errors("report-v1", {**document, "version": 2})
    missing = dict(document)
    del missing["failures"]
    assert schema_errors("report-v1", missing)
    # later versions may add fields: the shipped schema lets them through, the tests do not
    assert schema_errors("report-v1", {**document, "new_field": 1}) == []
    assert schema_errors("report-v1", {**document, "new_field": 1}, closed=True)


def test_every_code_is_in_the_schema() -> None:
    codes = schema("report-v1")["$defs"]["failure"]["properties"]["code"]["enum"]
    assert set(codes) == set(get_args(FailureCode))
    errors = schema("report-v1")["$defs"]["error"]["properties"]["code"]["enum"]
    assert set(errors) == set(get_args(ErrorCode))
    excused = schema("report-v1")["$defs"]["imports"]["properties"]["excused"]["items"]
    assert excused["properties"]["reason"]["enum"] == list(EXCUSE_REASONS)


@pytest.mark.parametrize("path", PLAYBOOKS, ids=lambda path: path.name)
def test_every_shipped_playbook_matches_the_playbook_schema(path: Path) -> None:
    load_playbook(path)  # the loader accepts it (conftest.py: and so does the schema)
    assert schema_errors("playbook", tomllib.loads(path.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize(
    "text",
    [
        "",  # no turns
        '[[turns]]\nprompt = "p"\nactions = []\n',
        '[[turns]]\nprompt = "p"\nactions = [{ call = "a", say = "b" }]\n',
        '[[turns]]\nprompt = "p"\nactions = [{ sya = "b" }]\n',
        '[[turns]]\nprompt = " "\nactions = [{ say = "b" }]\n',
        '[mock_ui]\nconfirm = "yes"\n[[turns]]\nprompt = "p"\nactions = [{ say = "b" }]\n',
        '[mock_tools]\nbash = []\n[[turns]]\nprompt = "p"\nactions = [{ say = "b" }]\n',
        '[expect]\ncalled_before = [["a"]]\n[[turns]]\nprompt = "p"\nactions = [{ say = "b" }]\n',
        '[[turns]]\nprompt = "p"\nactions = [{ call = "a", expect = "" }]\n',
        '[[turns]]\nprompt = "p"\nactions = [{ call = "a", validate = "no" }]\n',
    ],
)
def test_the_playbook_schema_refuses_what_the_loader_refuses(text: str) -> None:
    with pytest.raises(ConfigError):
        load_text(text)
    assert schema_errors("playbook", tomllib.loads(text))


def load_text(text: str) -> dict[str, Any]:
    return parse_playbook(text, "smoke.toml")


def test_the_config_schema_lists_every_key_in_both_spellings() -> None:
    keys = set(_PROJECT_KEYS)
    spellings = keys | {key.replace("-", "_") for key in keys}
    document = schema("config")
    assert set(document["properties"]) == spellings
    assert document["additionalProperties"] is False


def test_the_shipped_config_schema_is_the_one_the_options_table_makes() -> None:
    assert schema("config") == config_schema(), (
        "regenerate it: python -m sandboxverify.options._schema"
    )


#: for each kind of value: values the loader accepts, values it refuses
_SAMPLES: dict[str, tuple[list[Any], list[Any]]] = {
    "Kind": (["x"], [1, ["x"], True, " "]),
    "Kind+": (["a", ["a", "b"], []], [1, [1], {"a": 1}, [" "]]),
    "timeout": ([1, 600], [0, 601, 86401, True]),
    # the project's file may not name an interpreter by path
    "python": (["3.12", ["3.10", "min"]], [1, [""], "./python", ["/usr/bin/python3"]]),
    "Names+": (["a", "a, b", ["a,b", "c"]], ["a,,b", ["a", ","], [""], 1]),
    "Location+": (["dir", ["a", "b"]], [1, [True], [""]]),
    "GroupName+": (["a", "a:callable", ["a", "b.c"]], ["a:other", ":callable", [""], 1]),
    "Assignment+": (["app=app.specs", ["a=b"]], ["app", "=m", "a=b c", [1]]),
    "Requirement+": (
        ["pytest", ["llm>=0.26", "a[b]"]],
        ["-e .", ["x>>1"], [""], 1, "x @ file:///tmp/x-1.tar.gz"],
    ),
    "Flag": ([True, False], ["yes", 1]),
    "Toggle": ([True, False], ["yes", 1]),
    "Whole": ([0, 3], [-1, 1.5, True, "3"]),
    "Count": ([0, 3], [-1, 1.5, True, "3"]),
    "Seconds": ([1, 0.5], [0, -1, True, "1", 86401]),
    "FilePath": (["out.xml"], ["", " ", 1]),
    "ReportPath": ([True, "-", "r.json"], [False, "", " ", 1]),
    "ReportFile": (["junit.xml"], ["", " ", 1, True]),
}


#: what a project's file may set: every option of check but those only the caller may set
_PROJECT_KEYS = sorted(key for key, option in _config.config_options().items() if option.project)


@pytest.mark.parametrize("key", _PROJECT_KEYS)
def test_the_loader_and_the_config_schema_agree_on_every_key(key: str, tmp_path: Path) -> None:
    option = _config.config_options()[key]
    if isinstance(option.kind, Choice):
        good, bad = [option.kind.choices[0]], ["nope", 1]
        if key == "isolation":
            bad.append("process")  # the project's file may not drop the OS sandbox
    else:
        kind = type(option.kind).__name__ + ("+" if option.multiple else "")
        good, bad = _SAMPLES.get(key) or _SAMPLES[kind]
    pyproject = tmp_path / "pyproject.toml"
    for value, accepted in [*((v, True) for v in good), *((v, False) for v in bad)]:
        pyproject.write_text(
            "[tool.sandboxverify]\n" + f"{key.replace('-', '_')} = {_toml(value)}\n",
            encoding="utf-8",
        )
        if accepted:
            _config.load_config(pyproject)  # conftest.py: the schema accepts it too
        else:
            with pytest.raises(ConfigError):  # conftest.py: the schema refuses it too
                _config.load_config(pyproject)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def test_the_readme_configuration_example_matches_the_config_schema() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(\[tool\.sandboxverify\].*?)```", text, re.S)
    assert blocks
    for block in blocks:
        table = tomllib.loads(block)["tool"]["sandboxverify"]
        assert schema_errors("config", table) == []


def test_the_readme_documents_every_report_field() -> None:
    """The JSON report section names every field the schema lists."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^### The JSON report\n(.*?)(?=^### )", text, re.M | re.S)
    assert match
    section = match.group(1)
    document = schema("report-v1")
    named = set(document["properties"])
    for name in (
        *("run", "plugin", "tool", "artifact", "stage", "failure", "error", "smoke"),
        "merged_source",
    ):
        named |= set(document["$defs"][name]["properties"])
    missing = sorted(
        field for field in named if f"`{field}`" not in section and f"`{field}[]`" not in section
    )
    assert missing == []


@pytest.mark.parametrize(
    "key", sorted(key for key, option in _config.config_options().items() if not option.project)
)
def test_what_only_the_caller_may_set_is_a_configuration_error_in_the_project(
    key: str, tmp_path: Path
) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f"[tool.sandboxverify]\n{key} = true\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=key):
        _config.load_config(pyproject)


def test_the_readme_names_every_key_a_project_may_not_set() -> None:
    """The README's Configuration says which keys come only from the caller: the options table
    decides it (``project=False``), and the README may not drift from it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    said = text.split("**The checked project is not trusted.**", 1)[1].split("\n\n", 1)[0]
    refused = [key for key, option in _config.config_options().items() if option.project is False]
    assert refused
    assert [key for key in refused if f"`{key}`" not in said] == []
