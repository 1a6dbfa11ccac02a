"""Which extra a console script's failed ``--help`` asks for, in the words published scripts
print (httpx, hypothesis, black's blackd) or the package its import stopped at."""

from __future__ import annotations

import pytest

from sandboxverify.stages._extras import parse_extras
from sandboxverify.stages._script_extras import extra_asked_for

METADATA = """\
Metadata-Version: 2.1
Name: httpx
Version: 0.28.1
Requires-Dist: httpcore==1.*
Provides-Extra: cli
Requires-Dist: click==8.*; extra == "cli"
Requires-Dist: rich<14,>=10; extra == "cli"
Provides-Extra: http2
Requires-Dist: h2<5,>=3; extra == "http2"
Provides-Extra: test
Requires-Dist: pytest; extra == "test"
Requires-Dist: trio; extra == "test"
"""
EXTRAS = parse_extras(METADATA, "httpx", (3, 11, 7))


@pytest.mark.parametrize(
    ("output", "extra"),
    [
        # httpx 0.28.1
        (
            "The httpx command line client could not run because the required dependencies "
            "were not installed.\nMake sure you've installed everything with: pip install "
            "'httpx[cli]'\n",
            "cli",
        ),
        # hypothesis's shape, and black's blackd: "`pip install black[d]`"
        ("Run:\n\n    python -m pip install --upgrade 'HTTPX[CLI]'\n\nand try again.\n", "cli"),
        ("re-install with the '[cli]' extra: `pip install httpx[http2,cli]`", "http2"),
        # the interpreter's words: the package only an extra declares
        (
            "Traceback (most recent call last):\n  File ...\n"
            "ModuleNotFoundError: No module named 'click'\n",
            "cli",
        ),
        ("ModuleNotFoundError: No module named 'rich.console'\n", "cli"),
        # another distribution's extra, a development extra, an unknown one: not asked for
        ("pip install 'otherpkg[cli]'\n", None),
        ("ModuleNotFoundError: No module named 'trio'\n", None),
        ("pip install 'httpx[nosuchextra]'\n", None),
        # a failure of its own
        ("Traceback (most recent call last):\nKeyError: 'a'\n", None),
    ],
)
def test_the_extra_a_failed_help_asks_for(output: str, extra: str | None) -> None:
    assert extra_asked_for(output, EXTRAS) == extra
