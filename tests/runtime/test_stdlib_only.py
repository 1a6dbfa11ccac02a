"""The runtime travels into sandboxes on Python 3.9+ with nothing but the standard library."""

from __future__ import annotations

import ast
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import sandboxverify
from sandboxverify.sandbox._workspace import Workspace

PACKAGE = Path(sandboxverify.__file__).parent
RUNTIME_FILES = [
    *sorted((PACKAGE / "runtime").rglob("*.py")),
    PACKAGE / "__init__.py",
    PACKAGE / "_version.py",
    PACKAGE / "harness.py",
]
ALLOWED_OWN = ("sandboxverify.runtime", "sandboxverify._version")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def stdlib_module_names() -> frozenset[str]:
    known: frozenset[str] | None = getattr(sys, "stdlib_module_names", None)
    if known is not None:
        return known
    # Python 3.9 has no list: what the interpreter's own library directories hold
    names = set(sys.builtin_module_names)
    for key in ("stdlib", "platstdlib"):
        library = Path(sysconfig.get_paths()[key])
        for entry in [*library.iterdir(), *(library / "lib-dynload").glob("*")]:
            if entry.name not in ("site-packages", "dist-packages"):
                names.add(entry.name.split(".")[0])
    return frozenset(names)


def test_runtime_modules_import_only_the_stdlib_and_the_runtime() -> None:
    stdlib = stdlib_module_names()
    for path in RUNTIME_FILES:
        for name in imported_modules(path):
            top = name.split(".")[0]
            if top == "sandboxverify":
                # the package root imports host modules lazily (and only for type checking)
                if path.name == "__init__.py" and path.parent == PACKAGE:
                    continue
                assert name.startswith(ALLOWED_OWN), f"{path.name} imports {name}"
            else:
                assert top in stdlib or top == "__future__", f"{path.name} imports {name}"


def interpreters() -> list[Path]:
    found = [Path(sys.executable)]
    for minor in range(9, 14):
        found += sorted(Path.home().glob(f".pyenv/versions/3.{minor}*/bin/python"))[-1:]
    return found


@pytest.mark.parametrize("python", interpreters(), ids=lambda p: p.parent.parent.name)
def test_the_runtime_copy_imports_without_site_packages(python: Path) -> None:
    with Workspace() as workspace:
        runtime = workspace.install_runtime()
        code = (
            "import sys; sys.path.append(sys.argv[1]);"
            "import sandboxverify.runtime._probe, sandboxverify.runtime.hosts;"
            "import sandboxverify.runtime._smoke, sandboxverify.harness as h;"
            "import sandboxverify.runtime.hosts._mcp, sandboxverify.runtime.hosts._llm;"
            "import sandboxverify.runtime.hosts._pytest, sandboxverify.runtime.hosts._pluggy;"
            "import sandboxverify.runtime.hosts._flake8, sandboxverify.runtime.hosts._sphinx;"
            "import sandboxverify.runtime.hosts._mkdocs;"
            "assert 'create_test_session' in h.__all__;"
            "import sandboxverify; print(sandboxverify.__version__)"
        )
        completed = subprocess.run(
            [str(python), "-I", "-S", "-c", code, str(runtime)],
            capture_output=True,
            text=True,
            check=False,
        )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == sandboxverify.__version__


@pytest.mark.parametrize("python", interpreters(), ids=lambda p: p.parent.parent.name)
def test_the_mcp_client_speaks_to_a_server_on_every_python(python: Path) -> None:
    server = Path(__file__).parent / "hosts" / "mcp_fake_server.py"
    code = (
        "import sys, shlex; sys.path.append(sys.argv[1]);"
        "from sandboxverify.runtime.hosts import HostContext, load_plugin;"
        "from sandboxverify.runtime._registrations import Registry;"
        "from sandboxverify.runtime._protocol import EntryPointRef;"
        "registry = Registry();"
        "command = ' '.join(map(shlex.quote, [sys.executable, sys.argv[2], 'normal']));"
        "load_plugin('mcp', EntryPointRef('fake', 'mcp', command), registry, HostContext(10));"
        "print(registry.tools['add'].fn(a=2, b=3).text);"
        "registry.close()"
    )
    with Workspace() as workspace:
        runtime = workspace.install_runtime()
        completed = subprocess.run(
            [str(python), "-I", "-S", "-c", code, str(runtime), str(server)],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "5"
