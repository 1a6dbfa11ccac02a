"""``[tool.sandboxverify]`` in pyproject.toml, and the caller's own configuration file: ``check``'s
options, same names (- or _).

The command line wins over both files, the project's file over the caller's. Unknown keys and
wrongly typed values are configuration errors (exit 2) that name the file, the key and what was
expected; each value is checked by the kind of its option, as the command line checks it. The
project's file is untrusted: what an option may not take from it (``_trust``) is refused there,
with a hint saying where it may come from, and a path it names must stay inside the project.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from sandboxverify._errors import ConfigError
from sandboxverify._toml import tomllib
from sandboxverify.options._kinds import FilePath, Wrong
from sandboxverify.options._option import Option
from sandboxverify.options._table import options_of
from sandboxverify.options._trust import inside_project, user_config_path

#: the keys that say where a check's results go
REPORT_KEYS = ("json", "junit-xml", "github")
#: the table of ``check``'s options in a pyproject.toml
_PROJECT_TABLE = "[tool.sandboxverify]"


def config_options() -> dict[str, Option]:
    """``[tool.sandboxverify]``'s keys: every option of ``check``."""
    return {option.config_key: option for option in options_of("check")}


def find_pyproject(target_dir: Path | None) -> Path | None:
    """The project's pyproject.toml; for artifact targets, the one in the current directory."""
    candidate = (target_dir or Path.cwd()) / "pyproject.toml"
    return candidate if candidate.is_file() else None


def configured(pyproject: Path | None) -> dict[str, Any]:
    """What the files say ``check`` should do, by each option's keyword: the caller's own
    configuration, and over it the checked project's ``[tool.sandboxverify]`` (``pyproject``, when
    there is one), which may only describe the package and make the check stricter."""
    return {**load_user_config(), **(load_config(pyproject) if pyproject else {})}


def load_config(pyproject: Path) -> dict[str, Any]:
    """The checked project's validated ``[tool.sandboxverify]``, by each option's keyword
    (``expect_tools``): only what the project may ask for."""
    table = _read_table(pyproject, project=True)
    return _values(pyproject, table, project=pyproject.parent)


def load_user_config(path: Path | None = None) -> dict[str, Any]:
    """The caller's own configuration (``_trust.user_config_path``), top-level keys as in
    ``[tool.sandboxverify]``; nothing when there is no such file. Trusted like the command
    line: it may hold what the project's file may not (``pass-env``, ``find-links``, report
    paths...)."""
    path = path or user_config_path()
    if not path.is_file():
        return {}
    return _values(path, _read_table(path, project=False), project=None)


def _read_table(path: Path, *, project: bool) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        hint = "fix the syntax; the build would fail on it too" if project else "fix the syntax"
        raise ConfigError(f"{path}: invalid TOML: {exc}", hint=hint) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    table = data.get("tool", {}).get("sandboxverify", {}) if project else data
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {_PROJECT_TABLE} must be a table")
    return table


def _values(path: Path, table: dict[str, Any], *, project: Path | None) -> dict[str, Any]:
    """``table``'s values by keyword; ``project``: the checked project's root, when the table is
    its own (untrusted)."""
    keys = config_options()
    where = _PROJECT_TABLE if project is not None else "key"
    result: dict[str, Any] = {}
    for raw_key, value in table.items():
        option = keys.get(raw_key.replace("_", "-"))
        if option is None:
            close = difflib.get_close_matches(raw_key.replace("_", "-"), list(keys), n=1)
            raise ConfigError(
                f"{path}: unknown key {raw_key!r}"
                + (f" in {_PROJECT_TABLE}" if project is not None else ""),
                hint=f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(keys)}",
            )
        result[option.dest] = coerce(path, raw_key, option, value, where)
        if project is not None:
            _refuse_widening(path, raw_key, option, result[option.dest], project)
    return result


def _refuse_widening(path: Path, key: str, option: Option, value: Any, project: Path) -> None:
    """The project's file may not widen what its code reaches or where sandboxverify writes."""
    values = value if isinstance(value, tuple) else (value,)
    reasons = []
    if callable(option.project):
        reasons += [reason for item in values if (reason := option.project(item))]
    if isinstance(option.kind, FilePath):
        reasons += [reason for item in values if (reason := inside_project(item, project))]
    if not option.project or reasons:
        what = f"{key} asks for {reasons[0]}, which" if reasons else f"cannot set {key!r}:"
        raise ConfigError(
            f"{path}: {_PROJECT_TABLE} {what} the checked project may not: its configuration "
            "may describe the package and make the check stricter, never widen what its code "
            "reaches or where sandboxverify writes",
            hint=f"give {option.flag} on the command line, or put {key} in your own "
            f"configuration ({user_config_path()}); the README's 'Configuration' says which keys "
            "a project may set",
        )


def report_values(pyproject: Path | None) -> dict[str, Any]:
    """Where a check's results go, read leniently from the caller's configuration (``json``,
    ``junit-xml``, ``github``) and the project's (``github``: the only one it may set): when the
    check stops on a usage or configuration error, its reports still go where the files say,
    whatever else is wrong with them."""
    result = _lenient(user_config_path(), project=False, keys=REPORT_KEYS)
    if pyproject is not None:
        result.update(_lenient(pyproject, project=True, keys=("github",)))
    return result


def _lenient(path: Path, *, project: bool, keys: tuple[str, ...]) -> dict[str, Any]:
    try:
        table = _read_table(path, project=project)
    except ConfigError:
        return {}
    options = config_options()
    result: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("_", "-")
        if key in keys:
            try:
                result[options[key].dest] = coerce(path, raw_key, options[key], value)
            except ConfigError:
                continue
    return result


def coerce(
    pyproject: Path, key: str, option: Option, value: Any, where: str = _PROJECT_TABLE
) -> Any:
    """``value`` of ``key`` as the command line would give it: a list of several for an option
    that takes several (a string alone is one), checked by the option's kind."""
    base = pyproject.parent
    try:
        if not option.multiple:
            return _one(option, value, base)
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list):
            raise Wrong("a string or a list of strings")
        return tuple(_one(option, item, base) for item in items)
    except Wrong as wrong:
        expected = str(wrong)
        if option.multiple and expected == option.kind.expected:
            expected = _several(expected)
        raise ConfigError(f"{pyproject}: {key} must be {expected}, got {value!r}") from None


def _one(option: Option, value: object, base: Path) -> Any:
    """One value, as the command line would give it, checked as the command line checks it."""
    given = option.kind.from_config(value, base)
    if option.kind.problem(option.flag, given) is not None:
        raise Wrong(option.kind.expected)
    return given


def _several(expected: str) -> str:
    """What a list option takes, when one of its items is wrong."""
    if expected == "a non-empty string":
        return "a string or a list of strings, none of them empty"
    return f"a string or a list of strings, each {expected}"
