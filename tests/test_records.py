"""skillhouse.records: the dataclass subset the library's import path uses, held to dataclasses' behaviour."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from pathlib import Path

import pytest

from skillhouse import record_templates
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


def test_the_library_import_path_loads_neither_dataclasses_nor_openssl_nor_typing() -> None:
    # each was a large share of importing a spec from a fresh process (docs/benchmarks.md); typing (16M
    # instructions, with the contextlib and warnings it imports) is imported under TYPE_CHECKING only
    import subprocess
    import sys

    heavy = ("dataclasses", "inspect", "_hashlib", "typing", "skillhouse.json_types")
    code = f"import sys, skillhouse.openapi; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"


def template_module(most: int = 20) -> str:
    """What src/skillhouse/record_templates.py must hold: ``__init__`` templates of 0 to ``most`` fields."""

    def frozen(n: int) -> str:
        params = "".join(f", _a{i}" for i in range(n))
        body = "\n".join(f'    _set(self, "_n{i}", _f{i}() if _a{i} is _FACTORY else _a{i})' for i in range(n)) or "    pass"
        return f"def _frozen{n}(self{params}):\n{body}\n"

    def mutable(n: int) -> str:
        params = "".join(f", _a{i}" for i in range(n))
        body = "\n".join(f"    self._n{i} = _f{i}() if _a{i} is _FACTORY else _a{i}" for i in range(n)) or "    pass"
        return f"def _mutable{n}(self{params}):\n{body}\n"

    header = Path(record_templates.__file__).read_text(encoding="utf-8").split("# fmt: off\n\n", 1)[0] + "# fmt: off\n\n"
    every = range(most + 1)
    return (
        header + "\n\n".join(frozen(n) for n in every) + "\n\n" + "\n\n".join(mutable(n) for n in every)
        + f"\n\nFROZEN = ({', '.join(f'_frozen{n}' for n in every)})\n"
        + f"MUTABLE = ({', '.join(f'_mutable{n}' for n in every)})\n"
    )


def test_the_init_templates_are_the_generated_ones() -> None:
    assert Path(record_templates.__file__).read_text(encoding="utf-8") == template_module()


def test_a_record_of_more_fields_than_any_template_still_gets_its_init() -> None:
    names = [f"f{i}" for i in range(len(record_templates.FROZEN) + 2)]
    wide = record(frozen=True)(type("Wide", (), {"__annotations__": dict.fromkeys(names, "int"), names[-1]: 7}))
    made = wide(*range(len(names) - 1))
    assert fields(made) == tuple(names) and made.f0 == 0 and getattr(made, names[-1]) == 7
    with pytest.raises(TypeError, match="missing"):
        wide()
    bag = record(type("WideBag", (), {"__annotations__": dict.fromkeys(names, "list[int]"), **{n: field(default_factory=list) for n in names}}))
    first, second = bag(), bag()
    assert first.f0 == [] and first.f0 is not second.f0


def test_records_keep_parameter_names_defaults_and_errors_of_their_fields() -> None:
    assert Point.__init__.__qualname__ == "Point.__init__" and Point.__init__.__code__.co_varnames[:4] == ("self", "x", "y", "tags")
    assert Point.__init__.__defaults__ == (0, ())
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        Point(1, z=2)  # type: ignore[call-arg]


def test_the_library_import_path_compiles_no_source() -> None:
    # compiling a method per record class, and the process's first compile, were a sixth of the import
    import subprocess
    import sys

    code = (
        "import builtins, sys\n"
        "seen = []\n"
        "real_exec, real_compile = builtins.exec, builtins.compile\n"
        "def caller():\n"
        "    name = sys._getframe(2).f_globals.get('__name__', '')\n"
        "    if name.startswith('skillhouse'): seen.append(name)\n"  # the standard library's namedtuples may
        "builtins.exec = lambda *a, **k: (caller(), real_exec(*a, **k))[1]\n"
        "builtins.compile = lambda *a, **k: (caller(), real_compile(*a, **k))[1]\n"
        "import skillhouse.openapi\n"
        "print(seen)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
