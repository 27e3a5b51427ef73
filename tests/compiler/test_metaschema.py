"""The compiler's own metaschema check agrees with jsonschema's Draft 2020-12 ``check_schema``.

Agreement is held on generated schemas and on hand-written ones, accepted and refused, over every
keyword the checker gives a rule of its own (read from its code): a keyword added to the checker
without a case here fails :func:`test_every_keyword_the_checker_handles_is_generated_and_hand_written`.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
from datetime import date
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from tests.corpus import CORPUS

from skillhouse.compiler import metaschema
from skillhouse.compiler.metaschema import schema_problem

EXAMPLES = 3000 if os.environ.get("SKILLHOUSE_FUZZ") == "long" else 400

safe_ints = st.integers(-(2**53) + 1, 2**53 - 1)
json_scalars = st.none() | st.booleans() | safe_ints | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6)
json_values = st.recursive(
    json_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3), max_leaves=6
)
KEYWORDS = [
    # core
    "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
    "$recursiveRef", "$recursiveAnchor", "definitions", "dependencies",
    # applicator and unevaluated
    "prefixItems", "items", "contains", "additionalProperties", "properties", "patternProperties",
    "dependentSchemas", "propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not",
    "unevaluatedItems", "unevaluatedProperties",
    # validation
    "type", "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
    "maxProperties", "minProperties", "required", "dependentRequired",
    # meta-data, format and content
    "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples", "format",
    "contentEncoding", "contentMediaType", "contentSchema",
    # outside the vocabularies: any JSON is allowed
    "nullable", "x-extension", "discriminator",
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
        st.dictionaries(st.sampled_from(["a", "b"]), st.lists(st.sampled_from(["a", "b", "c"]), max_size=3), max_size=2),
        st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
        safe_ints,
        st.floats(-3, 3, allow_nan=False),
        st.sampled_from(["^[a-z]+$", "(", "date-time", "A_b", "#frag", "x#y", "#meta", "meta", "1meta", "a b", "#/$defs/a",
                         "application/json", "base64"]),
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


@pytest.mark.fuzz  # its name has no "fuzz" in it: the marker is what puts it in `make fuzz`, with EXAMPLES' long count
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(schemas)
def test_the_fast_check_agrees_with_jsonschema(schema: Any) -> None:
    assert (schema_problem(schema) is None) == jsonschema_accepts(schema), json.dumps(schema)


ACCEPTED: list[Any] = [
    {"$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}}, "$ref": "#/$defs/node"},
    {"$id": "https://example.test/tree", "$dynamicAnchor": "node", "type": "object",
     "properties": {"children": {"type": "array", "items": {"$dynamicRef": "#node"}}}},
    {"if": {"properties": {"kind": {"const": "card"}}, "required": ["kind"]}, "then": {"required": ["number"]},
     "else": {"not": {"required": ["number"]}}},
    {"allOf": [{"properties": {"a": {"type": "string"}}}], "unevaluatedProperties": False},
    {"prefixItems": [{"type": "integer"}], "unevaluatedItems": {"type": "string"}},
    {"dependentSchemas": {"card": {"required": ["billing"]}}, "dependentRequired": {"card": ["cvc", "expiry"]}},
    {"dependencies": {"a": ["b"], "c": {"required": ["d"]}}, "definitions": {"d": {"type": "integer"}}},
    {"type": "string", "contentEncoding": "base64", "contentMediaType": "application/json",
     "contentSchema": {"type": "object", "required": ["id"]}},
    {"type": ["integer", "null"], "minimum": 0, "maximum": 10, "exclusiveMinimum": -1, "exclusiveMaximum": 11,
     "multipleOf": 0.5, "enum": [1, 2, None], "const": 1, "default": 1},
    {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-z]+$", "format": "email"},
    {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3, "uniqueItems": True,
     "contains": {"const": "x"}, "minContains": 1, "maxContains": 2},
    {"type": "object", "properties": {"a": {}}, "patternProperties": {"^x-": {}}, "additionalProperties": False,
     "propertyNames": {"maxLength": 8}, "minProperties": 1, "maxProperties": 4, "required": ["a"]},
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.test/s", "$anchor": "top",
     "$comment": "c", "$vocabulary": {"https://json-schema.org/draft/2020-12/vocab/core": True}, "title": "T",
     "description": "D", "deprecated": False, "readOnly": True, "writeOnly": False, "examples": [1, "one"]},
    {"anyOf": [{"type": "string"}, True], "oneOf": [{"type": "integer"}, {"type": "null"}], "allOf": [{}], "not": False},
    {"$recursiveAnchor": "node", "$recursiveRef": "#", "nullable": True, "x-extension": {"any": ["json", 1]}},
]

# each refuses for the value of its one top-level keyword
REFUSED: list[dict[str, Any]] = [
    {"$ref": 1}, {"$dynamicRef": ["#node"]}, {"$dynamicAnchor": "#node"}, {"$dynamicAnchor": "1node"},
    {"$anchor": "a b"}, {"$id": "https://example.test/s#frag"}, {"$schema": 5}, {"$comment": False},
    {"$vocabulary": {"https://example.test/v": 1}}, {"$defs": []}, {"$defs": {"a": 1}}, {"definitions": {"a": "x"}},
    {"$recursiveAnchor": True}, {"$recursiveRef": 1},
    {"if": "x"}, {"then": 1}, {"else": []}, {"unevaluatedProperties": "no"}, {"unevaluatedItems": 0},
    {"dependentSchemas": {"a": 1}}, {"dependentSchemas": []}, {"dependentRequired": {"a": "b"}},
    {"dependentRequired": {"a": ["b", "b"]}}, {"dependencies": {"a": 3}}, {"dependencies": {"a": ["b", "b"]}},
    {"contentSchema": "json"}, {"contentMediaType": 1}, {"contentEncoding": None},
    {"type": "strin"}, {"type": []}, {"type": ["string", "string"]}, {"minimum": "0"}, {"maximum": True},
    {"exclusiveMinimum": None}, {"exclusiveMaximum": []}, {"multipleOf": 0}, {"multipleOf": -1}, {"enum": 1},
    {"minLength": -1}, {"maxLength": 1.5}, {"minItems": "1"}, {"maxItems": -2}, {"minContains": -1},
    {"maxContains": 0.5}, {"minProperties": True}, {"maxProperties": -1}, {"pattern": "("},
    {"patternProperties": {"(": {}}}, {"format": 1}, {"title": 2}, {"description": []}, {"items": 1},
    {"prefixItems": []}, {"contains": "x"}, {"additionalProperties": "no"}, {"properties": {"a": 1}},
    {"propertyNames": 1}, {"required": ["a", "a"]}, {"required": "a"}, {"uniqueItems": "yes"}, {"deprecated": 0},
    {"readOnly": "true"}, {"writeOnly": None}, {"examples": {}}, {"allOf": []}, {"anyOf": [1]}, {"oneOf": {}},
    {"not": "x"},
]

# where a subschema sits: a refused schema must be refused there too
CONTAINERS = [
    lambda s: {"properties": {"p": s}}, lambda s: {"items": s}, lambda s: {"prefixItems": [True, s]},
    lambda s: {"$defs": {"d": s}}, lambda s: {"if": s}, lambda s: {"then": s}, lambda s: {"else": s},
    lambda s: {"unevaluatedProperties": s}, lambda s: {"unevaluatedItems": s}, lambda s: {"dependentSchemas": {"a": s}},
    lambda s: {"contentSchema": s}, lambda s: {"anyOf": [s]}, lambda s: {"not": s}, lambda s: {"dependencies": {"a": s}},
]

# the metaschema takes any JSON value for these; only the release hash refuses some (tested below)
ANY_VALUE = {"const", "default"}


def checker_keywords() -> set[str]:
    """Every keyword the checker's walk gives a rule of its own: its table of keyword kinds, and what its
    code compares ``key`` with (``key == ...``, ``key in ...``)."""
    walk = next(n for n in ast.parse(inspect.getsource(metaschema)).body if isinstance(n, ast.FunctionDef) and n.name == "_schema")
    found: set[str] = set(metaschema._KIND)
    for node in ast.walk(walk):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "key":
            for compared in node.comparators:
                if isinstance(compared, ast.Constant):
                    found.add(compared.value)
                elif isinstance(compared, ast.Tuple):
                    found.update(item.value for item in compared.elts if isinstance(item, ast.Constant))
                elif isinstance(compared, ast.Name):
                    found.update(getattr(metaschema, compared.id))
    return found


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*(_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_keys(v) for v in value))
    return set()


def test_every_keyword_the_checker_handles_is_generated_and_hand_written() -> None:
    handled = checker_keywords()
    # the reading of the code finds the keywords of every kind of rule, not a few
    assert {"$ref", "$dynamicRef", "if", "unevaluatedItems", "dependentSchemas", "contentSchema", "minLength", "type"} <= handled
    assert sorted(handled - set(KEYWORDS)) == [], "generate these in KEYWORDS"
    assert sorted(handled - _keys(ACCEPTED)) == [], "write an accepted schema with these"
    assert sorted(handled - ANY_VALUE - {key for schema in REFUSED for key in schema}) == [], "write a refused schema for these"


@pytest.mark.parametrize("schema", ACCEPTED, ids=[",".join(list(s)[:3]) for s in ACCEPTED])
def test_hand_written_schemas_are_accepted_by_both(schema: Any) -> None:
    assert (schema_problem(schema), jsonschema_accepts(schema)) == (None, True)


@pytest.mark.parametrize("schema", REFUSED, ids=[json.dumps(s) for s in REFUSED])
def test_hand_written_schemas_are_refused_by_both_at_their_keyword_and_inside_every_subschema(schema: dict[str, Any]) -> None:
    (keyword,) = schema
    problem = schema_problem(schema)
    assert problem is not None and problem.startswith(f"at {keyword}"), problem
    assert not jsonschema_accepts(schema)
    for contain in CONTAINERS:
        nested = contain(schema)
        assert schema_problem(nested) is not None and not jsonschema_accepts(nested), json.dumps(nested)


@pytest.mark.parametrize(
    ("value", "where"),
    [({"maximum": 2**63 - 1}, "at maximum: "), ({"enum": [float("inf")]}, "at enum/0: "),
     ({"default": {"when": date(2024, 1, 1)}}, "at default/when: ")],
    ids=["huge-integer", "infinity", "date"],
)
def test_values_the_release_hash_cannot_carry_are_refused(value: dict[str, Any], where: str) -> None:
    problem = schema_problem({"type": "object", **value})
    assert problem is not None and problem.startswith(where), problem


def test_real_component_schemas_are_accepted() -> None:
    spec = json.loads((CORPUS / "readme-3.1-schema-types.json").read_text())
    components = spec.get("components", {}).get("schemas", {})
    assert components
    for name, schema in components.items():
        assert (schema_problem(schema), jsonschema_accepts(schema)) == (None, True), name


def test_a_type_list_holding_an_object_is_a_problem_not_a_crash() -> None:
    assert schema_problem({"type": [{}]}) == "at type/0: {} is not a JSON Schema type"
    assert schema_problem({"type": ["string", ["null"]]}) == "at type/1: ['null'] is not a JSON Schema type"


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


def test_scalars_and_lists_of_scalars_taken_at_once_are_judged_as_the_located_walk_judges_them() -> None:
    class Text(str):
        pass

    assert schema_problem({"enum": ["é", Text("x"), True, None, 2**53 - 1, -(2**53 - 1), 0.5, -0.0]}) is None
    assert schema_problem({"enum": ["a", 2**53]}) == (
        "at enum/1: 9007199254740992 is beyond ±(2**53 - 1) and cannot be carried exactly in JSON; use a float or a string"
    )
    assert schema_problem({"default": float("nan")}) == "at default: nan is not a JSON number"
    assert schema_problem({"examples": [[1, float("-inf")]]}) == "at examples/0/1: -inf is not a JSON number"
    assert schema_problem({"x-when": [date(2024, 1, 1)]}) == "at x-when/0: date is not a JSON value (quote dates and times)"


def test_a_value_is_refused_one_level_past_the_deepest_allowed() -> None:
    def nested(levels: int) -> Any:
        value: Any = "deep"
        for _ in range(levels):
            value = [value]
        return value

    # the schema's keyword is one step from its root, each list one more: 199 lists reach step 200
    assert schema_problem({"default": nested(199)}) is None
    assert schema_problem({"default": nested(200)}) == "at default" + "/0" * 200 + ": is nested too deeply"
    assert schema_problem({"enum": nested(199)}) is None
    assert schema_problem({"enum": nested(200)}) is not None
