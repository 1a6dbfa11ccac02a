"""Turning ``--python`` specs (``3.12``, ``3.12.1``, ``python3.11``, a path) into interpreters."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from sandboxverify._errors import UsageError
from sandboxverify._frozen import frozen
from sandboxverify.sandbox._subprocess import query

#: The in-sandbox runtime needs this much Python.
MIN_SANDBOX_PYTHON = (3, 9)

_VERSION_SPEC = re.compile(r"^(?:python|py|cpython)?(\d+)(?:\.(\d+))?(?:\.(\d+))?$", re.I)
_QUERY = (
    "import json, platform, sys; print(json.dumps({'version': platform.python_version(), "
    "'info': list(sys.version_info[:3]), 'implementation': sys.implementation.name, "
    "'executable': sys.executable, 'prefixes': [sys.base_prefix, sys.base_exec_prefix]}))"
)


#: ``--python`` values chosen by the release's Requires-Python instead of naming an interpreter
SELECTORS = ("min", "all")


@frozen
class Interpreter:
    """A Python interpreter a sandbox can be created from."""

    spec: str
    path: Path
    version: str
    version_info: tuple[int, int, int]
    implementation: str
    #: ``sys.base_prefix`` and ``sys.base_exec_prefix``: what a confined process of this
    #: interpreter (or of a venv made from it) must see; empty when not asked
    prefixes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return (
            self.version
            if self.implementation == "cpython"
            else f"{self.implementation}-{self.version}"
        )


def resolve_all(specs: Sequence[str]) -> list[Interpreter]:
    """Resolve every spec (default: the interpreter sandboxverify runs on); duplicates collapse."""
    wanted = list(dict.fromkeys(specs)) or [sys.executable]
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
    found = _query(os.path.abspath(path))
    return None if found is None else replace(found, spec=spec)


_queried: dict[str, Future[Interpreter | None]] = {}
_queried_lock = threading.Lock()


def _query(path: str) -> Interpreter | None:
    """Ask an interpreter what it is, once per path and process: ``resolve``, ``resolve_all``
    and ``available`` meet the same interpreters (a pyenv shim costs a shell script each time).
    Threads asking for the same path wait for the first one's answer."""
    with _queried_lock:
        pending = _queried.get(path)
        if pending is None:
            pending = _queried[path] = Future()
            asking = True
        else:
            asking = False
    if asking:
        try:
            pending.set_result(_ask(path))
        except BaseException as exc:
            with _queried_lock:
                del _queried[path]  # not an answer: the next caller asks again
            pending.set_exception(exc)
            raise
    return pending.result()


def _ask(path: str) -> Interpreter | None:
    if path == os.path.abspath(sys.executable):  # this one: known without starting it
        return _described(path, _own_description())
    # -S: no site import; this only asks what the interpreter is, twice as fast
    output = query([path, "-I", "-S", "-c", _QUERY], timeout=30)
    if output is None:
        return None
    try:
        data = json.loads(output.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return _described(path, data)


def _own_description() -> dict[str, Any]:
    """What ``_QUERY`` prints, of the interpreter running sandboxverify."""
    return {
        "version": platform.python_version(),
        "info": list(sys.version_info[:3]),
        "implementation": sys.implementation.name,
        "executable": sys.executable,
        "prefixes": [sys.base_prefix, sys.base_exec_prefix],
    }


def _described(path: str, data: Any) -> Interpreter | None:
    if not isinstance(data, dict):
        return None
    try:
        info = tuple(int(part) for part in data["info"])
        version, implementation = str(data["version"]), str(data["implementation"])
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    # What the interpreter calls itself: a pyenv shim reports the real executable. Outside a venv
    # symlinks are resolved, so python, python3 and python3.12 of one install are one
    # interpreter; a venv's python is kept as it is (resolving it would leave the venv).
    reported = Path(str(data.get("executable") or ""))
    if not (reported.is_absolute() and reported.exists()):
        reported = Path(path)
    return Interpreter(
        spec=path,
        path=reported if _in_venv(reported) else reported.resolve(),
        version=version,
        version_info=(info[0], info[1], info[2]),
        implementation=implementation,
        prefixes=tuple(str(prefix) for prefix in data.get("prefixes") or ()),
    )


def _in_venv(executable: Path) -> bool:
    """How Python itself tells (site.py, which -S skips): a pyvenv.cfg next to or above it."""
    return any(
        (directory / "pyvenv.cfg").is_file()
        for directory in (executable.parent, executable.parent.parent)
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
    for home in sorted((_pyenv_root() / "versions").glob(f"{version}*"), reverse=True):
        yield home / "bin" / "python"
    for home in sorted(_uv_root().glob(f"cpython-{version}*"), reverse=True):
        yield home / "bin" / "python3"


def _pyenv_root() -> Path:
    return Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))


