"""``frozen`` makes the class ``dataclass(frozen=True)`` makes, without compiling its methods."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import KW_ONLY, FrozenInstanceError, field
from typing import Any

import pytest

from sandboxverify._frozen import frozen


def _pair(body: dict[str, Any], annotations: dict[str, str]) -> tuple[type[Any], type[Any]]:
    """The same class body made by ``dataclass(frozen=True)`` and by ``frozen``."""

    def made(decorate: Any) -> type[Any]:
        namespace = {**body, "__annotations__": dict(annotations), "__doc__": "A record."}
        return decorate(type("Record", (), namespace))  # type: ignore[no-any-return]

    return made(dataclasses.dataclass(frozen=True)), made(frozen)


def _outcome(cls: type[Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    try:
        made = cls(*args, **kwargs)
    except TypeError as exc:
        return ("TypeError", "positional" in str(exc), "keyword" in str(exc))
    try:
        hashed: int | str = hash(made)
    except TypeError:
        hashed = "unhashable"
    return (repr(made), hashed, made == cls(*args, **kwargs), made == object(), made.__dict__)


DEFAULTS = (
    {
        "y": "a",
        "z": field(default_factory=list),
        "w": field(default=3, compare=False, repr=False),
        "h": field(default=1, hash=False),
        "n": field(default=9, init=False),
    },
    {"x": "int", "y": "str", "z": "list[int]", "w": "int", "h": "int", "n": "int"},
)
CALLS = [
    ((1,), {}),
    ((1, "b"), {"w": 4}),
    ((), {"x": 5, "h": 2}),
    ((1, "b", [2]), {}),
    ((1, 2, 3, 4, 5, 6), {}),
    ((), {}),
    ((1,), {"unknown": 1}),
    ((1,), {"x": 1}),
]


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_construction_repr_equality_and_hash_match_dataclass(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    theirs, ours = _pair(*DEFAULTS)
    assert _outcome(ours, args, kwargs) == _outcome(theirs, args, kwargs)


def test_fields_match_args_and_the_library_functions_match_dataclass() -> None:
    theirs, ours = _pair(*DEFAULTS)
    assert [f.name for f in dataclasses.fields(ours)] == [
        f.name for f in dataclasses.fields(theirs)
    ]
    assert ours.__match_args__ == theirs.__match_args__ == ("x", "y", "z", "w", "h")
    made = ours(1, "b")
    assert dataclasses.is_dataclass(ours)
    assert dataclasses.asdict(made) == dataclasses.asdict(theirs(1, "b"))
    replaced = dataclasses.replace(made, y="c")
    assert (replaced.y, replaced.x, type(replaced)) == ("c", 1, ours)
    with pytest.raises(ValueError, match="init=False"):
        dataclasses.replace(made, n=1)
    assert copy.deepcopy(made) == made
    assert copy.copy(made) is not made


def test_instances_refuse_assignment_and_deletion() -> None:
    _, ours = _pair(*DEFAULTS)
    made = ours(1)
    with pytest.raises(FrozenInstanceError, match="'x'"):
        made.x = 2
    with pytest.raises(FrozenInstanceError, match="'other'"):
        made.other = 2
    with pytest.raises(FrozenInstanceError, match="'y'"):
        del made.y
    assert made.x == 1


def test_keyword_only_fields_and_post_init() -> None:
    def post_init(self: Any) -> None:
        object.__setattr__(self, "x", self.x * 10)

    body = {"_": KW_ONLY, "y": 2, "__post_init__": post_init}
    theirs, ours = _pair(body, {"x": "int", "_": "KW_ONLY", "y": "int"})
    for cls in (theirs, ours):
        assert repr(cls(1, y=3)) == "Record(x=10, y=3)"
        with pytest.raises(TypeError, match="positional"):
            cls(1, 3)


def test_methods_the_body_defines_are_kept() -> None:
    def always_equal(self: Any, other: object) -> bool:
        return True

    def seven(self: Any) -> int:
        return 7

    equal, _ = _pair({"__eq__": always_equal}, {"x": "int"})
    _, equal_ours = _pair({"__eq__": always_equal}, {"x": "int"})
    assert equal_ours(1) == equal_ours(2)
    # a body's __eq__ leaves __hash__ None in the body: the fields' hash is made, as dataclass does
    assert hash(equal_ours(1)) == hash(equal(1)) == hash((1,))
    _, hashed = _pair({"__hash__": seven, "__repr__": lambda self: "R!"}, {"x": "int"})
    assert (hash(hashed(1)), repr(hashed(1))) == (7, "R!")
    with pytest.raises(TypeError, match="__setattr__"):
        frozen(type("Bad", (), {"__annotations__": {"x": "int"}, "__setattr__": seven}))


@frozen
class Pickled:
    name: str
    count: int = 0


def test_instances_pickle() -> None:
    made = Pickled("a", 2)
    assert pickle.loads(pickle.dumps(made)) == made
    assert Pickled.__init__.__qualname__ == "Pickled.__init__"


def test_a_record_that_holds_itself_shows_it_as_dataclass_does() -> None:
    theirs, ours = _pair({"items": field(default_factory=list)}, {"items": "list[object]"})
    shown = []
    for cls in (theirs, ours):
        made = cls()
        made.items.append(made)
        shown.append(repr(made))
    assert shown == ["Record(items=[...])"] * 2
