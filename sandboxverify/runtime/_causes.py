"""What an import failure was missing, read from the exception and the ones it chains to.

The host side decides from this whether a module failed for a dependency an extra declares, a
name that exists only on another platform, or a test framework: it needs the names, not the
wording (``ImportError("Please install pygal or pytest-benchmark[histogram]")`` raised ``from``
``ModuleNotFoundError("No module named 'pygal'")`` is missing ``pygal``).
"""

from __future__ import annotations

import re
from typing import Any

#: ``from ctypes import WINFUNCTYPE``; ``ctypes.windll``
_CANNOT_IMPORT = re.compile(r"cannot import name '([^']+)' from '([^']+)'")
_NO_ATTRIBUTE = re.compile(r"module '([^']+)' has no attribute '([^']+)'")
#: what test frameworks raise to skip a whole module: ``unittest.SkipTest``, and pytest's
#: ``Skipped`` (``pytest.importorskip``, ``pytest.skip(allow_module_level=True)``), which says
#: its module is ``builtins`` but derives from ``_pytest.outcomes.OutcomeException``
_SKIPS = {("unittest.case", "SkipTest"), ("_pytest.outcomes", "OutcomeException")}
#: a platform test a module makes at import: ``assert sys.platform == "win32"``,
#: ``if os.name != "nt": raise ImportError(...)``
_PLATFORM_TEST = re.compile(
    r"""(?:sys\.platform|os\.name|platform\.system\(\))\s*"""
    r"""(?:==|!=|\.startswith\()\s*['"]([A-Za-z0-9_]+)['"]"""
)
#: a test of the Python version a module makes at import: ``if sys.version_info < (3, 12):``
_VERSION_TEST = re.compile(r"\bversion_info\b\s*(?:\[[^\]]*\]\s*)?(?:[<>]=?|==|!=)")
#: what those tests compare with, as the platforms are named on the host side
_PLATFORMS = {
    "win32": "windows",
    "cygwin": "windows",
    "nt": "windows",
    "windows": "windows",
    "darwin": "macos",
    "linux": "linux",
}


def cause_of(exc: BaseException) -> dict[str, Any]:
    """``missing``: the modules not found, most recent first (a module of a package that is
    installed is not: that package lacks a name); ``names``: the ``[module, name]`` pairs a
    module lacked; ``skip``: a test framework skipped the module; ``frames``: the way in to
    the failure, each frame's module and what its statement imports (``_import_frames``)."""
    from sandboxverify.runtime._import_frames import frames_of  # noqa: PLC0415 - failures only

    missing: list[str] = []
    names: list[list[str]] = []
    skip = False
    tested = _own_test(exc)
    for link in _chain(exc):
        if isinstance(link, ModuleNotFoundError) and isinstance(link.name, str) and link.name:
            package, _, rest = link.name.partition(".")
            if rest and _installed(package):  # ``tox.venv``: tox is there, and lacks it
                names.append([package, rest])
            else:
                missing.append(link.name)
        elif isinstance(link, ImportError):
            found = _CANNOT_IMPORT.search(str(link))
            if found:
                names.append([found.group(2), found.group(1)])
        elif isinstance(link, AttributeError):
            found = _NO_ATTRIBUTE.search(str(link))
            if found:
                names.append([found.group(1), found.group(2)])
        kinds = type(link).__mro__
        skip = skip or (
            any((k.__module__, k.__name__) in _SKIPS for k in kinds)
            and (type(link).__name__ in ("SkipTest", "Skipped"))
        )
    return {
        "missing": _unique(missing),
        "names": names,
        "skip": skip,
        "requires_platform": _required_platforms(*tested),
        "python_test": _python_test(tested[0]),
        "frames": frames_of(exc),
    }


def _own_test(exc: BaseException) -> tuple[str, str]:
    """The test the module's own code made at import and raised from, and how: ``"assert"``,
    ``"refuse"`` (``if <test>: raise``) or ``"else"`` (``if <test>: ... else: raise``, the
    test says what it runs on); ``("", "")`` when it raised otherwise."""
    import linecache  # noqa: PLC0415 - only a failure needs it

    frame = None
    tb = exc.__traceback__
    while tb is not None:  # the innermost module-level frame: the statement that raised
        if tb.tb_frame.f_code.co_name == "<module>":
            frame = tb
        tb = tb.tb_next
    if frame is None:
        return "", ""
    where, line = frame.tb_frame.f_code.co_filename, frame.tb_lineno
    statement = linecache.getline(where, line).strip()
    before = linecache.getline(where, line - 1).strip()
    if statement.startswith("assert "):
        return statement, "assert"
    if statement.startswith("raise ") and before.startswith("if "):
        return before, "refuse"  # ``if sys.platform != "win32":`` then the raise
    if statement.startswith("raise ") and before == "else:":
        # ``if sys.platform == "win32": ... else: raise`` (rich._win32_console)
        return _tested_before_else(where, line - 1), "else"
    return "", ""


def _required_platforms(tested: str, how: str) -> list[str]:
    """The platforms the module's own test at import named as those it needs, where it raised
    from it (``click._winconsole``: ``assert sys.platform == "win32"``); else none."""
    if (how == "refuse" and "!=" not in tested) or (how == "else" and "==" not in tested):
        return []
    found = [_PLATFORMS.get(name.lower()) for name in _PLATFORM_TEST.findall(tested)]
    return [] if not found or None in found else _unique([str(name) for name in found])


def _python_test(tested: str) -> str:
    """The module's own test of the Python version it raised from (``if sys.version_info <
    (3, 12):`` then a raise), as written; else ``""``."""
    return tested if _VERSION_TEST.search(tested) else ""


def _tested_before_else(where: str, else_line: int) -> str:
    """The ``if`` whose ``else:`` is at ``else_line``; else ``""``."""
    import linecache  # noqa: PLC0415 - only a failure needs it

    text = linecache.getline(where, else_line)
    indent = len(text) - len(text.lstrip())
    for number in range(else_line - 1, max(0, else_line - 40), -1):
        above = linecache.getline(where, number)
        if not above.strip() or len(above) - len(above.lstrip()) > indent:
            continue
        test = above.strip()
        return test if test.startswith("if ") else ""
    return ""


def _installed(package: str) -> bool:
    import importlib.util  # noqa: PLC0415 - only a failure needs it

    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception, then what it was raised from or while handling, to the first."""
    seen: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and all(link is not other for other in seen):
        seen.append(link)
        link = link.__cause__ or link.__context__
    return seen


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
