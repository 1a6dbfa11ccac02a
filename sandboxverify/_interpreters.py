"""Turning ``--python`` specs (``3.12``, ``3.12.1``, ``python3.11``, a path) into interpreters."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from sandboxverify._errors import UsageError
from sandboxverify._subprocess import query

#: The in-sandbox runtime needs this much Python.
MIN_SANDBOX_PYTHON = (3, 9)

_VERSION_SPEC = re.compile(r"^(?:python|py|cpython)?(\d+)(?:\.(\d+))?(?:\.(\d+))?$", re.I)
_QUERY = (
    "import json, platform, sys; print(json.dumps({'version': platform.python_version(), "
    "'info': list(sys.version_info[:3]), 'implementation': sys.implementation.name, "
    "'executable': sys.executable}))"
)


#: ``--python`` values chosen by the release's Requires-Python instead of naming an interpreter
SELECTORS = ("min", "all")


@dataclass(frozen=True)
class Interpreter:
    """A Python interpreter a sandbox can be created from."""

    spec: str
    path: Path
    version: str
    version_info: tuple[int, int, int]
    implementation: str

    @property
    def label(self) -> str:
        return (
            self.version
            if self.implementation == "cpython"
            else f"{self.implementation}-{self.version}"
        )


def resolve_all(specs: Sequence[str]) -> list[Interpreter]:
    """Resolve every spec (default: the interpreter sandboxverify runs on); duplicates collapse."""
    wanted = list(specs) or [sys.executable]
    with ThreadPoolExecutor(max_workers=min(8, len(wanted))) as pool:
        found = list(pool.map(resolve, wanted))
    unique: dict[Path, Interpreter] = {}
    for interpreter in found:
        unique.setdefault(interpreter.path, interpreter)
    return list(unique.values())


def resolve(spec: str) -> Interpreter:
    match = _VERSION_SPEC.match(spec.strip())
    if match is None or _looks_like_path(spec):
        return _from_path(spec)
    wanted = tuple(int(part) for part in match.groups() if part is not None)
    best: Interpreter | None = None
    for candidate in _candidates(wanted):
        interpreter = _inspect(spec, candidate)
        if interpreter is None or interpreter.version_info[: len(wanted)] != wanted:
            continue
        if best is None or interpreter.version_info > best.version_info:
            best = interpreter
    if best is None:
        raise UsageError(
            f"no Python interpreter matches --python {spec!r}",
            hint="looked for python3.X on PATH and in pyenv and uv's managed Pythons; "
            "pass an interpreter path instead, e.g. --python /usr/bin/python3.12",
        )
    return _supported(best)


def _from_path(spec: str) -> Interpreter:
    path = Path(spec).expanduser()
    if not path.exists():
        located = shutil.which(spec)
        if located is None:
            raise UsageError(
                f"Python interpreter not found: {spec}",
                hint="pass a version like 3.12 or the path of an existing interpreter",
            )
        path = Path(located)
    if path.is_dir():
        for name in ("bin/python3", "bin/python", "python.exe", "Scripts/python.exe"):
            if (path / name).exists():
                path = path / name
                break
    interpreter = _inspect(spec, path)
    if interpreter is None:
        raise UsageError(
            f"{spec} is not a working Python interpreter",
            hint="pass a version like 3.12 or the path of a python executable",
        )
    return _supported(interpreter)


def _supported(interpreter: Interpreter) -> Interpreter:
    if interpreter.version_info[:2] < MIN_SANDBOX_PYTHON:
        raise UsageError(
            f"Python {interpreter.version} ({interpreter.path}) is too old: sandboxes need "
            f"Python {'.'.join(map(str, MIN_SANDBOX_PYTHON))} or newer",
            hint="drop it from --python",
        )
    return interpreter


def _inspect(spec: str, path: Path) -> Interpreter | None:
    output = query([str(path), "-I", "-c", _QUERY], timeout=30)
    if output is None:
        return None
    try:
        data = json.loads(output.strip().splitlines()[-1])
        info = tuple(int(part) for part in data["info"])
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    # What the interpreter calls itself: a pyenv shim reports the real executable, a venv's python
    # reports the venv path (a symlink we must not resolve away).
    reported = Path(str(data.get("executable") or ""))
    return Interpreter(
        spec=spec,
        path=reported
        if reported.is_absolute() and reported.exists()
        else Path(os.path.abspath(path)),
        version=str(data["version"]),
        version_info=(info[0], info[1], info[2]),
        implementation=str(data["implementation"]),
    )


def _candidates(wanted: tuple[int, ...]) -> Iterator[Path]:
    seen: set[Path] = set()
    for path in _candidate_paths(wanted):
        try:
            key = path.resolve()
        except OSError:
            continue
        if key not in seen and path.exists():
            seen.add(key)
            yield path


def _candidate_paths(wanted: tuple[int, ...]) -> Iterator[Path]:
    version = ".".join(map(str, wanted))
    if tuple(sys.version_info[: len(wanted)]) == wanted:
        yield Path(sys.executable)
    names = [f"python{'.'.join(map(str, wanted[:2]))}", f"python{wanted[0]}", "python"]
    for name in names:
        located = shutil.which(name)
        if located:
            yield Path(located)
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    for home in sorted((pyenv_root / "versions").glob(f"{version}*"), reverse=True):
        yield home / "bin" / "python"
    uv_root = Path(os.environ.get("UV_PYTHON_INSTALL_DIR", Path.home() / ".local/share/uv/python"))
    for home in sorted(uv_root.glob(f"cpython-{version}*"), reverse=True):
        yield home / "bin" / "python3"


def _looks_like_path(spec: str) -> bool:
    return os.sep in spec or (os.altsep is not None and os.altsep in spec) or spec.startswith(".")


def select_interpreters(selectors: Sequence[str], requires_python: str | None) -> list[Interpreter]:
    """``min``: the lowest interpreter here that ``requires_python`` allows; ``all``: every
    one it allows (the newest patch of each minor version). (Stub: being built.)"""
    raise NotImplementedError
