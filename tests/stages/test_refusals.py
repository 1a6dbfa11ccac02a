"""Which failed modules were written to refuse import: the module's own statement raised,
lacking nothing, and its source raises at its top level."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from sandboxverify.stages._refusals import _own_refusal, _raises_at_top_level

_WAY_IN = [{"module": "sandboxverify.runtime._imports", "imports": []}]


def failed(module: str, message: str, **cause: Any) -> dict[str, Any]:
    frames = cause.pop("frames", [*_WAY_IN, {"module": module, "imports": []}])
    return {
        "module": module,
        "error": {"type": "ImportError", "message": message},
        "cause": {"missing": [], "names": [], "frames": frames, **cause},
    }


@pytest.mark.parametrize(
    ("item", "words"),
    [
        (
            failed("distributed.bokeh", "The distributed.bokeh module has moved to x"),
            "The distributed.bokeh module has moved to x",
        ),
        # what it lacks: a dependency's failure, for the other rules
        (failed("pkg.old", "No module named 'gone'", missing=["gone"]), None),
        (failed("pkg.old", "cannot import name 'parse' from 'pkg.text'"), None),
        (failed("pkg.old", "refused", names=[["pkg.text", "parse"]]), None),
        # raised by another module it imports: that module's words
        (
            failed(
                "pkg.views",
                "moved",
                frames=[{"module": "pkg.views", "imports": ["pkg.old"]}, {"module": "pkg.old"}],
            ),
            None,
        ),
        (failed("pkg.old", "moved", frames=[{"module": "pkg.old", "imports": ["pkg.x"]}]), None),
        # its own test of the Python version: reason python's
        (failed("pkg.new", "needs 3.13", python_test="sys.version_info < (3, 13)"), None),
    ],
)
def test_a_refusal_is_the_modules_own_statement_lacking_nothing(
    item: dict[str, Any], words: str | None
) -> None:
    assert _own_refusal(str(item["module"]), item) == words


@pytest.mark.parametrize(
    ("source", "raises"),
    [
        ('raise ImportError("moved")\n', True),
        ('import sys\nif sys.platform == "x":\n    raise RuntimeError("no")\n', True),
        ("try:\n    import a\nexcept ImportError:\n    raise\n", True),
        ('def f():\n    raise ValueError("only when called")\n', False),
        ("class C:\n    def m(self):\n        raise TypeError\n", False),
        ("x = 1 / 0\n", False),
    ],
)
def test_only_a_raise_outside_functions_and_classes_counts(source: str, raises: bool) -> None:
    assert _raises_at_top_level(ast.parse(source)) is raises
