"""A package's names imported when first used: the package's ``__getattr__`` (PEP 562).

Several packages keep their ``__init__`` free of imports so that importing one name costs
only its module: a check imports what it runs, a sandbox process what its action needs.
"""

from __future__ import annotations

import importlib

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (the runtime's packages use this)
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def imported_on_first_use(
    namespace: dict[str, Any], modules: Mapping[str, str]
) -> Callable[[str], Any]:
    """The ``__getattr__`` of the package whose globals are ``namespace``: each name of
    ``modules`` comes from its module (named relative to the package, ``_model``, or in full),
    imported the first time the name is asked for. Looked up again each time, not kept: what a
    test patches in the module is what the package gives."""
    package = str(namespace["__name__"])

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        full = module if "." in module else f"{package}.{module}"
        return getattr(importlib.import_module(full), name)

    return __getattr__
