"""Which modules of a distribution without plugins are extensions users name in an
application's configuration."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sandboxverify.stages._named_modules import LOADED_AT_MOST, named_extensions
from tests.helpers import make_wheel

SETUP = "def setup(app):\n    return {}\n"


def _wheel(tmp_path: Path, name: str, files: dict[str, str], requires: tuple[str, ...]) -> Any:
    path = make_wheel(tmp_path, f"{name.replace('-', '_')}-1.0-py3-none-any.whl", files=files)
    return SimpleNamespace(
        path=path, name=name, dependencies=frozenset(requires), files=tuple(files)
    )


def _planned(wheel: Any) -> list[tuple[str, str, bool]]:
    planned, _ = named_extensions(wheel)
    return [(p.ref.value, p.host, p.finds_application) for p in planned]


def test_a_module_defining_the_applications_function_is_an_extension(tmp_path: Path) -> None:
    files = {
        "ext/__init__.py": SETUP,
        "ext/sub.py": "def setup(app, more=1):\n    pass\n",  # a default: callable with app
        "ext/helper.py": "def setup():\n    pass\n",  # Sphinx passes app: not its setup
        "ext/nested.py": "def outer():\n    def setup(app):\n        pass\n",  # not top level
        "ext/tests/test_ext.py": SETUP,  # a test module
        "ext/docs/conf.py": SETUP,  # a Sphinx project's own configuration
        # only Markdown calls makeExtension(): an extension though Markdown is not required
        "ext/md.py": "def makeExtension(**kwargs):\n    pass\n",
    }
    wheel = _wheel(tmp_path, "demo-ext", files, ("sphinx", "docutils"))
    assert _planned(wheel) == [
        ("ext", "sphinx", False),
        ("ext.sub", "sphinx", False),
        ("ext.md", "markdown", True),
    ]


def test_a_distribution_named_for_the_application_need_not_require_it(tmp_path: Path) -> None:
    """sphinx-sitemap leaves Sphinx to a requirement of its own: Sphinx is found for it."""
    files = {"sitemap/__init__.py": SETUP}
    assert _planned(_wheel(tmp_path, "sphinx-sitemap", files, ())) == [("sitemap", "sphinx", True)]
    assert _planned(_wheel(tmp_path, "sitemap-for-docs", files, ())) == []


def test_beyond_the_limit_the_other_modules_are_named_in_a_note(tmp_path: Path) -> None:
    count = LOADED_AT_MOST + 2
    files = {
        f"pymd/ext{index:02}.py": "def makeExtension(**kw):\n    pass\n" for index in range(count)
    }
    planned, notes = named_extensions(_wheel(tmp_path, "pymd", files, ("markdown",)))
    assert [plugin.ref.group for plugin in planned] == ["markdown:extensions"] * LOADED_AT_MOST
    assert notes == [
        f"2 more module(s) defining an extension's function were not loaded (only "
        f"{LOADED_AT_MOST} are): pymd.ext{count - 2:02}, pymd.ext{count - 1:02}"
    ]


def test_a_package_that_re_exports_a_submodules_function_is_the_name_loaded(
    tmp_path: Path,
) -> None:
    """mdx-breakless-lists' users write ``mdx_breakless_lists``, whose __init__ imports
    makeExtension from the submodule that defines it: the package stands for it."""
    files = {
        "mdx_lists/__init__.py": "from .mdx_lists import makeExtension\n",
        "mdx_lists/mdx_lists.py": "def makeExtension(**kwargs):\n    pass\n",
        "other/__init__.py": "from other.impl import makeExtension as make\n",  # renamed
        "other/impl.py": "def makeExtension(**kwargs):\n    pass\n",
    }
    wheel = _wheel(tmp_path, "mdx-lists", files, ("markdown",))
    assert [value for value, _, _ in _planned(wheel)] == ["mdx_lists", "other.impl"]


def test_private_modules_are_the_package_s_own_unless_the_host_is_asked_for(
    tmp_path: Path,
) -> None:
    """bokeh 3.9's sphinxext._internal.bokeh_gallery builds bokeh's own gallery, from its
    docs' gallery.json: users name the public extensions."""
    files = {"tb/_css.py": SETUP, "tb/github.py": SETUP, "tb/__init__.py": SETUP}
    wheel = _wheel(tmp_path, "tb", files, ("sphinx",))
    assert [v for v, _, _ in _planned(wheel)] == ["tb", "tb.github"]
    asked = named_extensions(wheel, only="sphinx")[0]
    assert [p.ref.value for p in asked] == ["tb", "tb.github", "tb._css"]


def test_an_application_already_loading_an_entry_point_of_the_wheel_is_left_out(
    tmp_path: Path,
) -> None:
    """A Sphinx theme's entry point is loaded by the sphinx host, which builds with its
    setup(app); an entry point of another group (sphinx-external-toc's jb.cmdline) is not."""
    wheel = _wheel(tmp_path, "toc", {"toc/__init__.py": SETUP}, ("sphinx",))
    assert named_extensions(wheel, {"sphinx"}) == ([], [])
    assert [p.ref.value for p in named_extensions(wheel, {"entrypoints"})[0]] == ["toc"]


def test_a_top_level_package_named_with_a_dash_is_reached_as_sphinx_reaches_it(
    tmp_path: Path,
) -> None:
    """sphinx-prompt 1.4 ships sphinx-prompt/__init__.py: conf.py names 'sphinx-prompt', and
    importlib imports it; a dash below the top is reached by nothing."""
    files = {"sphinx-prompt/__init__.py": SETUP, "pkg/sub-mod/__init__.py": SETUP}
    wheel = _wheel(tmp_path, "sphinx-prompt", files, ("sphinx",))
    assert [value for value, _, _ in _planned(wheel)] == ["sphinx-prompt"]


