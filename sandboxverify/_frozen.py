"""Frozen dataclasses whose methods are shared closures, not code compiled for each class.

``dataclasses.dataclass(frozen=True)`` writes the source of six methods for every class and
compiles it: about 0.5 ms a class, ~55 ms of every command's start for the hundred records a
check imports. :func:`frozen` makes the same class (``dataclasses.fields``, ``replace`` and
``asdict`` work, instances compare, hash and refuse assignment alike) from closures over its
fields, so defining a class costs what ``dataclass(init=False, repr=False, eq=False)`` does.
"""

from __future__ import annotations

import dataclasses
import reprlib
from dataclasses import MISSING, FrozenInstanceError

#: ``typing.TYPE_CHECKING`` without importing ``typing``
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar

    from typing_extensions import dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_: object) -> object:
        return lambda function: function


__all__ = ["frozen"]


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: type[T]) -> type[T]:
    """``cls`` as ``dataclasses.dataclass(frozen=True)`` makes it. Methods the class body
    defines are kept, as dataclass keeps them; it refuses a body's ``__setattr__`` or
    ``__delattr__`` alike."""
    defined = set(cls.__dict__)
    for name in ("__setattr__", "__delattr__"):
        if name in defined:
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    if cls.__dict__.get("__hash__", MISSING) is None and "__eq__" in defined:
        defined.discard("__hash__")  # a body's __eq__ left it None: the fields' hash is made
    made = dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    methods: dict[str, Callable[..., Any]] = {
        "__init__": _initialiser(made),
        "__repr__": _representation(made),
        **_comparisons(made),
        **_refusals(made),
    }
    for name, method in methods.items():
        if name not in defined:
            method.__qualname__ = f"{made.__qualname__}.{name}"
            setattr(made, name, method)
    return made


def _initialiser(cls: type[Any]) -> Callable[..., None]:
    every = dataclasses.fields(cls)
    given = tuple(field for field in every if field.init)
    # ``kw_only`` is Python 3.10's: every field is positional before it
    positional = tuple(field.name for field in given if not getattr(field, "kw_only", False))
    by_name = {field.name: field for field in given}
    # a field outside __init__ with a plain default is read from the class, as dataclass leaves it
    made = tuple(f for f in every if not f.init and f.default_factory is not MISSING)
    post_init = getattr(cls, "__post_init__", None)
    where = f"{cls.__qualname__}.__init__()"

    def __init__(self: object, *args: object, **kwargs: object) -> None:
        if len(args) > len(positional):
            raise TypeError(
                f"{where} takes {len(positional) + 1} positional arguments "
                f"but {len(args) + 1} were given"
            )
        values = dict(zip(positional, args))
        for name, value in kwargs.items():
            if name not in by_name:
                raise TypeError(f"{where} got an unexpected keyword argument {name!r}")
            if name in values:
                raise TypeError(f"{where} got multiple values for argument {name!r}")
            values[name] = value
        for field in given:
            if field.name in values:
                object.__setattr__(self, field.name, values[field.name])
            elif _has_default(field):
                object.__setattr__(self, field.name, _default(field))
            else:
                kind = "positional" if field.name in positional else "keyword-only"
                raise TypeError(f"{where} missing 1 required {kind} argument: {field.name!r}")
        for field in made:
            object.__setattr__(self, field.name, _default(field))
        if post_init is not None:
            post_init(self)

    return __init__


def _has_default(field: dataclasses.Field[Any]) -> bool:
    return field.default is not MISSING or field.default_factory is not MISSING


def _default(field: dataclasses.Field[Any]) -> object:
    factory = field.default_factory
    return factory() if callable(factory) else field.default


def _representation(cls: type[Any]) -> Callable[[object], str]:
    shown = tuple(field.name for field in dataclasses.fields(cls) if field.repr)

    @reprlib.recursive_repr()  # a record that holds itself shows "...", as dataclass's does
    def __repr__(self: object) -> str:
        values = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{type(self).__qualname__}({values})"

    return __repr__


def _comparisons(cls: type[Any]) -> dict[str, Callable[..., Any]]:
    """``__eq__`` over the compared fields, and ``__hash__`` over the hashed ones."""
    every = dataclasses.fields(cls)
    compared = tuple(field.name for field in every if field.compare)
    hashed = tuple(
        field.name for field in every if (field.compare if field.hash is None else field.hash)
    )

    def __eq__(self: object, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = tuple(getattr(self, name) for name in compared)
        return mine == tuple(getattr(other, name) for name in compared)

    def __hash__(self: object) -> int:
        return hash(tuple(getattr(self, name) for name in hashed))

    return {"__eq__": __eq__, "__hash__": __hash__}


def _refusals(cls: type[Any]) -> dict[str, Callable[..., None]]:
    names = frozenset(field.name for field in dataclasses.fields(cls))

    def __setattr__(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return {"__setattr__": __setattr__, "__delattr__": __delattr__}
