"""A schema the wizard's rendered text shows to be within the size cap is not measured again
(``shrink.fits_as_written``): whenever the text says so, the measure agrees."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.openapi.specs import imported, openapi

from skillhouse.compiler.expansion import (
    SCHEMA_LIMIT,
    TooLarge,
    UnknownType,
    compact_size,
    expansion_size,
    new_expansions,
)
from skillhouse.openapi.json_block import indented_json
from skillhouse.openapi.shrink import expanded_size, fits_as_written

_SCALARS = st.one_of(
    st.text(max_size=40),  # every code point, lone surrogates included
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
)
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=40
)


def _measured(schema: Any) -> int | None:
    try:
        return expanded_size(schema, {})
    except UnicodeEncodeError:  # a lone surrogate: the measure raises, as the wizard's always did
        return -1


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_a_text_that_fits_is_a_schema_whose_measure_fits(schema: Any) -> None:
    text = indented_json(schema)
    if fits_as_written(text):
        size = _measured(schema)
        assert size is not None and 0 <= size <= len(text) <= SCHEMA_LIMIT


def test_characters_beyond_ascii_are_measured_in_fewer_bytes_than_their_escapes() -> None:
    schema = {"description": "é" * 2000 + "€" * 2000}
    text = indented_json(schema)
    assert fits_as_written(text)
    assert compact_size(schema) == 2000 * 2 + 2000 * 3 + len('{"description":""}') < len(text)


def test_a_character_beyond_the_basic_plane_is_left_to_the_measure() -> None:
    # written as a pair of surrogate escapes, which the text alone does not tell from a lone one
    assert not fits_as_written(indented_json({"description": "😀"}))


def test_a_lone_surrogate_is_left_to_the_measure() -> None:
    assert not fits_as_written(indented_json({"description": "a\ud800b"}))
    assert _measured({"description": "a\ud800b"}) == -1


def test_a_reference_is_left_to_the_measure() -> None:
    assert not fits_as_written(indented_json({"type": "object", "properties": {"a": {"$ref": "#/types/A"}}}))
    # a property called $ref is no reference, but its text cannot tell: measured all the same
    assert not fits_as_written(indented_json({"properties": {"$ref": {"type": "string"}}}))


def test_a_text_over_the_cap_is_measured() -> None:
    schema = {"description": "x" * SCHEMA_LIMIT}
    assert not fits_as_written(indented_json(schema))
    # its compact form alone is over the cap: the measure says so
    assert (expanded_size(schema, {}) or 0) > SCHEMA_LIMIT


def test_a_text_just_under_the_cap_fits_and_measures_under_it() -> None:
    schema = {"description": "x" * (SCHEMA_LIMIT - 100), "maximum": 1e300, "minimum": -(2**53)}
    text = indented_json(schema)
    assert fits_as_written(text)
    assert compact_size(schema) <= len(text) <= SCHEMA_LIMIT


def test_odd_texts_and_keys_the_measure_refused_are_mended_or_dropped() -> None:
    # a lone surrogate in a text is mended; a pattern key that is no string (a YAML !!binary one) is dropped
    # as an invalid pattern is: both were converter errors, raised where the size was measured
    odd = {"type": "object", "properties": {"m": {"type": "object", "patternProperties": {b"hi": {"type": "string"}, "^x": {}}}}}
    spec = openapi(
        {
            "/a": {"post": {"operationId": "odd", "requestBody": {"content": {"application/json": {"schema": odd}}}}},
            "/b": {"get": {"operationId": "lone", "parameters": [{"name": "s", "in": "query", "schema": {"type": "string", "description": "a\ud800b"}}]}},
            "/c": {"get": {"operationId": "pair", "parameters": [{"name": "s", "in": "query", "schema": {"type": "string", "description": "a😀b"}}]}},
        }
    )
    result, ops = imported(spec)
    assert sorted(ops) == ["lone", "odd", "pair"]
    assert ops["lone"]["schema"]["properties"]["s"]["description"] == "a?b"
    assert ops["odd"]["schema"]["properties"]["m"]["patternProperties"] == {"^x": {}}
    assert result.report.converter_errors() == []


_NAMES = ["A", "B", "C"]
_REF = st.builds(lambda name: {"$ref": f"#/types/{name}"}, st.sampled_from([*_NAMES, "Missing"]))
_LEAF_SCHEMAS = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["string", "integer"])}, optional={"description": st.text(max_size=12)}),
    _REF,
    # a reference with a keyword beside it, one in data (not a reference), one that is no string
    st.builds(lambda ref, text: {**ref, "description": text}, _REF, st.text(max_size=5)),
    st.fixed_dictionaries({"enum": st.lists(st.one_of(_REF, st.text(max_size=4), st.floats()), max_size=3)}),
    st.fixed_dictionaries({"default": _REF, "examples": st.lists(_REF, max_size=2)}),
    st.just({"$ref": 5}),
    st.just({"$ref": None, "type": "string"}),
    st.booleans(),
)
_TREES = st.recursive(
    _LEAF_SCHEMAS,
    lambda inner: st.one_of(
        st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.dictionaries(st.sampled_from(["a", "$ref", "é", "b"]), inner, max_size=4)},
            optional={"additionalProperties": st.one_of(st.booleans(), inner), "description": st.text(max_size=8)},
        ),
        st.fixed_dictionaries({"type": st.just("array"), "items": inner}),
        st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"patternProperties": st.dictionaries(st.text(max_size=3), inner, max_size=2)}),
        st.fixed_dictionaries({"x-extension": st.one_of(inner, st.lists(inner, max_size=2))}),
    ),
    max_leaves=14,
)


@settings(max_examples=400, deadline=None)
@given(types=st.fixed_dictionaries({name: _TREES for name in _NAMES}), schemas=st.lists(_TREES, min_size=1, max_size=3))
def test_a_schema_with_references_measures_as_its_whole_expansion(types: dict[str, Any], schemas: list[Any]) -> None:
    # one store of expansions for several schemas, as the wizard keeps for the operations of an import;
    # types refer to one another (cycles too), and to none
    expansions, measured = new_expansions(), new_expansions()
    for schema in schemas:
        # measured by the whole expansion, sharing its own store (which expansion of a type in a cycle a
        # store keeps depends on where the type is first met: the walk must keep what the expansion keeps)
        try:
            whole: int | None = expansion_size(schema, types, measured)
        except (TooLarge, UnknownType):
            whole = None
        assert expanded_size(schema, types, expansions) == whole
        assert {name: kept.value for name, kept in expansions.items()} == {name: kept.value for name, kept in measured.items()}


def test_a_large_type_used_by_a_small_schema_is_measured_whole() -> None:
    types: dict[str, Any] = {"Big": {"type": "object", "properties": {f"p{i}": {"description": "x" * 100} for i in range(300)}}}
    schema = {"type": "object", "properties": {"big": {"$ref": "#/types/Big"}, "n": {"type": "integer"}}}
    expansions = new_expansions()
    assert expanded_size(schema, types, expansions) == expanded_size(schema, types) is not None
    assert (expanded_size(schema, types, expansions) or 0) > SCHEMA_LIMIT


def test_a_type_too_large_to_expand_is_none_either_way() -> None:
    # a DAG of types doubling at each level: its expansion is refused long before it is built
    types: dict[str, Any] = {"T0": {"type": "string"}}
    for level in range(1, 30):
        types[f"T{level}"] = {"anyOf": [{"$ref": f"#/types/T{level - 1}"}, {"$ref": f"#/types/T{level - 1}"}]}
    schema = {"properties": {"deep": {"$ref": "#/types/T29"}}}
    assert expanded_size(schema, types, new_expansions()) is None
    assert expanded_size(schema, types) is None


def test_a_lone_surrogate_beside_a_reference_raises_as_the_whole_expansion_does() -> None:
    types: dict[str, Any] = {"A": {"type": "string", "description": "x\ud800"}}
    for schema in ({"properties": {"a": {"$ref": "#/types/A"}}}, {"description": "\udfff", "items": {"$ref": "#/types/A"}}):
        with pytest.raises(UnicodeEncodeError) as whole:
            expansion_size(schema, types, new_expansions())
        with pytest.raises(UnicodeEncodeError) as parts:
            expanded_size(schema, types, new_expansions())
        assert str(parts.value) == str(whole.value)


def test_a_schema_over_the_cap_leaves_the_store_as_the_whole_expansion_does() -> None:
    # types in a cycle, met first by a schema over the cap: what the store keeps for them is what the
    # expansion of the whole schema keeps, so the next schema measures as it always did
    big = {f"p{i}": {"type": "string", "description": "x" * 100} for i in range(300)}
    types: dict[str, Any] = {
        "Big": {"type": "object", "properties": {**big, "a": {"$ref": "#/types/A"}}},
        "A": {"type": "array", "items": {"$ref": "#/types/B"}},
        "B": {"anyOf": [{"$ref": "#/types/A"}, {"type": "string"}]},
    }
    first = {"properties": {"b": {"$ref": "#/types/B"}, "big": {"$ref": "#/types/Big"}, "a": {"$ref": "#/types/A"}}}
    then = {"properties": {"a": {"$ref": "#/types/A"}, "b": {"$ref": "#/types/B"}}}
    expansions, measured = new_expansions(), new_expansions()
    for schema in (first, then, first):
        assert expanded_size(schema, types, expansions) == expansion_size(schema, types, measured)
        assert {name: kept.value for name, kept in expansions.items()} == {name: kept.value for name, kept in measured.items()}
