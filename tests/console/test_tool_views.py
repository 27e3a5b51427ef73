"""The tool diff and per-profile views, as pure functions."""

from __future__ import annotations

from skillhouse.api.console.pages import body_text, masked_headers
from skillhouse.api.console.tool_views import Change, schema_changes, tools_page


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


def test_tools_come_a_page_at_a_time_in_name_order_and_back() -> None:
    operations = {f"t{n:02d}": {"name": f"op{n}", "description": "x"} for n in range(7)}
    first = tools_page(operations, "", size=3)
    assert [name for name, _ in first.rows] == ["t00", "t01", "t02"]
    assert (first.total, first.newer, first.older) == (7, None, "t02")
    second = tools_page(operations, "", first.older or "", "older", size=3)
    last = tools_page(operations, "", second.older or "", "older", size=3)
    assert [name for name, _ in last.rows] == ["t06"] and last.older is None and last.newer == "t06"
    back = tools_page(operations, "", second.newer or "", "newer", size=3)
    assert back.rows == first.rows and back.newer is None


def test_the_tools_filter_needs_every_word_in_the_name_or_description() -> None:
    operations = {"shop_get_parcel": {"name": "get_parcel", "description": "Read a parcel by its id."},
                  "shop_get_invoice": {"name": "get_invoice", "description": "Read an invoice, with its parcels."},
                  "shop_list_orders": {"name": "list_orders", "description": "List ORDERS."}}
    assert [n for n, _ in tools_page(operations, "PARCEL").rows] == ["shop_get_invoice", "shop_get_parcel"]
    assert [n for n, _ in tools_page(operations, "parcel id").rows] == ["shop_get_parcel"]
    assert [n for n, _ in tools_page(operations, "orders list").rows] == ["shop_list_orders"]
    nothing = tools_page(operations, "refund")
    assert (nothing.rows, nothing.total, nothing.newer, nothing.older) == ([], 0, None, None)
