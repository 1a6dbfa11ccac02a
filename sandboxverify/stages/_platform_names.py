"""Names that exist on some platforms only: a module that fails here only for one of them is
written for another platform, not broken.

Each row is a module (``winreg``) or a module's attribute (``ctypes.WINFUNCTYPE``) and the
platforms it exists on. The standard library's rows follow the "Availability" notes of the
Python documentation (docs.python.org/3/library/<module>.html) and CPython's sources, where
``ctypes`` defines its Windows names under ``if _os.name == "nt"``; the test suite holds them to
the interpreter it runs on (each row for this platform imports here, each other one does not).
The others are the import names of distributions built for one platform only, as their
projects document them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence

from sandboxverify._frozen import frozen

WINDOWS = frozenset({"windows"})
MACOS = frozenset({"macos"})
#: every platform but Windows (``other``: a POSIX system we have no name for)
POSIX = frozenset({"linux", "macos", "android", "ios", "other"})
MOBILE = frozenset({"android", "ios"})


@frozen
class PlatformName:
    #: a module (``winreg``), or ``module.attribute`` (``ctypes.windll``)
    name: str
    #: where it exists
    platforms: frozenset[str]
    #: where that is documented
    source: str
    #: part of the standard library (the tests check those on the interpreter they run on)
    stdlib: bool = True


def _rows(
    names: str, platforms: frozenset[str], source: str, *, stdlib: bool = True
) -> list[PlatformName]:
    return [PlatformName(name, platforms, source, stdlib) for name in names.split()]


PLATFORM_NAMES: tuple[PlatformName, ...] = tuple(
    # standard library modules, per their "Availability: Windows" notes
    _rows("winreg msvcrt winsound _winapi _overlapped nt", WINDOWS, "stdlib, Windows only")
    # Python 2's name of winreg, still tried first or second by code that supports both
    + _rows("_winreg", WINDOWS, "Python 2's winreg (Windows only)", stdlib=False)
    + _rows(
        "ctypes.WINFUNCTYPE ctypes.windll ctypes.oledll ctypes.WinDLL ctypes.OleDLL "
        "ctypes.HRESULT ctypes.FormatError ctypes.GetLastError ctypes.get_last_error "
        "ctypes.set_last_error ctypes.WinError",
        WINDOWS,
        "stdlib ctypes: defined only when os.name == 'nt'",
    )
    + _rows("os.startfile os.add_dll_directory", WINDOWS, "stdlib os, Windows only")
    + _rows("signal.CTRL_C_EVENT signal.CTRL_BREAK_EVENT", WINDOWS, "stdlib signal, Windows")
    + _rows(
        "subprocess.STARTUPINFO subprocess.CREATE_NEW_CONSOLE subprocess.CREATE_NO_WINDOW",
        WINDOWS,
        "stdlib subprocess: Windows constants",
    )
    # pywin32 (PyPI: pywin32, Windows wheels only)
    + _rows(
        "win32api win32con win32com win32gui win32process win32file win32event "
        "win32clipboard win32service win32serviceutil win32pipe win32security win32crypt "
        "win32job win32print win32ui winerror pythoncom pywintypes _win32typing",
        WINDOWS,
        "pywin32, Windows only",
        stdlib=False,
    )
    # standard library modules, per their "Availability: Unix" (or "not Windows") notes
    + _rows(
        "fcntl termios pwd grp resource posix tty pty syslog _posixsubprocess readline",
        POSIX,
        "stdlib, Unix only",
    )
    + _rows(
        "os.getuid os.geteuid os.getgid os.fork os.setsid os.getpgid os.killpg os.uname",
        POSIX,
        "stdlib os, Unix only",
    )
    + _rows("signal.SIGKILL signal.SIGHUP signal.SIGALRM signal.alarm", POSIX, "stdlib signal")
    # macOS
    + _rows("_scproxy", MACOS, "stdlib, macOS only (urllib's proxy settings)")
    + _rows(
        "AppKit Foundation objc Quartz Cocoa CoreFoundation WebKit PyObjCTools ScriptingBridge",
        MACOS,
        "PyObjC, macOS only",
        stdlib=False,
    )
    # Android and iOS: what python-for-android, pyjnius and pyobjus provide there
    + _rows("android jnius pyobjus", MOBILE, "Kivy's mobile toolchains", stdlib=False)
)

_BY_NAME = {row.name: row for row in PLATFORM_NAMES}


def this_platform(platform: str = sys.platform) -> str:
    """``sys.platform`` as the table names platforms."""
    if platform == "win32":
        return "windows"
    if platform == "darwin":
        return "macos"
    if platform.startswith("linux"):
        return "linux"
    return platform if platform in ("android", "ios") else "other"


def elsewhere(
    missing: Iterable[str], names: Iterable[Sequence[str]], platform: str | None = None
) -> list[PlatformName]:
    """The rows that explain a failure: modules not found and ``[module, attribute]`` names
    missing, each one of another platform; empty unless every one of them is."""
    here = platform or this_platform()
    wanted = [module.split(".", 1)[0] for module in missing]
    wanted += [".".join(pair[:2]) for pair in names if len(pair) >= 2]
    rows = [_BY_NAME.get(name) for name in wanted]
    if not rows or any(row is None or here in row.platforms for row in rows):
        return []
    return [row for row in rows if row is not None]
