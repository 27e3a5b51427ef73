"""``one_of``: a string read from JSON or a column, as one of a ``Literal``'s values, or a clear error."""

from __future__ import annotations

from typing import Literal, get_args

import pytest

from skillhouse.json_types import one_of

Colour = Literal["red", "green"]
COLOURS: tuple[Colour, ...] = get_args(Colour)


def test_a_value_of_the_vocabulary_is_returned_as_it_is() -> None:
    assert [one_of(text, COLOURS, "colour") for text in ("green", "red")] == ["green", "red"]


@pytest.mark.parametrize("value", ["blue", "RED", "", None, 1])
def test_a_value_outside_the_vocabulary_is_refused_saying_what_is_allowed(value: object) -> None:
    with pytest.raises(ValueError, match=r"^colour .* is not one of red, green$"):
        one_of(value, COLOURS, "colour")