def _uv_root() -> Path:
    return Path(os.environ.get("UV_PYTHON_INSTALL_DIR", Path.home() / ".local/share/uv/python"))


def _looks_like_path(spec: str) -> bool:
    return os.sep in spec or (os.altsep is not None and os.altsep in spec) or spec.startswith(".")


def select_interpreters(selectors: Sequence[str], requires_python: str | None) -> list[Interpreter]:
    """``min``: the lowest Python here that ``requires_python`` allows (the newest patch of that
    minor version); ``all``: every minor version it allows, the newest patch of each. Only
    interpreters a sandbox can use (``MIN_SANDBOX_PYTHON``) count."""
    try:
        allowed = SpecifierSet(requires_python or "")
    except InvalidSpecifier:
        raise UsageError(
            f"--python {'/'.join(selectors)}: the release's Requires-Python {requires_python!r} "
            "is not a valid version specifier",
            hint="fix requires-python in pyproject.toml, or name interpreters: --python 3.12",
        ) from None
    found = available()
    usable = _newest_per_minor(
        [
            interpreter
            for interpreter in found
            if interpreter.version_info[:2] >= MIN_SANDBOX_PYTHON
            # as installers decide: the full X.Y.Z, pre-releases of Python included
            and allowed.contains(".".join(map(str, interpreter.version_info)), prereleases=True)
        ]
    )
    if not usable:
        floor = ".".join(map(str, MIN_SANDBOX_PYTHON))
        newest = _newest_per_minor(found)
        fit = [i.version for i in newest if i.version_info[:2] >= MIN_SANDBOX_PYTHON]
        old = [i.version for i in newest if i.version_info[:2] < MIN_SANDBOX_PYTHON]
        listed = ", ".join(fit) or "none"
        if old:
            listed += f"; older than {floor}, which sandboxes need: {', '.join(old)}"
        raise UsageError(
            f"--python {'/'.join(selectors)}: no Python interpreter here satisfies the release's "
            f"Requires-Python {requires_python or '(any)'!r} (found: {listed})",
            hint="install a Python it allows (e.g. uv python install, pyenv install) so it is "
            "on PATH, in pyenv or among uv's Pythons; or pass an interpreter path with "
            "--python; or correct requires-python in pyproject.toml if it is wrong",
        )
    lowest = _lowest_allowed_minor(allowed)
    if "min" in selectors and lowest is not None and usable[0].version_info[:2] > lowest:
        # running on a newer Python would pass the very code --python min is there to catch
        wanted = ".".join(map(str, lowest))
        raise UsageError(
            f"--python min: the release's Requires-Python {requires_python or '(any)'!r} allows "
            f"Python {wanted}, but the lowest allowed Python here is {usable[0].version}",
            hint=f"install Python {wanted} (e.g. uv python install {wanted}, pyenv install "
            f"{wanted}) so it is on PATH, in pyenv or among uv's Pythons, or pass --python "
            f"with a {wanted} interpreter's path",
        )
    return usable if "all" in selectors else usable[:1]


