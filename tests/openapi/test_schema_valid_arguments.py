"""The schema says what translation enforces: arguments valid for a tool's published schema always become
a request. Over every operation of every corpus spec (hypothesis-jsonschema draws instances of the
schema the model sees, tests/openapi/schema_instances.py) and over specs made for the wire's limits
(path segments, header values, delimited query lists)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from jsonschema import Draft202012Validator
from tests.openapi.schema_instances import valid_instances
from tests.openapi.specs import SPECS, import_of, imported, openapi

from skillhouse.guest import InvalidArguments, build_request

LONG = os.environ.get("SKILLHOUSE_FUZZ") == "long"
EXAMPLES_PER_OPERATION = 10 if LONG else 2
# The corpus has about 2,200 operations. The default run checks every operation of a spec of up to this many
# and an even spread of this many of a larger one (the same ones each run, about 750 in all, a few seconds);
# ``make fuzz`` (SKILLHOUSE_FUZZ=long) checks them all, with more arguments each.
OPERATIONS_PER_SPEC = None if LONG else 80
_SETTINGS = settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def _never_refused(operation: dict[str, Any], examples: int = EXAMPLES_PER_OPERATION) -> int:
    """Check ``examples`` drawn argument sets; how many were valid (the rest are discarded)."""
    validator = Draft202012Validator(operation["schema"])
    valid = 0

    @settings(_SETTINGS, max_examples=examples)
    @given(valid_instances(operation["schema"]))
    def check(arguments: Any) -> None:
        nonlocal valid
        if not validator.is_valid(arguments):
            return  # the builder missed: not a case for this property
        valid += 1
        try:
            build_request(operation, arguments)
        except InvalidArguments as refused:
            raise AssertionError(
                f"{operation['tool_name']}: schema-valid arguments refused: {[v.document() for v in refused.violations]}"
            ) from None

    try:
        check()
    except Unsatisfiable:
        return 0  # every draw missed (a schema no builder of this size satisfies): counted by the caller
    return valid


def spread(items: list[Any], count: int | None) -> list[Any]:
    """``count`` of ``items`` evenly spaced from the first (all of them when ``count`` is None or not fewer)."""
    if count is None or len(items) <= count:
        return items
    return [items[i * len(items) // count] for i in range(count)]


@pytest.mark.fuzz
@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_arguments_valid_for_each_corpus_tools_schema_are_never_refused(path: Path) -> None:
    result = import_of(path)
    assert result.compiled is not None
    operations = spread(result.compiled.document["operations"], OPERATIONS_PER_SPEC)
    assert operations
    missed = [op["tool_name"] for op in operations if _never_refused(op) == 0]
    # nearly every operation got valid arguments drawn, so the property is checked, not skipped; the few
    # missed are schemas nothing satisfies, or nearly (readme-3.1's "quirks": allOf of string and integer)
    assert len(missed) <= max(2, len(operations) // 50), missed


def _op(parameters: list[dict[str, Any]], path: str = "/things/{id}", method: str = "get") -> dict[str, Any]:
    spec = openapi({path: {method: {"operationId": "op", "parameters": parameters, "responses": {"200": {"description": "ok"}}}}})
    _, operations = imported(spec)
    return operations["op"]


PATH_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}


def test_a_path_argument_publishes_that_it_is_one_non_empty_segment_other_than_a_dot_segment() -> None:
    operation = _op([PATH_ID])
    validator = Draft202012Validator(operation["schema"])
    for refused in ("", ".", "..", "a/b", "a\\b", "line\nbreak", "tab\there", "del\x7f"):
        assert not validator.is_valid({"id": refused}), refused
        with pytest.raises(InvalidArguments):
            build_request(operation, {"id": refused})
    for accepted in ("...", ".a", "a.", "ü ?#%", "0"):
        assert validator.is_valid({"id": accepted})
        build_request(operation, {"id": accepted})
    _never_refused(operation, examples=60)


def test_a_path_argument_with_its_own_pattern_and_exclusion_keeps_both() -> None:
    schema = {"type": "string", "pattern": "^[a-z.]+$", "not": {"const": "abc"}}
    operation = _op([{**PATH_ID, "schema": schema}])
    validator = Draft202012Validator(operation["schema"])
    assert not validator.is_valid({"id": "abc"}) and not validator.is_valid({"id": ".."})
    assert validator.is_valid({"id": "a.b"})
    _never_refused(operation, examples=40)


def test_numeric_and_enumerated_path_arguments_are_left_as_declared() -> None:
    operation = _op(
        [
            {**PATH_ID, "schema": {"type": "integer"}},
            {"name": "kind", "in": "path", "required": True, "schema": {"type": "integer", "enum": [1, 2]}},
        ],
        path="/things/{id}/{kind}",
    )
    assert operation["schema"]["properties"]["id"] == {"type": "integer"}
    assert operation["schema"]["properties"]["kind"] == {"type": "integer", "enum": [1, 2]}


def test_a_header_argument_publishes_that_it_holds_no_line_break_or_control_character() -> None:
    operation = _op(
        [
            {"name": "X-Trace", "in": "header", "required": True, "schema": {"type": "string"}},
            {"name": "X-Tags", "in": "header", "schema": {"type": "array", "items": {"type": "string"}}},
        ],
        path="/things",
    )
    validator = Draft202012Validator(operation["schema"])
    trace, tags = (a["name"] for a in operation["arguments"] if a["in"] == "header")
    for refused in ("a\r\nInjected: 1", "a\n", "\x00", "é"):
        assert not validator.is_valid({trace: refused}), refused
        assert not validator.is_valid({trace: "ok", tags: [refused]}), refused
        with pytest.raises(InvalidArguments):
            build_request(operation, {trace: refused})
    assert validator.is_valid({trace: "printable \t text", tags: ["a", "b"]})
    _never_refused(operation, examples=60)


@pytest.mark.parametrize(
    ("style", "separator"), [("form", ","), ("pipeDelimited", "|"), ("spaceDelimited", " ")]
)
def test_items_of_a_delimited_query_list_cannot_hold_their_separator(style: str, separator: str) -> None:
    parameter = {
        "name": "tags",
        "in": "query",
        "style": style,
        "explode": False,
        "schema": {"type": "array", "items": {"type": "string"}},
    }
    operation = _op([parameter], path="/things")
    validator = Draft202012Validator(operation["schema"])
    ambiguous = {"tags": ["a", f"b{separator}c"]}
    assert not validator.is_valid(ambiguous)
    with pytest.raises(InvalidArguments) as refused:
        build_request(operation, ambiguous)
    assert [(v.path, v.problem) for v in refused.value.violations] == [("$.tags", "separator-in-item")]
    assert validator.is_valid({"tags": ["a", "b"]})
    _never_refused(operation, examples=60)


def test_an_exploded_query_list_may_hold_commas() -> None:
    parameter = {"name": "tags", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}}
    operation = _op([parameter], path="/things")
    request = build_request(operation, {"tags": ["a,b", "c"]})
    assert request["url"].endswith("?tags=a%2Cb&tags=c")


def test_enumerated_path_and_header_values_that_all_fit_the_wire_are_left_as_declared() -> None:
    operation = _op(
        [
            {**PATH_ID, "schema": {"type": "string", "enum": ["open", "closed"]}},
            {"name": "X-Mode", "in": "header", "schema": {"type": "string", "enum": ["fast", "safe"]}},
        ]
    )
    properties = operation["schema"]["properties"]
    assert properties["id"] == {"type": "string", "enum": ["open", "closed"]}
    assert properties["X_Mode"] == {"type": "string", "enum": ["fast", "safe"]}
    dotted = _op([{**PATH_ID, "schema": {"type": "string", "enum": ["a", ".."]}}])
    assert "not" in dotted["schema"]["properties"]["id"]


def test_a_header_list_without_described_items_still_limits_them() -> None:
    operation = _op([{"name": "X-Tags", "in": "header", "schema": {"type": "array"}}], path="/things")
    validator = Draft202012Validator(operation["schema"])
    assert not validator.is_valid({"X_Tags": ["a\nb"]}) and validator.is_valid({"X_Tags": ["a", 1]})
    _never_refused(operation, examples=40)


def test_required_lists_and_objects_that_would_send_nothing_publish_that_they_cannot_be_empty() -> None:
    query = _op([{"name": "ids", "in": "query", "required": True, "schema": {"type": "array", "items": {"type": "string"}}}], path="/things")
    assert query["schema"]["properties"]["ids"]["minItems"] == 1
    form = {"type": "object", "required": ["tags", "meta"], "properties": {
        "tags": {"type": "array", "items": {"type": "string"}}, "meta": {"type": "object"}, "note": {"type": "object"}}}  # fmt: skip
    spec = openapi({"/things": {"post": {"operationId": "op", "requestBody": {
        "required": True, "content": {"application/x-www-form-urlencoded": {"schema": form}}}}}})  # fmt: skip
    _, operations = imported(spec)
    properties = operations["op"]["schema"]["properties"]
    assert properties["tags"]["minItems"] == 1 and properties["meta"]["minProperties"] == 1 and "minProperties" not in properties["note"]
    for empty in ({"tags": [], "meta": {"a": "b"}}, {"tags": ["x"], "meta": {}}):
        assert not Draft202012Validator(operations["op"]["schema"]).is_valid(empty)
        with pytest.raises(InvalidArguments):
            build_request(operations["op"], empty)
    raw = openapi({"/photo": {"put": {"operationId": "op", "requestBody": {
        "required": True, "content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}}}}}})  # fmt: skip
    _, operations = imported(raw)
    assert operations["op"]["schema"]["properties"]["body"]["minLength"] == 1
    _never_refused(operations["op"], examples=20)
