"""``[tool.sandboxverify]`` in pyproject.toml: every command-line option, same names (- or _).

The command line wins over the file. Unknown keys and wrongly typed values are configuration errors
(exit 2) that name the file, the key and what was expected.
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from sandboxverify._errors import ConfigError
from sandboxverify.options._check_options import (
    HOSTS,
    INSTALLERS,
    ISOLATIONS,
    MAX_TIMEOUT,
    timeout_problem,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older hosts
    import tomli as tomllib

_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)


@dataclass(frozen=True)
class _Key:
    kind: str  # "str", "list", "names", "bool", "int", "float", "choice", "path", "paths", "json"
    choices: tuple[str, ...] = ()


def _keys() -> dict[str, _Key]:
    return {
        "host": _Key("choice", HOSTS),
        "group": _Key("list"),
        "hookspecs": _Key("list"),
        "expect-tools": _Key("names"),
        "exact": _Key("bool"),
        "expect-plugins": _Key("int"),
        "python": _Key("list"),
        "installer": _Key("choice", INSTALLERS),
        "isolation": _Key("choice", ISOLATIONS),
        "index-url": _Key("str"),
        "find-links": _Key("paths"),
        "timeout": _Key("float"),
        "install-timeout": _Key("float"),
        "pass-env": _Key("list"),
        "smoke": _Key("path"),
        "server-command": _Key("str"),
        "import-all": _Key("bool"),
        "import-skip": _Key("list"),
        "import-allow-fail": _Key("list"),
        "plugin-allow-fail": _Key("list"),
        "expect-files": _Key("list"),
        "skip-script-help": _Key("list"),
        "with": _Key("list"),
        "json": _Key("json"),
        "junit-xml": _Key("path"),
        "github": _Key("bool"),
        "keep": _Key("bool"),
        "cache": _Key("bool"),
        "verbose": _Key("int"),
        "quiet": _Key("bool"),
    }


def find_pyproject(target_dir: Path | None) -> Path | None:
    """The project's pyproject.toml; for artifact targets, the one in the current directory."""
    candidate = (target_dir or Path.cwd()) / "pyproject.toml"
    return candidate if candidate.is_file() else None


def load(pyproject: Path) -> dict[str, Any]:
    """The validated ``[tool.sandboxverify]`` table, keys normalised to ``kebab-case``."""
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
    keys = _keys()
    result: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("_", "-")
        spec = keys.get(key)
        if spec is None:
            close = difflib.get_close_matches(key, list(keys), n=1)
            raise ConfigError(
                f"{pyproject}: unknown key {raw_key!r} in [tool.sandboxverify]",
                hint=f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(keys)}",
            )
        result[key] = _coerce(pyproject, raw_key, spec, value)
    return result


#: the keys that say where a check's results go
REPORT_KEYS = ("json", "junit-xml", "github")


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
    keys = _keys()
    result: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("_", "-")
        if key in REPORT_KEYS:
            try:
                result[key] = _coerce(pyproject, raw_key, keys[key], value)
            except ConfigError:
                continue
    return result


def _coerce(pyproject: Path, key: str, spec: _Key, value: Any) -> Any:
    base = pyproject.parent

    def wrong(expected: str) -> ConfigError:
        return ConfigError(
            f"{pyproject}: [tool.sandboxverify] {key} must be {expected}, got {value!r}"
        )

    def strings(item: Any) -> list[str]:
        items = [item] if isinstance(item, str) else item
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise wrong("a string or a list of strings")
        if not all(i.strip() for i in items):
            raise wrong("a string or a list of strings, none of them empty")
        return list(items)

    def names() -> list[str]:
        """Comma lists of names, as on the command line: ``"a,,b"`` is a mistake too."""
        items = strings(value)
        if any(not part.strip() for item in items for part in item.split(",")):
            raise wrong("names separated by commas, none of them empty")
        return items

    def seconds() -> float:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or timeout_problem(float(value)) is not None:
            raise wrong(f"a number of seconds, more than 0 and at most {MAX_TIMEOUT:g} (a day)")
        return float(value)

    coercers: Mapping[str, Callable[[], Any]] = {
        "str": lambda: (
            value
            if isinstance(value, str) and value.strip()
            else _raise(wrong("a non-empty string"))
        ),
        "list": lambda: tuple(strings(value)),
        "names": lambda: tuple(names()),
        "bool": lambda: value if isinstance(value, bool) else _raise(wrong("true or false")),
        "int": lambda: (
            value
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0
            else _raise(wrong("a whole number >= 0"))
        ),
        "float": seconds,
        "choice": lambda: (
            value if value in spec.choices else _raise(wrong("one of " + ", ".join(spec.choices)))
        ),
        "paths": lambda: tuple(_relative(base, item) for item in strings(value)),
        "path": lambda: (
            _relative(base, value)
            if isinstance(value, str) and value.strip()
            else _raise(wrong("a file path"))
        ),
        "json": lambda: (
            "-"
            if value is True or value == "-"
            else (
                _relative(base, value)
                if isinstance(value, str) and value.strip()
                else _raise(wrong('a file path, "-" or true'))
            )
        ),
    }
    return coercers[spec.kind]()


def _relative(base: Path, value: str) -> str:
    """Paths in the file are relative to the file; URLs stay as they are."""
    if _URL.match(value) or Path(value).is_absolute():
        return value
    return str(base / value)


def _raise(error: Exception) -> Any:
    raise error
