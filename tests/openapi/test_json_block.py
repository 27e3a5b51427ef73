"""The wizard's indented JSON is the standard library's, byte for byte."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillhouse.openapi.json_block import indented_json

_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
_values = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_values, st.booleans())
def test_any_json_value_is_written_as_json_dumps_writes_it(value: Any, sort_keys: bool) -> None:
    assert indented_json(value, sort_keys=sort_keys) == json.dumps(value, indent=1, ensure_ascii=True, sort_keys=sort_keys)


@pytest.mark.parametrize(
    "value",
    [
        {1: "int key", "a": [1.5, math.inf, -math.inf]},
        {"tuple": (1, 2)},
        {"nan": math.nan, "astral": "\U0001f600\u2028\x00"},
        [[[[[[[[[[[]]]]]]]]]]],
    ],
)
def test_values_beyond_plain_json_still_match(value: Any) -> None:
    assert indented_json(value) == json.dumps(value, indent=1, ensure_ascii=True)


def test_deep_nesting_is_written_or_refused_as_json_dumps_would() -> None:
    deep: Any = "leaf"
    for _ in range(400):
        deep = {"d": deep}
    assert indented_json(deep) == json.dumps(deep, indent=1, ensure_ascii=True)


def test_a_cycle_raises_what_json_dumps_raises() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    with pytest.raises(ValueError, match="Circular"):
        indented_json(cyclic)


def test_keys_that_do_not_sort_raise_what_json_dumps_raises() -> None:
    with pytest.raises(TypeError):
        indented_json({1: 1, "a": 2}, sort_keys=True)


def test_an_end_is_joined_with_the_text() -> None:
    value = {"b": [1, 2.5, None], "a": {"c": "é"}}
    assert indented_json(value, sort_keys=True, end="\n") == json.dumps(value, indent=1, ensure_ascii=True, sort_keys=True) + "\n"
    assert indented_json({1: 1}, end="\n") == json.dumps({1: 1}, indent=1, ensure_ascii=True) + "\n"  # json.dumps' own path
