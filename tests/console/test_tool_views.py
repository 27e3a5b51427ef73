"""The tool diff and per-profile views, as pure functions."""

from __future__ import annotations

from skillhouse.api.console.pages import body_text, masked_headers
from skillhouse.api.console.tool_views import Change, schema_changes


def test_schema_changes_name_each_property_added_removed_retyped_and_required() -> None:
    before = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]}
    after = {"type": "object", "properties": {"a": {"type": "integer"}, "c": {"type": "string"}}, "required": ["a", "c"]}
    assert schema_changes(before, after, "/schema") == [
        Change("/schema/properties/a/type", "changed", '"string"', '"integer"'),
        Change("/schema/properties/b", "removed", '{"type": "integer"}', None),
        Change("/schema/properties/c", "added", None, '{"type": "string"}'),
        Change("/schema/properties/c", "now required"),
    ]


def test_identical_schemas_have_no_changes() -> None:
    schema = {"type": "object", "properties": {"x~/y": {"enum": [1, 2]}}, "required": []}
    assert schema_changes(schema, dict(schema)) == []


def test_a_property_name_with_slash_or_tilde_is_escaped_in_its_pointer() -> None:
    changes = schema_changes({"properties": {}}, {"properties": {"a/b~c": {"type": "string"}}})
    assert [c.where for c in changes] == ["/properties/a~1b~0c"]


def test_credential_looking_headers_are_hidden_and_others_shown() -> None:
    shown = masked_headers({"content-type": "application/json", "authorization": "Bearer x", "x-api-key": "k",
                            "cookie": "c", "x-session-token": "t"})
    assert shown == [("authorization", "[hidden]"), ("content-type", "application/json"), ("cookie", "[hidden]"),
                     ("x-api-key", "[hidden]"), ("x-session-token", "[hidden]")]


def test_bodies_are_pretty_printed_or_shown_as_sent() -> None:
    assert body_text({"json": {"b": 1, "a": [1]}}) == '{\n  "a": [\n    1\n  ],\n  "b": 1\n}'
    assert body_text({"text": "a=1&b=2"}) == "a=1&b=2"
    assert body_text(None) == "(no body)"
