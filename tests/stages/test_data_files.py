"""Which of a wheel's ``.py`` files it ships as data (alembic 1.20's templates), read from its
listing and sources."""

from __future__ import annotations

from pathlib import Path

from sandboxverify.stages._data_files import shipped_as_data
from tests.helpers import make_wheel

FILES = {
    "alembic/__init__.py": "",
    "alembic/context.py": "",
    "alembic/templates/generic/env.py": "from alembic import context\nconfig = context.config\n",
    "alembic/templates/generic/script.py.mako": "",
    # a subpackage missing its __init__.py that the package imports: one of its modules
    "alembic/ddl/impl.py": "x = undefined\n",
    "alembic/ops.py": "from alembic.ddl import impl\n",
    # a namespace package's module at the top: no regular package above it
    "nsonly/mod.py": "x = undefined\n",
    "alembic/sub/__init__.py": "",
    "alembic/sub/mod.py": "x = undefined\n",
    "alembic-1.0.dist-info/top_level.txt": "alembic\n",
}


def test_a_file_in_a_directory_without_init_that_nothing_imports_is_data(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "alembic-1.0-py3-none-any.whl", name="alembic", files=FILES)
    modules = [
        "alembic.templates.generic.env",
        "alembic.ddl.impl",
        "nsonly.mod",
        "alembic.sub.mod",
    ]

    found = shipped_as_data(wheel, modules)

    assert list(found) == ["alembic.templates.generic.env"]
    [excused] = found.values()
    assert excused.reason == "data"
    assert "alembic/templates/ has no __init__.py" in excused.detail
