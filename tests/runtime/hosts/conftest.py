"""What the host tests share: plugins installed on the fly into a site directory of the test's
own, where an application finds them by their entry points."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import pytest

from sandboxverify.runtime._protocol import EntryPointRef


class Install(Protocol):
    def __call__(
        self,
        name: str,
        code: str,
        *,
        value: str | None = None,
        files: dict[str, str] | None = None,
        installed: bool = True,
    ) -> EntryPointRef: ...


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A site directory on ``sys.path``: what is installed there, pytest finds and autoloads."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    yield root
    for name in [name for name in sys.modules if name.startswith("svpt_")]:
        del sys.modules[name]


@pytest.fixture
def install(site: Path) -> Install:
    """Install package ``name`` (``code`` is its ``__init__``) with a ``pytest11`` entry point
    ``name = value`` (unless ``installed=False``: then it is only importable)."""

    def install_package(
        name: str,
        code: str,
        *,
        value: str | None = None,
        files: dict[str, str] | None = None,
        installed: bool = True,
    ) -> EntryPointRef:
        package = site / name
        package.mkdir()
        (package / "__init__.py").write_text(textwrap.dedent(code))
        for relative, text in (files or {}).items():
            (package / relative).write_text(textwrap.dedent(text))
        ref = EntryPointRef(name=name, group="pytest11", value=value or name)
        if installed:
            info = site / f"{name}-1.0.dist-info"
            info.mkdir()
            (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
            (info / "entry_points.txt").write_text(f"[pytest11]\n{ref.name} = {ref.value}\n")
        return ref

    return install_package
