"""The fast canonical JSON writes exactly the bytes ``rfc8785`` writes."""

from __future__ import annotations

from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from skillhouse.compiler import canonical_json
from skillhouse.compiler.canonical import canonical_parts

keys = st.text(max_size=6) | st.sampled_from(["a", "B", "é", "\U0001f600", "\ufb01", "_", "ab", "a\u0000"])
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=8)
)
values = st.recursive(scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(keys, c, max_size=4), max_leaves=25)


@settings(max_examples=600, deadline=None)
@given(values)
def test_the_fast_path_writes_the_bytes_rfc8785_writes(value: Any) -> None:
    assert canonical_json(value) == bytes(rfc8785.dumps(value))


def test_values_outside_the_fast_path_still_refuse_as_rfc8785_does() -> None:
    for bad in (2**60, float("nan")):
        try:
            canonical_json({"a": bad})
        except Exception as exc:  # the exact encoder's own error
            assert type(exc).__module__.startswith("rfc8785")
        else:
            raise AssertionError("expected a refusal")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "é", "c"]), values, max_size=5), st.sampled_from([1e-05, 9.2e18, 2**60]))
def test_a_document_with_one_part_the_fast_path_cannot_take_still_gets_rfc8785s_bytes(document: dict[str, Any], odd: Any) -> None:
    # One exponent float or big integer deep in an otherwise plain document: only that part goes the exact way.
    nested = {"ops": [document, {"schema": {"maximum": odd}}], "plain": document}
    _assert_as_rfc8785(nested)


def _assert_as_rfc8785(value: Any) -> bytes | None:
    """``canonical_json(value)`` is rfc8785's bytes, or raises what it raises (then ``None``); the bytes."""
    try:
        expected = bytes(rfc8785.dumps(value))
    except Exception as exc:
        refused = type(exc)
        try:
            canonical_json(value)
        except Exception as ours:
            assert type(ours) is refused
        else:
            raise AssertionError("expected the exact encoder's refusal") from None
        return None
    assert canonical_json(value) == expected
    return expected


@settings(max_examples=300, deadline=None)
@given(values, st.integers(0, 5))
def test_the_pieces_of_a_digest_put_together_are_the_canonical_bytes(value: Any, depth: int) -> None:
    # release_digest hashes these pieces without holding the whole text
    assert b"".join(canonical_parts(value, depth)) == canonical_json(value)


@settings(max_examples=60, deadline=None)
@given(st.lists(values, min_size=5, max_size=80), st.dictionaries(keys, values, min_size=5, max_size=80), st.integers(0, 3))
def test_large_containers_split_into_pieces_still_put_together_to_the_canonical_bytes(items: list[Any], members: dict[str, Any], depth: int) -> None:
    # past a few members a container counts as a level, past many it is split at any depth
    document = {"operations": items, "compatibility": {"profiles": {"openai": members, "mcp": dict(members)}}, "é": items[:3]}
    assert b"".join(canonical_parts(document, depth)) == canonical_json(document)


@settings(max_examples=60, deadline=None)
@given(st.lists(values, min_size=1, max_size=6), st.lists(scalars, min_size=1, max_size=4), st.integers(0, 2), st.integers(65, 140))
def test_runs_of_members_and_members_of_many_members_put_together_to_the_canonical_bytes(
    base: list[Any], leaves: list[Any], depth: int, count: int
) -> None:
    # members written whole go in runs; one of many members of its own is split in turn, inside a run's container
    many_items = [leaves[i % len(leaves)] for i in range(70)]
    many_members = {f"m{i:02d}": leaves[i % len(leaves)] for i in range(70)}
    items = [(base[i % len(base)], many_items, many_members)[i % 7 % 3] for i in range(count)]
    members = {f"k{index:03d}": item for index, item in enumerate(items)}
    for value in (items, members, {"wrapped": {"a": members, "b": items}}):
        assert b"".join(canonical_parts(value, depth)) == canonical_json(value)


def test_a_release_sized_document_is_hashed_in_pieces_of_a_few_kilobytes() -> None:
    # the pieces bound what the hash holds at once (a release's whole text was the import's peak memory)
    verdicts = {f"tool_{index:04d}": {"status": "adapted", "changes": [{"path": f"/p/{index}", "change": "x" * 200}]} for index in range(2000)}
    profiles = {name: verdicts for name in ("openai", "openai-strict", "anthropic", "gemini", "bedrock", "mcp")}
    document = {"compatibility": {"profiles": profiles}, "types": {f"T{i}": {"type": "string"} for i in range(500)}, "format": "x"}
    pieces = list(canonical_parts(document))
    assert b"".join(pieces) == canonical_json(document)
    assert len(pieces) < 5000 and max(len(piece) for piece in pieces) < 32 * 1024  # 12,500 members


@settings(max_examples=200, deadline=None)
@given(values, values, st.sampled_from([2.0, -0.0, 1.5, 1e-07, 1e21, 2**60, "é"]))
def test_subtrees_shared_by_identity_get_rfc8785s_bytes_wherever_they_sit(shared: Any, other: Any, odd: Any) -> None:
    # a release shares unchanged subtrees (expansion) and equal verdicts; one may hold a float found only late in the walk
    holder = {"a": shared, "b": [shared, other, shared], "c": {"d": shared}}
    late = {"first": holder, "last": {"odd": odd, "again": holder}, "é": [odd]}
    for value in (holder, late, [holder, holder]):
        expected = _assert_as_rfc8785(value)
        if expected is not None:
            assert b"".join(canonical_parts(value)) == expected


def test_values_of_subclassed_types_go_the_exact_way() -> None:
    # the fast path takes exact types only: a subclass's own methods are rfc8785's to call
    class Text(str):
        pass

    class Number(int):
        pass

    value = {"a": Text("x"), "b": Number(3), "c": (1, 2.0), "d": [True, None, -(2**53) + 1]}
    assert canonical_json(value) == bytes(rfc8785.dumps(value))


def test_a_cycle_still_ends_in_recursion_error() -> None:
    looped: list[Any] = []
    looped.append(looped)
    linked: dict[str, Any] = {"a": 1.5}
    linked["self"] = linked
    for value in (looped, linked, {"x": [looped]}):
        with pytest.raises(RecursionError):
            canonical_json(value)
        with pytest.raises(RecursionError):
            b"".join(canonical_parts(value))


def test_keys_beyond_ascii_sort_as_utf16_does() -> None:
    # keys are sorted by UTF-16 code units: a character beyond the BMP (a surrogate pair) sorts before U+E000-U+FFFF
    for value in (
        {"é": 1, "z": 2, "\ufb01": 3, "a": "\U0001f600"},
        {"\U0001f600": 1, "\ufb01": 2},
        {"x": {"\U0001f600": 1, "\ufb01": [2.0]}, "é": {"\uffff": 0, "\ue000": 1}},
    ):
        assert canonical_json(value) == bytes(rfc8785.dumps(value))
        assert b"".join(canonical_parts(value, 0)) == bytes(rfc8785.dumps(value))
