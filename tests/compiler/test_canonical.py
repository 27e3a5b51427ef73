"""The fast canonical JSON writes exactly the bytes ``rfc8785`` writes."""

from __future__ import annotations

from typing import Any

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
    try:
        expected = bytes(rfc8785.dumps(nested))
    except Exception as exc:
        refused = type(exc)
        try:
            canonical_json(nested)
        except Exception as ours:
            assert type(ours) is refused
        else:
            raise AssertionError("expected the exact encoder's refusal") from None
        return
    assert canonical_json(nested) == expected


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