def test_a_package_binding_a_submodules_function_to_its_name_is_the_name_loaded(
    tmp_path: Path,
) -> None:
    """pylint-django, pylint-quotes and pylint-print: ``from pkg import plugin`` then
    ``register = plugin.register``; their users write the package's name. A name bound to
    another module's attribute that is not the function, or not a module, stays out."""
    register = "def register(linter):\n    pass\n"
    files = {
        "pylint_dj/__init__.py": "from pylint_dj import plugin\n\nregister = plugin.register\n",
        "pylint_dj/plugin.py": register,
        "pylint_q/__init__.py": "import pylint_q.impl as impl\n\nregister = impl.register\n",
        "pylint_q/impl.py": register,
        "pylint_x/__init__.py": "from pylint_x import impl\n\nregister = impl.setup\n",
        "pylint_x/impl.py": register,
    }
    wheel = _wheel(tmp_path, "pylint-dj", files, ("pylint",))
    assert _planned(wheel) == [
        ("pylint_dj", "pylint", False),
        ("pylint_q", "pylint", False),
        ("pylint_x.impl", "pylint", False),
    ]


def test_ipython_and_pylint_extensions_are_found_by_their_functions(tmp_path: Path) -> None:
    files = {
        "autotime/__init__.py": "def load_ipython_extension(ipython):\n    pass\n",
        "autotime/helpers.py": "def register(linter):\n    pass\n",  # IPython's: not pylint's
    }
    wheel = _wheel(tmp_path, "ipython-autotime", files, ())
    assert _planned(wheel) == [("autotime", "ipython", True)]
    # --host pylint: the modules pylint would load, whatever the distribution requires
    only_pylint, _ = named_extensions(wheel, only="pylint")
    assert [(p.ref.value, p.host) for p in only_pylint] == [("autotime.helpers", "pylint")]


def _with_metadata(tmp_path: Path, name: str, files: dict[str, str], requires: list[str]) -> Any:
    """A wheel whose METADATA says ``requires`` (Requires-Dist lines, markers and all)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"Requires-Dist: {line}\n" for line in requires)
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n{lines}\nNames mypy.\n"
    path = make_wheel(
        tmp_path, f"{name}-1.0-py3-none-any.whl", name=name, files=files, metadata=metadata
    )
    base = {line.split(";")[0].split(">")[0].strip() for line in requires if "extra" not in line}
    return SimpleNamespace(path=path, name=name, dependencies=frozenset(base), files=tuple(files))


def test_an_extra_named_for_the_application_makes_an_extension_of_it(tmp_path: Path) -> None:
    """returns declares mypy under its extra 'compatible-mypy', line_profiler IPython under
    'ipython'; an extra for the project's own checks ('lint') says nothing."""
    plugin = {"lib/typing_plugin.py": "def plugin(version):\n    return object\n"}
    extra = _with_metadata(tmp_path / "a", "lib", plugin, ['mypy>=1; extra == "compatible-mypy"'])
    planned, _ = named_extensions(extra, python=(3, 11, 7))
    assert [(p.ref.value, p.host, p.finds_application) for p in planned] == [
        ("lib.typing_plugin", "mypy", True)
    ]
    assert "requires mypy through its extra 'compatible-mypy'" in planned[0].reason
    lint = _with_metadata(tmp_path / "b", "lib", plugin, ['mypy>=1; extra == "lint"'])
    assert named_extensions(lint, python=(3, 11, 7)) == ([], [])


def test_a_requirement_whose_marker_is_false_here_requires_nothing(tmp_path: Path) -> None:
    files = {"ext/__init__.py": SETUP}
    old_only = _with_metadata(tmp_path, "ext", files, ['sphinx; python_version < "3.8"'])
    assert named_extensions(old_only, python=(3, 11, 7)) == ([], [])
    assert [p.ref.value for p in named_extensions(old_only, python=(3, 7, 9))[0]] == ["ext"]


def test_a_module_named_for_the_application_is_one_though_nothing_declares_it(
    tmp_path: Path,
) -> None:
    """pydantic declares no mypy, yet its users name pydantic.mypy in mypy's plugins;
    matplotlib's sphinxext modules are Sphinx extensions. Another module defining the same
    function in such a distribution is not one."""
    files = {
        "pyd/__init__.py": "",
        "pyd/mypy.py": "def plugin(version):\n    return object\n",
        "pyd/loader.py": "def plugin(version):\n    return object\n",  # a name of its own
        "mpl/sphinxext/plot_directive.py": SETUP,
        "mpl/other.py": SETUP,
    }
    wheel = _wheel(tmp_path, "pyd", files, ("typing-extensions",))
    planned = _planned(wheel)
    assert planned == [
        ("mpl.sphinxext.plot_directive", "sphinx", True),
        ("pyd.mypy", "mypy", True),
    ]
    [mypy] = [p for p in named_extensions(wheel)[0] if p.host == "mypy"]
    assert "names the module for mypy" in mypy.reason


def test_a_function_only_one_application_calls_makes_an_extension_of_any_distribution(
    tmp_path: Path,
) -> None:
    """memory_profiler declares no IPython, yet its users %load_ext memory_profiler; a
    setup(app) with nothing saying Sphinx is no Sphinx extension (setup is everyone's name)."""
    files = {
        "memory_profiler.py": "def load_ipython_extension(ip):\n    pass\n",
        "helpers.py": SETUP,
    }
    wheel = _wheel(tmp_path, "memory-profiler", files, ("psutil",))
    [planned] = named_extensions(wheel)[0]
    assert (planned.ref.value, planned.host, planned.finds_application) == (
        "memory_profiler",
        "ipython",
        True,
    )
    assert "defines a function only ipython calls" in planned.reason
