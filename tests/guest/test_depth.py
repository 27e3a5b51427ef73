"""The nesting guard before every parse of untrusted JSON counts as a plain character walk does."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from skillhouse.guest.depth import nesting_depth, nests_deeper_than


def walked_depth(text: str) -> int:
    """Every character in turn: the definition the guard must agree with."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\[]{}\n', max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='k"\\[{', max_size=3), inner, max_size=3),
    max_leaves=20,
)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet='ab"\\[]{} ', max_size=40))
def test_any_text_nests_as_the_character_walk_counts(text: str) -> None:
    assert nesting_depth(text) == walked_depth(text)
    for limit in (0, 1, 2, 3):
        assert nests_deeper_than(text, limit) == (walked_depth(text) > limit)


@settings(max_examples=500, deadline=None)
@given(_json)
def test_json_texts_nest_as_the_character_walk_counts(value: Any) -> None:
    text = json.dumps(value)
    assert nesting_depth(text) == walked_depth(text)
