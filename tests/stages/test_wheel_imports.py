"""Which of a wheel's modules its other modules import by name, read from the source."""

from __future__ import annotations

from pathlib import Path

from sandboxverify.stages._wheel_imports import importers_of
from tests.helpers import make_wheel

SOURCES = {
    "plug/__init__.py": "try:\n    from .hooks4 import *\nexcept ImportError:\n"
    "    from .hooks3 import *\n",
    "plug/hooks3.py": "from tox import hookimpl\n",
    "plug/hooks4.py": "from tox.plugin import impl\n",
    "plug/lazy.py": "def load():\n    from plug import v1\n    return v1\n",
    "plug/v1/__init__.py": "from pydantic import BaseSettings\n",
    "plug/v1/models.py": "from plug.v1 import BaseSettings\n",  # its own package: no count
    "plug/dotted.py": "import importlib\nimportlib.import_module('plug.sqla13')\n",
    "plug/sqla13.py": "from sqlalchemy.orm import Query\n",
    "plug/deep/inner.py": "from ..examples.base import Model\n",
    "plug/examples/base.py": "",
    "plug/stale.py": "from tox import hookimpl\n",
    "plug/broken_syntax.py": "def (:\n",
    "plug-1.0.dist-info/top_level.txt": "plug\n",
}


def test_a_module_counts_as_imported_when_another_module_names_it(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "plug-1.0-py3-none-any.whl", name="plug", files=SOURCES)
    modules = ["plug.hooks3", "plug.v1", "plug.sqla13", "plug.examples.base", "plug.stale"]
    assert importers_of(wheel, modules) == {
        "plug.hooks3": ("plug",),  # relative, from the package's __init__
        "plug.v1": ("plug.lazy",),  # in a function; not by its own submodule
        "plug.sqla13": ("plug.dotted",),  # spelled out for importlib
        "plug.examples.base": ("plug.deep.inner",),  # two levels up
        "plug.stale": (),  # nothing selects it
    }


def test_a_wheel_that_cannot_be_read_imports_nothing(tmp_path: Path) -> None:
    broken = tmp_path / "plug-1.0-py3-none-any.whl"
    broken.write_bytes(b"not a zip")
    assert importers_of(broken, ["plug.hooks3"]) == {"plug.hooks3": ()}


def test_a_module_this_interpreter_cannot_parse_imports_what_it_names(tmp_path: Path) -> None:
    """Newer syntax than the host's is no proof that it imports nothing."""
    files = {**SOURCES, "plug/newer.py": "def (:\nfrom plug import stale\n"}
    wheel = make_wheel(tmp_path, "plug-1.0-py3-none-any.whl", name="plug", files=files)
    assert importers_of(wheel, ["plug.stale"]) == {"plug.stale": ("plug.newer",)}
