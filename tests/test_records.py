"""skillhouse.records: the dataclass subset the library's import path uses, held to dataclasses' behaviour."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from skillhouse.records import FrozenRecordError, field, fields, is_frozen, record, replace


@record(frozen=True, order=True)
class Point:
    """A frozen, ordered record."""

    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


@record
class Bag:
    """A mutable record with a factory default."""

    name: str
    items: list[int] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)


@dataclasses.dataclass(frozen=True, order=True)
class DataPoint:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


def test_constructs_like_a_dataclass_positionally_and_by_keyword() -> None:
    assert Point(1).y == 0
    assert Point(1, 2) == Point(x=1, y=2)
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, z=3)  # type: ignore[call-arg]


def test_repr_eq_hash_and_order_match_the_dataclass_of_the_same_fields() -> None:
    values = [(2, 1, ("a",)), (1, 5, ()), (1, 2, ("b",)), (1, 2, ())]
    ours = [Point(*v) for v in values]
    theirs = [DataPoint(*v) for v in values]
    assert [repr(p).removeprefix("Point") for p in ours] == [repr(p).removeprefix("DataPoint") for p in theirs]
    assert [(p.x, p.y, p.tags) for p in sorted(ours)] == [(p.x, p.y, p.tags) for p in sorted(theirs)]
    assert len({*ours, Point(2, 1, ("a",))}) == 4
    assert hash(Point(1, 2)) == hash(Point(1, 2))
    assert Point(1) != DataPoint(1)  # type: ignore[comparison-overlap]
    assert (Point(1) < Point(2)) and (Point(2) >= Point(2)) and (Point(3) > Point(2)) and (Point(2) <= Point(2))


def test_frozen_records_refuse_assignment_and_deletion() -> None:
    point = Point(1)
    with pytest.raises(FrozenRecordError):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del point.y
    assert is_frozen(Point) and is_frozen(point) and not is_frozen(Bag)


def test_mutable_records_get_a_new_default_each_and_are_unhashable() -> None:
    first, second = Bag("a"), Bag("b")
    first.items.append(1)
    first.seen["k"] = 1
    assert second.items == [] and second.seen == {}
    assert Bag("a", [1]) == Bag("a", [1]) and Bag("a") != Bag("b")
    with pytest.raises(TypeError):
        hash(Bag("a"))


def test_replace_builds_a_new_record_and_refuses_unknown_fields() -> None:
    point = Point(1, 2, ("t",))
    moved = replace(point, y=5)
    assert moved == Point(1, 5, ("t",)) and point == Point(1, 2, ("t",))
    with pytest.raises(TypeError, match="no field 'z'"):
        replace(point, z=1)
    assert fields(Point) == ("x", "y", "tags") and fields(point) == ("x", "y", "tags")


def test_copies_and_pickles_keep_the_fields() -> None:
    bag = Bag("a", [1, 2])
    assert copy.deepcopy(bag) == bag and copy.deepcopy(bag).items is not bag.items
    assert pickle.loads(pickle.dumps(Point(1, 2))) == Point(1, 2)


def test_a_field_without_a_default_after_one_with_is_refused() -> None:
    with pytest.raises(TypeError, match="without a default"):

        @record
        class Wrong:
            a: int = 0
            b: int  # type: ignore[misc]

    with pytest.raises(ValueError, match="not both"):
        field(default=1, default_factory=list)


def test_a_class_of_its_own_eq_and_hash_keeps_them() -> None:
    @record(frozen=True)
    class Named:
        name: str
        note: str = ""

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Named) and other.name == self.name

        def __hash__(self) -> int:
            return hash(self.name)

    assert Named("a", "x") == Named("a", "y") and len({Named("a", "x"), Named("a", "y")}) == 1


def test_the_library_import_path_loads_neither_dataclasses_nor_openssl() -> None:
    # both were a large share of importing a spec from a fresh process (docs/benchmarks.md)
    import subprocess
    import sys

    code = "import sys, skillhouse.openapi; print(sorted(m for m in ('dataclasses', 'inspect', '_hashlib') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"
