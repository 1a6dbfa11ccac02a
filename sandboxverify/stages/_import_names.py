"""The distributions an import name may come from, where the two names differ.

A module that fails for ``No module named 'gi'`` needs PyGObject, which an extra declares by
its distribution's name. Most distributions are named as what they install, or with one of a few
customary affixes (``pyyaml`` for ``yaml``, ``python-dateutil`` for ``dateutil``,
``psycopg2-binary`` for ``psycopg2``); the table holds the well-known others, as their projects
document them. A name matched here only chooses which extra a module is tried with: it imports
there, or it fails with that extra's name in the message.
"""

from __future__ import annotations

from packaging.utils import canonicalize_name

#: import name -> the distributions that install it, where no affix says so
_DIFFERENT = {
    "attr": ("attrs",),
    "bs4": ("beautifulsoup4",),
    "cairo": ("pycairo",),
    "crypto": ("pycryptodome", "pycrypto"),
    "cryptodome": ("pycryptodomex",),
    "cv2": (
        "opencv-python",
        "opencv-python-headless",
        "opencv-contrib-python",
        "opencv-contrib-python-headless",
    ),
    "dbus": ("dbus-python",),
    "dns": ("dnspython",),
    "faiss": ("faiss-cpu", "faiss-gpu"),
    "fitz": ("pymupdf",),
    "gi": ("pygobject",),
    "git": ("gitpython",),
    "grpc": ("grpcio",),
    "jose": ("python-jose",),
    "jwt": ("pyjwt",),
    "kafka": ("kafka-python",),
    "magic": ("python-magic",),
    "mysqldb": ("mysqlclient",),
    "nacl": ("pynacl",),
    "opengl": ("pyopengl",),
    "openssl": ("pyopenssl",),
    "pil": ("pillow",),
    "serial": ("pyserial",),
    "skimage": ("scikit-image",),
    "sklearn": ("scikit-learn",),
    "socks": ("pysocks",),
    "telegram": ("python-telegram-bot",),
    "websocket": ("websocket-client",),
    "wx": ("wxpython",),
    "xlib": ("python-xlib",),
    "zmq": ("pyzmq",),
}
#: how distributions commonly dress the name they install
_PREFIXES = ("", "py", "python-")
_SUFFIXES = ("", "-python", "-binary", "-headless", "-py")


def distributions_of(import_name: str) -> frozenset[str]:
    """The normalised names of the distributions that may install the top-level module
    ``import_name`` (``gi`` -> ``pygobject``; ``yaml`` -> ``yaml``, ``pyyaml``...)."""
    top = import_name.split(".", 1)[0]
    plain = canonicalize_name(top)
    named = {canonicalize_name(f"{pre}{plain}{post}") for pre in _PREFIXES for post in _SUFFIXES}
    return frozenset({*named, *_DIFFERENT.get(plain, ())})


def extra_names_in(module: str) -> list[str]:
    """The parts of ``module``'s dotted name below its root, the deepest first, as an extra
    named for one would be (``keystoneauth1.extras._saml2._loading``: ``loading``, ``saml2``,
    ``extras``): a module that serves one extra's feature is often named for it."""
    return [canonicalize_name(part.strip("_")) for part in reversed(module.split(".")[1:])]
