"""Arbitrary and mutated OpenAPI documents never raise: the spec is refused or each operation reported.

No input may meet an exception the wizard does not expect: such an operation is still skipped (and
the import goes on) but as a ``converter-error``, a bug, so every test here asserts there is none.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillhouse.openapi import ImportResult, SpecError, import_openapi, spec_from_data
from skillhouse.openapi.wizard import HTTP_METHODS

EXAMPLES = 400 if os.environ.get("SKILLHOUSE_FUZZ") == "long" else 60

# a lone surrogate: what an unpaired "\ud800" escape in a JSON spec parses to, and no UTF-8 text can hold
lone_surrogates = st.builds(str.__add__, st.text(max_size=3), st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF))
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12), lone_surrogates)
keys = st.sampled_from(
    ["type", "properties", "items", "required", "$ref", "allOf", "oneOf", "anyOf", "enum", "nullable", "format",
     "pattern", "minimum", "exclusiveMinimum", "additionalProperties", "discriminator", "example", "readOnly",
     "parameters", "requestBody", "content", "schema", "name", "in", "style", "explode", "application/json",
     "multipart/form-data", "application/x-www-form-urlencoded", "operationId", "get", "post", "x", "description", "title",
     "default"]
) | st.text(max_size=6) | lone_surrogates | st.sampled_from([0, 200, True, None, b"k"])  # YAML gives keys of other types
refs = st.sampled_from(["#/components/schemas/A", "#/components/schemas/B", "#/nowhere", "other.json#/X", "#/paths", 7])
values = st.recursive(
    scalars | refs.map(lambda r: {"$ref": r}),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=5),
    max_leaves=30,
)


def assert_every_operation_reported_without_converter_errors(result: ImportResult, document: Any) -> None:
    """One outcome per operation the document names, none of them a wizard bug, and the skill compiles."""
    assert [o.as_dict() for o in result.report.converter_errors()] == []
    item_paths = document.get("paths") or {}
    expected = sum(
        1 for item in item_paths.values() if isinstance(item, dict) for key in item if key in HTTP_METHODS
    )
    if all("$ref" not in item for item in item_paths.values() if isinstance(item, dict)):
        assert result.report.totals()["operations"] == expected
    assert result.compiled is not None
    totals = result.report.totals()
    assert len(result.compiled.operations) == totals["written"] + totals["adapted"]


def _document(paths: Any, schemas: Any) -> dict[str, Any]:
    return {"openapi": "3.0.0", "info": {"title": "Fuzz"}, "servers": [{"url": "https://fuzz.test"}], "paths": paths,
            "components": {"schemas": schemas}}


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(root=values)
def test_an_arbitrary_document_is_refused_as_a_spec_or_imported(root: Any) -> None:
    try:
        result = import_openapi(spec_from_data(root))
    except SpecError:
        return
    assert_every_operation_reported_without_converter_errors(result, root)


operations = st.dictionaries(st.sampled_from(["get", "post", "put", "delete", "patch", "trace"]), values, max_size=3)
paths = st.dictionaries(st.sampled_from(["/a", "/a/{id}", "/b/{x}/{y}", "/{id}.json", "/c#frag", "/d?x=1"]), operations | values, max_size=4)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paths=paths, schemas=st.dictionaries(st.sampled_from(["A", "B"]), values, max_size=2), version=st.sampled_from(["3.0.3", "3.1.0"]))
def test_mutated_operations_are_each_written_or_skipped_and_the_skill_still_compiles(paths: Any, schemas: Any, version: str) -> None:
    document = _document(paths, schemas)
    document["openapi"] = version
    result = import_openapi(spec_from_data(document))
    assert_every_operation_reported_without_converter_errors(result, document)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=st.lists(values, max_size=4), form=st.lists(values, max_size=3))
def test_mutated_swagger_parameters_never_raise(params: Any, form: Any) -> None:
    document = {"swagger": "2.0", "info": {"title": "S"}, "host": "s.test", "paths": {"/p/{id}": {"post": {"parameters": params + form}}}}
    result = import_openapi(spec_from_data(document))
    assert_every_operation_reported_without_converter_errors(result, document)
