"""``[tool.sandboxverify]`` in pyproject.toml: ``check``'s options, same names (- or _).

The command line wins over the file. Unknown keys and wrongly typed values are configuration errors
(exit 2) that name the file, the key and what was expected; each value is checked by the kind of
its option, as the command line checks it.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from sandboxverify._errors import ConfigError
from sandboxverify._toml import tomllib
from sandboxverify.options._kinds import Wrong
from sandboxverify.options._option import Option
from sandboxverify.options._table import options_of

#: the keys that say where a check's results go
REPORT_KEYS = ("json", "junit-xml", "github")


def config_options() -> dict[str, Option]:
    """``[tool.sandboxverify]``'s keys: every option of ``check``."""
    return {option.config_key: option for option in options_of("check")}


def find_pyproject(target_dir: Path | None) -> Path | None:
    """The project's pyproject.toml; for artifact targets, the one in the current directory."""
    candidate = (target_dir or Path.cwd()) / "pyproject.toml"
    return candidate if candidate.is_file() else None


def load_config(pyproject: Path) -> dict[str, Any]:
    """The validated ``[tool.sandboxverify]`` table, by each option's keyword (``expect_tools``)."""
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{pyproject}: invalid TOML: {exc}",
            hint="fix the syntax; the build would fail on it too",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {pyproject}: {exc}") from None
    table = data.get("tool", {}).get("sandboxverify", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.sandboxverify] must be a table")
    keys = config_options()
    result: dict[str, Any] = {}
    for raw_key, value in table.items():
        option = keys.get(raw_key.replace("_", "-"))
        if option is None:
            close = difflib.get_close_matches(raw_key.replace("_", "-"), list(keys), n=1)
            raise ConfigError(
                f"{pyproject}: unknown key {raw_key!r} in [tool.sandboxverify]",
                hint=f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(keys)}",
            )
        if option.project is False:
            raise ConfigError(
                f"{pyproject}: [tool.sandboxverify] cannot set {raw_key!r}: it would widen what "
                "the package's own code reaches",
                hint=f"only the command line can ask for it ({option.flag})",
            )
        result[option.dest] = coerce(pyproject, raw_key, option, value)
    return result


def report_values(pyproject: Path) -> dict[str, Any]:
    """``json``, ``junit-xml`` and ``github`` of ``[tool.sandboxverify]``, read leniently: when
    the check stops on a usage or configuration error, its reports still go where the file says,
    whatever else is wrong with it."""
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    tool = data.get("tool")
    table = tool.get("sandboxverify") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return {}
    keys = config_options()
    result: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("_", "-")
        if key in REPORT_KEYS:
            try:
                result[keys[key].dest] = coerce(pyproject, raw_key, keys[key], value)
            except ConfigError:
                continue
    return result


def coerce(pyproject: Path, key: str, option: Option, value: Any) -> Any:
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
        raise ConfigError(
            f"{pyproject}: [tool.sandboxverify] {key} must be {expected}, got {value!r}"
        ) from None


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
