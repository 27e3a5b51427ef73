"""A name the wizard's cleaning would keep as it is is recognised by one match (``naming._CLEAN``) and
kept: the result is always what the full cleaning gives."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from skillhouse.openapi import naming

_SYMBOLS = {"<": "_lt", ">": "_gt", "=": "_eq", "!": "_not", "+": "_plus", "*": "_any", "@": "_at", "$": "_"}


def _cleaned_in_full(text: str) -> str:
    text = text.replace("[]", "")
    for symbol, word in _SYMBOLS.items():
        text = text.replace(symbol, word)
    return re.sub(r"_{2,}", "_", re.sub(r"[^A-Za-z0-9_-]+", "_", text)).strip("_")


_NAMES = st.text(alphabet=st.sampled_from("aZ09-_[]<>=!+*@$ .é/\n"), max_size=20) | st.text(max_size=12)


@settings(max_examples=1000, deadline=None)
@given(_NAMES)
@example("getIssue")
@example("get-issue_2")
@example("_leading")
@example("trailing_")
@example("double__underscore")
@example("é")
@example("a\n")
@example("")
def test_a_name_is_cleaned_as_in_full(text: str) -> None:
    assert naming._clean(text) == _cleaned_in_full(text)


@settings(max_examples=300, deadline=None)
@given(_NAMES, st.sampled_from(["GET", "POST"]), st.text(max_size=20))
def test_an_operation_stem_is_its_id_cleaned_else_method_and_path(operation_id: str, method: str, path: str) -> None:
    cleaned = _cleaned_in_full(operation_id) or _cleaned_in_full(f"{method.lower()}_{path}") or method.lower()
    stem = naming.operation_stem(operation_id, method, path)
    assert stem == naming.cap(cleaned + "_operation" if cleaned.lower() == "skill" else cleaned)


@settings(max_examples=300, deadline=None)
@given(_NAMES)
def test_an_argument_name_is_the_wire_name_cleaned(wire: str) -> None:
    expected = wire if re.fullmatch(r"[A-Za-z0-9_]{1,64}", wire) else naming.cap(
        re.sub(r"_{2,}", "_", _cleaned_in_full(wire).replace("-", "_")).strip("_") or "value"
    )
    assert naming.argument_name(wire) == expected