def _lowest_allowed_minor(allowed: SpecifierSet) -> tuple[int, int] | None:
    """The lowest Python 3 minor version, from the sandbox's floor up, of which some release
    satisfies ``allowed``."""
    for minor in range(MIN_SANDBOX_PYTHON[1], 40):
        if any(allowed.contains(f"3.{minor}.{patch}") for patch in range(40)):
            return (3, minor)
    return None


def _newest_per_minor(interpreters: Sequence[Interpreter]) -> list[Interpreter]:
    """One interpreter per minor version (the newest patch, CPython first), oldest first."""
    best: dict[tuple[int, int], Interpreter] = {}
    for interpreter in interpreters:
        minor = (interpreter.version_info[0], interpreter.version_info[1])
        current = best.get(minor)
        if current is None or _rank(interpreter) > _rank(current):
            best[minor] = interpreter
    return [best[minor] for minor in sorted(best)]


def _rank(interpreter: Interpreter) -> tuple[tuple[int, int, int], bool, bool]:
    # on a tie, the interpreter sandboxverify runs on, as when no --python is given
    running = interpreter.path == Path(sys.executable)
    return interpreter.version_info, interpreter.implementation == "cpython", running


@cache
def available() -> tuple[Interpreter, ...]:
    """Every working Python 3 interpreter here (PATH ``python3.X``, pyenv, uv-managed), each
    asked once and all at the same time; computed once per process."""
    paths = list(dict.fromkeys(str(path) for path in _all_candidates()))
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(paths)))) as pool:
        answers = list(pool.map(_query, paths))
    unique: dict[Path, Interpreter] = {}
    for interpreter in answers:
        if interpreter is not None:
            unique.setdefault(interpreter.path, interpreter)
    return tuple(sorted(unique.values(), key=lambda i: (i.version_info, str(i.path))))


def _all_candidates() -> Iterator[Path]:
    """``_candidates`` for every minor version of Python 3 that has an interpreter here. pyenv's
    shims are left out: each runs one of pyenv's versions, which are candidates themselves, and
    costs a shell script per call."""
    shims = _pyenv_root() / "shims"
    for wanted in [(3,), *((3, minor) for minor in sorted(_minor_versions_here()))]:
        yield from (path for path in _candidates(wanted) if path.parent != shims)


_MINOR_NAME = re.compile(r"^(?:python|cpython-)?3\.(\d+)(?:$|[.\-+a-z])")


def _minor_versions_here() -> set[int]:
    """Python 3 minor versions named by PATH's ``python3.X``, pyenv and uv's install dirs."""
    names: list[str] = []
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        try:
            names.extend(entry.name for entry in os.scandir(directory or "."))
        except OSError:
            continue
    for root in (_pyenv_root() / "versions", _uv_root()):
        try:
            names.extend(entry.name for entry in os.scandir(root))
        except OSError:
            continue
    minors = {int(match.group(1)) for match in map(_MINOR_NAME.match, names) if match}
    minors.add(sys.version_info[1])
    return minors


def floor_note(requires_python: str | None, chosen: Sequence[Interpreter]) -> str | None:
    """What ``--python min`` could not verify: the minor versions Requires-Python allows below
    the floor sandboxes need (``>=3.7`` runs on 3.9 and skips 3.7 and 3.8)."""
    try:
        allowed = SpecifierSet(requires_python or "")
    except InvalidSpecifier:
        return None
    floor = MIN_SANDBOX_PYTHON[1]
    below = [(2, minor) for minor in range(8)] + [(3, minor) for minor in range(floor)]
    skipped = [
        f"{major}.{minor}"
        for major, minor in below
        if any(allowed.contains(f"{major}.{minor}.{patch}") for patch in range(40))
    ]
    if not skipped or not chosen:
        return None
    return (
        f"--python min: Requires-Python {requires_python or '(any)'!r} allows Python "
        f"{skipped[0]}, but sandboxes need Python {MIN_SANDBOX_PYTHON[0]}.{floor} or newer: "
        f"ran on {chosen[0].version}; not verified on {', '.join(skipped)}"
    )
