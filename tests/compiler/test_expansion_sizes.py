"""expansion_size: the size of an expansion, each kept type measured once, equal to compact_size of the expansion."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.corpus import unpacked_corpus

from skillhouse.compiler.expansion import (
    TooLarge,
    UnknownType,
    compact_size,
    expand_types,
    expansion_size,
    new_expansions,
)
from skillhouse.openapi import import_openapi, shrink

_NAMES = ["A", "B", "C", "D"]
_SCALARS = st.one_of(st.text(max_size=8), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none())
_LEAF = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "number"])}, optional={"description": st.text(max_size=20)}),
    st.builds(lambda name: {"$ref": f"#/types/{name}"}, st.sampled_from(_NAMES)),
    st.builds(lambda name, note: {"$ref": f"#/types/{name}", "description": note}, st.sampled_from(_NAMES), st.text(max_size=10)),
    st.fixed_dictionaries({"enum": st.lists(_SCALARS, max_size=4)}),
    st.booleans(),
)
_SCHEMAS = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.fixed_dictionaries({"type": st.just("object"), "properties": st.dictionaries(st.text(max_size=6), inner, max_size=4)}),
        st.fixed_dictionaries({"type": st.just("array"), "items": inner}),
        st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=3)}),
    ),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(types=st.fixed_dictionaries({name: _SCHEMAS for name in _NAMES}), schemas=st.lists(_SCHEMAS, min_size=1, max_size=4))
def test_each_expansion_measures_as_its_whole_compact_json(types: dict[str, Any], schemas: list[Any]) -> None:
    # two stores kept alike, each shared by the schemas as by one package's operations (an expansion
    # of recursive types depends on what the store already holds, so each measure has its own)
    encoded, measured = new_expansions(), new_expansions()
    for schema in schemas:
        try:
            expanded = expand_types(schema, types, encoded)
        except (TooLarge, UnknownType, RecursionError):
            with pytest.raises((TooLarge, UnknownType, RecursionError)):
                expansion_size(schema, types, measured)
            continue
        assert expansion_size(schema, types, measured) == compact_size(expanded)


@pytest.mark.parametrize("spec", ["openai.yaml", "jira-platform.json"])
def test_the_corpus_operations_measure_the_same_either_way(spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    measured: list[int] = []

    def checked(schema: Any, types: dict[str, Any], expansions: Any, own: int | None = None) -> int:
        size = expansion_size(schema, types, expansions, own)
        assert size == compact_size(expand_types(schema, types, expansions))
        measured.append(size)
        return size

    monkeypatch.setattr(shrink, "expansion_size", checked)  # the wizard's fit to the size cap
    result = import_openapi(unpacked_corpus() / spec)
    assert result.compiled is not None and measured


def test_what_has_no_reference_is_the_input_s_own_object_not_a_copy() -> None:
    # the expanded schemas share with their types what is the same in both: no copy held to the end of an import
    note = {"type": "string", "description": "A note."}
    tags = {"type": "array", "items": {"type": "string"}, "enum": [["a"], ["b"]]}
    types = {"Note": {"type": "object", "properties": {"note": note, "tags": tags}}, "Holder": {"type": "object", "properties": {"held": {"$ref": "#/types/Note"}, "own": note}}}
    schema = {"type": "object", "properties": {"holder": {"$ref": "#/types/Holder"}, "plain": tags}, "required": ["holder"]}
    expanded = expand_types(schema, types, new_expansions())
    assert expanded == {**schema, "properties": {"holder": {"type": "object", "properties": {"held": types["Note"], "own": note}}, "plain": tags}}
    assert expanded is not schema and expanded["required"] is schema["required"] and expanded["properties"]["plain"] is tags
    holder = expanded["properties"]["holder"]
    assert holder is not types["Holder"] and holder["properties"]["held"] is types["Note"] and holder["properties"]["own"] is note
