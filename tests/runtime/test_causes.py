"""What an import failure was missing, read from real exceptions raised by real imports."""

from __future__ import annotations

import sys
import unittest
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.runtime._causes import cause_of


def failure_of(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> BaseException:
    """The exception importing a module of ``source`` raises."""
    name = f"svtest_cause_{abs(hash(source))}"
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        __import__(name)
    except BaseException as exc:
        return exc
    finally:
        sys.modules.pop(name, None)
    raise AssertionError("the module imported")


def without_frames(cause: dict[str, Any]) -> dict[str, Any]:
    """The cause but the way in to the failure (tested on its own below)."""
    return {key: value for key, value in cause.items() if key != "frames"}


def test_an_import_error_raised_from_a_missing_module_names_that_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exc = failure_of(
        tmp_path,
        monkeypatch,
        "try:\n    import svtest_absent_pygal\nexcept ImportError as exc:\n"
        "    raise ImportError(exc.args, 'Please install pygal or pkg[histogram]') from exc\n",
    )
    assert type(exc) is ImportError
    assert without_frames(cause_of(exc)) == {
        "missing": ["svtest_absent_pygal"],
        "names": [],
        "skip": False,
        "requires_platform": [],
        "python_test": "",
    }


def test_a_fallback_import_names_both_modules_most_recent_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exc = failure_of(
        tmp_path,
        monkeypatch,
        "try:\n    import svtest_absent_new\nexcept ImportError:\n    import svtest_absent_old\n",
    )
    assert cause_of(exc)["missing"] == ["svtest_absent_old", "svtest_absent_new"]


@pytest.mark.skipif(sys.platform == "win32", reason="ctypes has these names on Windows")
def test_a_name_a_module_lacks_is_named_with_its_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    imported = failure_of(tmp_path, monkeypatch, "from ctypes import WINFUNCTYPE\n")
    attribute = failure_of(tmp_path, monkeypatch, "import ctypes\nctypes.windll\n")
    assert without_frames(cause_of(imported)) == {
        "missing": [],
        "names": [["ctypes", "WINFUNCTYPE"]],
        "skip": False,
        "requires_platform": [],
        "python_test": "",
    }
    assert cause_of(attribute)["names"] == [["ctypes", "windll"]]


def test_a_test_framework_skipping_the_module_is_a_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unittest_skip = failure_of(
        tmp_path, monkeypatch, "import unittest\nraise unittest.SkipTest('no xarray')\n"
    )
    pytest_skip = failure_of(
        tmp_path, monkeypatch, "import pytest\npytest.importorskip('svtest_absent_xarray')\n"
    )
    assert isinstance(unittest_skip, unittest.SkipTest)
    assert cause_of(unittest_skip)["skip"] is True
    assert cause_of(pytest_skip)["skip"] is True
    assert without_frames(cause_of(RuntimeError("boom"))) == {
        "missing": [],
        "names": [],
        "skip": False,
        "requires_platform": [],
        "python_test": "",
    }


def test_a_module_an_installed_package_lacks_is_a_missing_name_not_a_missing_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tox.venv`` gone from the installed tox is an API break, not a dependency to add."""
    exc = failure_of(tmp_path, monkeypatch, "import json.svtest_gone\n")
    assert without_frames(cause_of(exc)) == {
        "missing": [],
        "names": [["json", "svtest_gone"]],
        "skip": False,
        "requires_platform": [],
        "python_test": "",
    }
    absent = failure_of(tmp_path, monkeypatch, "import svtest_absent.sub\n")
    assert cause_of(absent)["missing"] == ["svtest_absent"]


@pytest.mark.parametrize(
    ("source", "platforms"),
    [
        ('import sys\nassert sys.platform == "svtestnever" or sys.platform == "win32"\n', []),
        ('import sys\nassert sys.platform == "win32"\n', ["windows"]),
        ('import os\nif os.name != "nt":\n    raise ImportError("Windows only")\n', ["windows"]),
        ('import sys\nassert sys.platform.startswith("darwin")\n', ["macos"]),
        ("import platform\nassert platform.system() == 'Darwin'\n", ["macos"]),
        # a failure no platform test raised says nothing of a platform
        ("import sys\nassert sys.version_info < (3,)\n", []),
        ('import sys\nif sys.platform == "win32":\n    pass\nraise RuntimeError("x")\n', []),
        # rich._win32_console: the platform's branch, then the refusal in the else
        (
            'import sys\nif sys.platform == "win32":\n    import ctypes\n\n    x = 1\n'
            'else:\n    raise ImportError(f"{__name__} can only be imported on Windows")\n',
            ["windows"],
        ),
        # an else under another test says nothing of a platform
        (
            'import sys\nif sys.version_info >= (4,):\n    pass\nelse:\n    raise ImportError("x")\n',
            [],
        ),
    ],
)
def test_a_platform_test_at_import_names_the_platforms_the_module_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, platforms: list[str]
) -> None:
    """click._winconsole: ``assert sys.platform == "win32"`` is a module of another platform,
    not a broken one; the host side excuses it where the platform is not this one."""
    if sys.platform == "win32" and "windows" in platforms:
        pytest.skip("the module imports on Windows")  # pragma: no cover
    exc = failure_of(tmp_path, monkeypatch, source)
    assert cause_of(exc)["requires_platform"] == platforms


@pytest.mark.parametrize(
    ("source", "test"),
    [
        (
            'import sys\nif sys.version_info < (4, 0):\n    raise ImportError("needs 4")\n',
            "if sys.version_info < (4, 0):",
        ),
        ("import sys\nassert sys.version_info >= (4,)\n", "assert sys.version_info >= (4,)"),
        (
            "import sys\nif sys.version_info[:2] >= (4, 0):\n    pass\nelse:\n"
            '    raise ImportError("x")\n',
            "if sys.version_info[:2] >= (4, 0):",
        ),
        # a platform test, or a raise of its own, is no test of the version
        ('import sys\nassert sys.platform == "svtestnever"\n', ""),
        ('raise RuntimeError("no config")\n', ""),
        ('import sys\nif sys.maxsize > 2:\n    raise ImportError("version_info")\n', ""),
    ],
)
def test_a_version_test_at_import_is_read_back_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, test: str
) -> None:
    """A module that refuses this Python from its own test is code for another Python; the
    host side excuses it unless users import it (the wheel's top level)."""
    exc = failure_of(tmp_path, monkeypatch, source)
    assert cause_of(exc)["python_test"] == test


def test_the_way_in_names_what_each_frame_s_failing_statement_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ModuleNotFoundError.name`` is only the missing top-level package; the host needs the
    full dotted name the module was importing (another distribution's test machinery?)."""
    package = tmp_path / "svtest_way"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text(
        "import os\nfrom svtest_absent_app.testing import (\n    fixtures,\n    config,\n)\n"
    )
    exc = failure_of(tmp_path, monkeypatch, "import sys\nfrom svtest_way import helper\n")
    sys.modules.pop("svtest_way", None)

    frames = cause_of(exc)["frames"]

    assert [f for f in frames if f["module"].startswith("svtest_")][-2:] == [
        {"module": frames[-2]["module"], "imports": ["svtest_way", "svtest_way.helper"]},
        {
            "module": "svtest_way.helper",
            "imports": [
                "svtest_absent_app.testing",
                "svtest_absent_app.testing.fixtures",
                "svtest_absent_app.testing.config",
            ],
        },
    ]
    assert not any(f["module"].startswith("importlib._bootstrap") for f in frames)


def test_a_relative_import_is_named_absolutely_and_other_statements_import_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "svtest_rel"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "raises.py").write_text("from .. import sub\nraise ValueError('own')\n")
    (package / "sub" / "helper.py").write_text("from ..svtest_gone import thing\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    raised, missing = (
        failure_of(tmp_path, monkeypatch, f"import svtest_rel.sub.{name}\n")
        for name in ("raises", "helper")
    )
    for name in [name for name in sys.modules if name.startswith("svtest_rel")]:
        del sys.modules[name]  # the packages that did import: other tests list what is loaded

    assert cause_of(raised)["frames"][-1] == {"module": "svtest_rel.sub.raises", "imports": []}
    assert cause_of(missing)["frames"][-1] == {
        "module": "svtest_rel.sub.helper",
        "imports": ["svtest_rel.svtest_gone", "svtest_rel.svtest_gone.thing"],
    }


def test_a_re_raised_import_failure_leads_to_the_import_a_handler_s_own_error_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``except ImportError: raise ImportError("install pytest")`` failed at its import; an
    error of the handler's own code (not an import failure) failed where it raised."""
    reraised = failure_of(
        tmp_path,
        monkeypatch,
        "try:\n    import svtest_absent_fw\nexcept ImportError:\n"
        "    raise ImportError('the fixtures need svtest_absent_fw')\n",
    )
    own_bug = failure_of(
        tmp_path,
        monkeypatch,
        "try:\n    import svtest_absent_fast\nexcept ImportError:\n    undefined_name\n",
    )

    assert cause_of(reraised)["frames"][-1]["imports"] == ["svtest_absent_fw"]
    assert cause_of(own_bug)["frames"][-1]["imports"] == []
