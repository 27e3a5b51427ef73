"""The guest's reused JSON encoders write json.dumps's text, byte for byte, and refuse what it refuses."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillhouse.guest.translation import json_text
from skillhouse.guest.values import json_dump, made_encoder

_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(_values)
def test_json_dump_is_json_dumps(value: Any) -> None:
    assert json_dump(value) == json.dumps(value, ensure_ascii=False)


@settings(max_examples=400, deadline=None)
@given(_values)
def test_the_compact_sorted_encoder_is_json_dumps(value: Any) -> None:
    compact = made_encoder((",", ":"), sort_keys=True, allow_nan=True)
    assert compact(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


@pytest.mark.parametrize("value", [math.nan, [math.inf], {"a": -math.inf}])
def test_a_non_finite_number_is_refused_where_json_dumps_refuses_it(value: Any) -> None:
    with pytest.raises(ValueError):
        json_text(value)
    with pytest.raises(ValueError):
        json.dumps(value, allow_nan=False)
