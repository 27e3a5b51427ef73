"""An operation's fields are checked only where a check can apply: a header fixed to its single allowed
value (required headers only), a path segment written Express-style (paths with a colon), the path's
template parameters (in order, declared or not)."""

from __future__ import annotations

from tests.openapi.specs import imported, openapi, outcome


def test_only_a_required_header_with_one_value_is_fixed() -> None:
    params = [
        {"name": "X-Version", "in": "header", "required": True, "schema": {"type": "string", "enum": ["2"]}},
        {"name": "X-Mode", "in": "header", "schema": {"type": "string", "enum": ["fast"]}},
        {"name": "X-Kind", "in": "header", "required": True, "schema": {"const": "a"}},
        {"name": "kind", "in": "query", "required": True, "schema": {"type": "string", "enum": ["only"]}},
    ]
    result, ops = imported(openapi({"/things": {"get": {"operationId": "getThings", "parameters": params}}}))
    op = ops["getThings"]
    assert op["headers"] == {"X-Version": "2", "X-Kind": "a"}
    assert sorted(op["schema"]["properties"]) == ["X_Mode", "kind"]
    notes = outcome(result, "getThings").notes
    assert [n for n in notes if "fixed" in n] == ["header 'X-Version' fixed to its only allowed value", "header 'X-Kind' fixed to its only allowed value"]


def test_path_parameters_follow_the_template_and_a_colon_segment_is_noted() -> None:
    params = [{"name": "b", "in": "path", "required": True, "schema": {"type": "integer"}}, {"name": "gone", "in": "path", "required": True}]
    spec = openapi({"/x/{a}/y/{b}/:c/z:d": {"get": {"operationId": "getX", "parameters": params}}})
    result, ops = imported(spec)
    assert list(ops["getX"]["schema"]["properties"]) == ["a", "b"]
    notes = outcome(result, "getX").notes
    assert any("':c' looks like a parameter written Express-style" in n for n in notes)
    assert not any("':d'" in n for n in notes)  # a colon not after a slash is no parameter
    assert "path parameter 'gone' is not in the path; dropped" in notes
