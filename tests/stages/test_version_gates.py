"""Which of a wheel's modules the package imports only on other Pythons, read from its source:
the gates published packages write (robotframework's ``typealiasresolver`` under
``if sys.version_info >= (3, 12):``), and the tests that say nothing of the version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sandboxverify.stages._version_gates import (
    imported_elsewhere_only,
    importers_here,
    other_python_excuse,
)
from tests.helpers import make_wheel

PY311 = (3, 11, 7)
PY312 = (3, 12, 1)

GATES = {
    # robotframework 7.5, robot/running/arguments/typeinfo.py
    "new.py": "import sys\nif sys.version_info >= (3, 12):\n    from g.m import x\n",
    "sliced.py": "import sys\nif sys.version_info[:2] >= (3, 12):\n    import g.m\n",
    "indexed.py": "import sys\nif sys.version_info[1] >= 12 and sys.version_info[0] == 3:\n"
    "    import g.m\n",
    "minor.py": "import sys\nif sys.version_info.minor >= 12:\n    import g.m\n",
    "from_sys.py": "from sys import version_info\nif version_info >= (3, 12):\n    import g.m\n",
    "aliased.py": "import sys as _sys\nif not _sys.version_info < (3, 12):\n    import g.m\n",
    "otherwise.py": "import sys\nif sys.version_info < (3, 12):\n    x = 1\nelse:\n"
    "    from . import m\n",
    "chained.py": "import sys\nif (3, 12) <= sys.version_info < (4,):\n    import g.m\n",
    "in_function.py": "import sys\ndef load():\n    if sys.version_info >= (3, 12):\n"
    "        import g.m\n",
    "flag_here.py": "import sys\nPY312 = sys.version_info >= (3, 12)\nif PY312:\n    import g.m\n",
    "flag_taken.py": "from g.flags import PY312\nif PY312:\n    import g.m\n",
    "flag_module.py": "from g import flags\nif flags.PY312:\n    import g.m\n",
    "checking.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import g.m\n",
    # pyview-web 0.9: an early return below the version, then the import
    "early.py": "import sys\ndef load():\n    if sys.version_info < (3, 12):\n        return None\n"
    "    import g.m\n    return g.m\n",
    # mitogen 0.3.54: a chain of version tests
    "chain.py": "import sys\nif sys.version_info >= (3, 13):\n    import g.n\n"
    "elif sys.version_info >= (3, 12):\n    import g.m\n",
    "typing_checking.py": "import typing\nif typing.TYPE_CHECKING:\n    import g.m\n",
}


def wheel_of(tmp_path: Path, importers: dict[str, str]) -> Path:
    files = {
        "g/__init__.py": "",
        "g/flags.py": "import sys\nPY312 = sys.version_info >= (3, 12)\n",
        "g/m.py": "from typing import TypeAliasType\n",
        **{f"g/{name}": source for name, source in importers.items()},
        "g-1.0.dist-info/top_level.txt": "g\n",
    }
    return make_wheel(tmp_path, "g-1.0-py3-none-any.whl", name="g", files=files)


@pytest.mark.parametrize("importer", sorted(GATES))
def test_each_gate_false_here_leaves_the_module_to_other_pythons(
    tmp_path: Path, importer: str
) -> None:
    wheel = wheel_of(tmp_path, {importer: GATES[importer]})

    gated = imported_elsewhere_only(wheel, ["g.m"], PY311)

    assert list(gated) == ["g.m"]
    assert f"g.{importer[:-3]}, under `" in gated["g.m"]
    if "TYPE_CHECKING" not in GATES[importer]:
        assert "only on other Pythons" in gated["g.m"]
        # where the gate is true, the package imports it: judged as any module
        assert imported_elsewhere_only(wheel, ["g.m"], PY312) == {}
    else:
        assert "only for type checkers" in gated["g.m"]


@pytest.mark.parametrize(
    "importers",
    [
        # one import taken here is enough: users of this Python meet the module
        {"a.py": GATES["new.py"], "b.py": "import g.m\n"},
        {"a.py": GATES["new.py"], "b.py": "import importlib\nimportlib.import_module('g.m')\n"},
        # tests not of the version alone are taken, as are those it cannot evaluate
        {"a.py": "import sys\nif sys.platform == 'svtestnever':\n    import g.m\n"},
        {"a.py": "import sys\nif sys.version_info >= (3, 12) or FAST:\n    import g.m\n"},
        {"a.py": "import other\nif other.version_info >= (9,):\n    import g.m\n"},
        {"a.py": "import sys\nif sys.version_info >= MINIMUM:\n    import g.m\n"},
        {"a.py": "import sys\nif sys.version_info is None:\n    import g.m\n"},
        # sys.version_info is five long: on 3.11.7 it is greater than (3, 11, 7)
        {"a.py": "import sys\nif sys.version_info > (3, 11, 7):\n    import g.m\n"},
        # an early return that does not happen here
        {
            "a.py": "import sys\ndef f():\n    if sys.version_info >= (3, 12):\n        return\n"
            "    import g.m\n"
        },
        # a try is taken: whether the import fails is what is being judged
        {"a.py": "try:\n    import g.m\nexcept ImportError:\n    pass\n"},
        # nothing of the package imports it: every user who does meets its failure
        {"a.py": "import sys\n"},
    ],
)
def test_a_module_the_package_imports_here_or_never_is_not_gated(
    tmp_path: Path, importers: dict[str, str]
) -> None:
    wheel = wheel_of(tmp_path, importers)
    assert imported_elsewhere_only(wheel, ["g.m"], PY311) == {}


def test_a_module_s_own_submodules_are_not_its_importers(tmp_path: Path) -> None:
    files = {
        "g/__init__.py": GATES["new.py"].replace("g.m", "g.pkg"),
        "g/pkg/__init__.py": "from typing import TypeAliasType\n",
        "g/pkg/inner.py": "from g.pkg import TypeAliasType\n",
        "g-1.0.dist-info/top_level.txt": "g\n",
    }
    wheel = make_wheel(tmp_path, "g-1.0-py3-none-any.whl", name="g", files=files)

    assert list(imported_elsewhere_only(wheel, ["g.pkg"], PY311)) == ["g.pkg"]


def cause(python_test: str = "") -> dict[str, Any]:
    return {"missing": [], "names": [], "python_test": python_test}


def test_a_module_refusing_this_python_is_excused_unless_users_import_it() -> None:
    test = "if sys.version_info < (3, 12):"

    excused = other_python_excuse("g.new", cause(test), {}, own={"g"})
    assert excused is not None and excused.reason == "python"
    assert test in excused.detail
    # the wheel's top level refusing a Python its Requires-Python admits is a broken package
    assert other_python_excuse("g", cause(test), {}, own={"g"}) is None
    assert other_python_excuse("g.other", cause(), {}, own={"g"}) is None


@pytest.mark.parametrize(
    ("source", "counted"),
    [
        # distributed 2026.8 imports its bokeh dashboard so, and goes on without it
        ("try:\n    import g.m\nexcept ImportError:\n    m = None\n", False),
        ("try:\n    from g import m\nexcept (ValueError, ModuleNotFoundError):\n    pass\n", False),
        ("try:\n    import g.m\nexcept:\n    pass\n", False),
        # a handler that does not catch it, or none: its failure reaches the caller
        ("try:\n    import g.m\nexcept ValueError:\n    pass\n", True),
        ("def load():\n    import g.m\n", True),
        ("try:\n    x = 1\nexcept ImportError:\n    pass\nimport g.m\n", True),
        # where the version test is false, it never runs
        ("import sys\nif sys.version_info >= (3, 12):\n    import g.m\n", False),
    ],
)
def test_an_importer_counts_only_where_the_import_s_failure_gets_through(
    tmp_path: Path, source: str, counted: bool
) -> None:
    wheel = wheel_of(tmp_path, {"a.py": source})
    assert importers_here(wheel, ["g.m"], PY311) == {"g.m": ("g.a",) if counted else ()}


def test_a_module_this_interpreter_cannot_parse_counts_as_importing_what_it_names(
    tmp_path: Path,
) -> None:
    """An importer in syntax newer than the host's is not read as importing nothing: a gate
    elsewhere, or no other importer, must not excuse the module on its account."""
    unreadable = "def (:\nimport g.m\n"
    wheel = wheel_of(tmp_path, {"a.py": GATES["new.py"], "b.py": unreadable})

    assert imported_elsewhere_only(wheel, ["g.m"], PY311) == {}
    assert importers_here(wheel, ["g.m"], PY311) == {"g.m": ("g.b",)}


def test_a_loaders_table_is_an_importer_except_where_only_statements_count(
    tmp_path: Path,
) -> None:
    """docutils 0.23 names its markdown parser's module in a table it imports from when a user
    asks for that parser: an importer for every rule, but not for a module written to refuse
    import (``_refusals``), whose words are meant for those who ask."""
    table = 'from importlib import import_module\nPARSERS = {"md": "g.m"}\n'
    wheel = wheel_of(tmp_path, {"a.py": table, "b.py": "def f():\n    import g.m\n"})

    assert importers_here(wheel, ["g.m"], PY311) == {"g.m": ("g.a", "g.b")}
    assert importers_here(wheel, ["g.m"], PY311, statements_only=True) == {"g.m": ("g.b",)}
