"""Standard-library modules that no longer exist, and modules their distribution dropped: a
module that imports one is not missing a dependency to declare, it is code for an older Python
(or an older setuptools).

Python 2's modules renamed or dropped in Python 3 (PEP 3108), and the modules Python 3 removed
since (PEP 594, "What's New" of each release): ``distutils``, ``imp``, ``asyncore``,
``asynchat`` and ``smtpd`` in 3.12; the "dead batteries" in 3.13.
"""

from __future__ import annotations

#: Python 2 modules with no module of that name in Python 3
_PYTHON_2 = frozenset(
    [
        "__builtin__",
        "anydbm",
        "BaseHTTPServer",
        "Bastion",
        "CGIHTTPServer",
        "ConfigParser",
        "Cookie",
        "cPickle",
        "cStringIO",
        "commands",
        "compiler",
        "copy_reg",
        "cookielib",
        "dbhash",
        "dircache",
        "DocXMLRPCServer",
        "dumbdbm",
        "dummy_thread",
        "exceptions",
        "gdbm",
        "hotshot",
        "htmlentitydefs",
        "HTMLParser",
        "httplib",
        "imputil",
        "md5",
        "mhlib",
        "mimetools",
        "MimeWriter",
        "mimify",
        "multifile",
        "new",
        "popen2",
        "posixfile",
        "Queue",
        "repr",
        "rexec",
        "rfc822",
        "robotparser",
        "sets",
        "sha",
        "SimpleHTTPServer",
        "SimpleXMLRPCServer",
        "SocketServer",
        "statvfs",
        "StringIO",
        "thread",
        "Tkinter",
        "tkMessageBox",
        "tkFileDialog",
        "ttk",
        "urllib2",
        "urlparse",
        "user",
        "UserDict",
        "UserList",
        "UserString",
        "whichdb",
        "xmlrpclib",
    ]
)
#: module -> the Python release that removed it
_REMOVED = {
    **dict.fromkeys(("distutils", "imp", "asyncore", "asynchat", "smtpd"), "3.12"),
    **dict.fromkeys(
        [
            "aifc",
            "audioop",
            "cgi",
            "cgitb",
            "chunk",
            "crypt",
            "imghdr",
            "lib2to3",
            "mailcap",
            "msilib",
            "nis",
            "nntplib",
            "ossaudiodev",
            "pipes",
            "sndhdr",
            "spwd",
            "sunau",
            "telnetlib",
            "uu",
            "xdrlib",
        ],
        "3.13",
    ),
}


#: modules a distribution shipped and then removed: module -> (distribution, the release)
_DROPPED = {"pkg_resources": ("setuptools", "82")}


def removed_from_stdlib(top: str, python: str) -> str | None:
    """Why ``top`` cannot be imported on Python ``python`` (``3.12.1``), if it is a standard
    library module this Python no longer has, or one its distribution has dropped (setuptools'
    ``pkg_resources``); ``None`` otherwise."""
    if top in _DROPPED:
        dist, release = _DROPPED[top]
        return (
            f"{top!r} was part of {dist}, which removed it in {release}: move to "
            "importlib.metadata and importlib.resources (a namespace package needs no "
            f"declare_namespace: ship no __init__.py), or declare {dist}<{release}"
        )
    if top in _PYTHON_2:
        return (
            f"{top!r} is Python 2's standard library, which Python 3 no longer has: the module "
            "is Python 2 code; port it to Python 3, or stop shipping it"
        )
    removed = _REMOVED.get(top)
    if removed is not None and _version(python) >= _version(removed):
        return (
            f"{top!r} was removed from the standard library in Python {removed}: port the "
            f"module, or declare requires-python below {removed} (a backport on PyPI may stand "
            "in for it: declare that)"
        )
    return None


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split(".")[:2]:
        if not part.isdigit():
            break
        parts.append(int(part))
    return tuple(parts)
