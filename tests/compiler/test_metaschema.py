"""The compiler's own metaschema check agrees with jsonschema's Draft 2020-12 ``check_schema``."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from tests.corpus import CORPUS

from skillhouse.compiler.metaschema import schema_problem

EXAMPLES = 3000 if os.environ.get("SKILLHOUSE_FUZZ") == "long" else 400

safe_ints = st.integers(-(2**53) + 1, 2**53 - 1)
json_scalars = st.none() | st.booleans() | safe_ints | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6)
json_values = st.recursive(
    json_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3), max_leaves=6
)
KEYWORDS = [
    "type", "properties", "required", "items", "enum", "const", "anyOf", "oneOf", "allOf", "not",
    "minimum", "maximum", "exclusiveMinimum", "multipleOf", "minLength", "maxItems", "pattern", "format",
    "additionalProperties", "patternProperties", "prefixItems", "uniqueItems", "description", "examples",
    "default", "$defs", "dependentRequired", "dependencies", "$anchor", "$id", "deprecated", "nullable",
    "x-extension", "contains", "minContains", "propertyNames",
]
type_names = st.sampled_from(["string", "integer", "number", "boolean", "object", "array", "null", "strin"])


def keyword_values(schemas: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Plausible and implausible values for any keyword, so both verdicts are exercised."""
    return st.one_of(
        schemas,
        type_names,
        st.lists(type_names, max_size=3),
        st.lists(schemas, max_size=2),
        st.dictionaries(st.sampled_from(["a", "b", "^x", "("]), schemas, max_size=2),
        st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
        safe_ints,
        st.floats(-3, 3, allow_nan=False),
        st.sampled_from(["^[a-z]+$", "(", "date-time", "A_b", "#frag", "x#y"]),
        json_values,
    )


schemas = st.recursive(
    st.booleans() | st.just({}),
    lambda inner: st.dictionaries(st.sampled_from(KEYWORDS), keyword_values(inner), max_size=4),
    max_leaves=12,
)


def jsonschema_accepts(schema: Any) -> bool:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        return False
    return True


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(schemas)
def test_the_fast_check_agrees_with_jsonschema(schema: Any) -> None:
    assert (schema_problem(schema) is None) == jsonschema_accepts(schema), json.dumps(schema)


@pytest.mark.parametrize(
    "value",
    [{"maximum": 2**63 - 1}, {"enum": [float("inf")]}, {"default": {"when": __import__("datetime").date(2024, 1, 1)}}],
    ids=["huge-integer", "infinity", "date"],
)
def test_values_the_release_hash_cannot_carry_are_refused(value: dict[str, Any]) -> None:
    assert schema_problem({"type": "object", **value}) is not None


def test_real_component_schemas_are_accepted() -> None:
    spec = json.loads((CORPUS / "readme-3.1-schema-types.json").read_text())
    for name, schema in spec.get("components", {}).get("schemas", {}).items():
        assert (schema_problem(schema) is None) == jsonschema_accepts(schema), name


def test_a_type_list_holding_an_object_is_a_problem_not_a_crash() -> None:
    assert schema_problem({"type": [{}]}) is not None
    assert schema_problem({"type": ["string", ["null"]]}) is not None


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(schemas, schemas)
def test_fuzz_any_schema_in_an_operation_or_a_type_gives_a_release_or_located_errors(prop: Any, shared: Any) -> None:
    from skillhouse.compiler import compile_package
    from skillhouse.skill import read_package

    schema = {"type": "object", "properties": {"a": prop, "b": {"$ref": "#/types/T"}}}
    files = {
        "SKILL.md": "---\nname: fz\ndescription: x\n---\n",
        "op.md": "---\noperation:\n  method: POST\n  url: https://a.test/x\n  schema: " + json.dumps(json.dumps(schema)) + "\n---\n",
        "types.json": json.dumps({"T": shared}),
    }
    package, read_errors = read_package("fz", files)
    compiled, errors = compile_package(package)
    assert (compiled is None) == bool(read_errors or errors)
    for error in read_errors + errors:
        assert error.line >= 1 and error.code
