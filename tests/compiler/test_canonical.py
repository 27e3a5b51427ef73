"""The fast canonical JSON writes exactly the bytes ``rfc8785`` writes."""

from __future__ import annotations

from typing import Any

import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from skillhouse.compiler import canonical_json

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
