"""Translation of a call into the exact request its declaration describes (README.md, "How a call travels")."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from skillhouse.guest import InvalidArguments, build_request

from .conftest import operation_of

SHOP = {
    "search.md": """
        ---
        operation:
          method: GET
          url: https://api.shop.test/v1/items
          query: [q, tags, limit, exact, min_price]
          optional: [tags, limit, exact, min_price]
          list: [tags]
          integer: [limit]
          boolean: [exact]
          number: [min_price]
        ---
        Search items.
        """,
    "get_note.md": """
        ---
        operation:
          method: GET
          url: https://api.shop.test/v1/items/{item_id}/notes/{note_id}
        ---
        Get a note of an item.
        """,
    "create_item.md": """
        ---
        operation:
          method: POST
          url: https://api.shop.test/v1/items?source=agent
          body: [name, price, tags, count, active]
          header: [request_tag]
          optional: [tags, request_tag, count, active]
          number: [price]
          integer: [count]
          boolean: [active]
          list: [tags]
          headers: {X-Api-Version: "2"}
          names: {request_tag: X-Request-Tag}
        ---
        Create an item.
        """,
    "update_item.md": """
        ---
        operation:
          method: PATCH
          url: https://api.shop.test/v1/items/{item_id}
          query: [dry_run]
          names: {dry_run: dry-run}
          schema: |
            {
              "type": "object",
              "required": ["item_id", "details"],
              "properties": {
                "item_id": {"type": "string"},
                "dry_run": {"type": "boolean"},
                "details": {"type": "object", "required": ["color"], "additionalProperties": false,
                            "properties": {"color": {"type": "string", "enum": ["red", "blue"]},
                                           "size": {"type": "integer", "minimum": 1}}},
                "note": {"type": ["string", "null"]},
                "label": {"type": "string", "nullable": true}
              }
            }
        ---
        Update an item.
        """,
    "list_orders.md": """
        ---
        operation:
          method: GET
          url: https://api.shop.test/v1/orders
          query: [ids, states, words, filter, expand]
          style: {ids: comma, states: pipeDelimited, words: spaceDelimited, filter: deepObject}
          names: {expand: "expand[]"}
          schema: |
            {
              "type": "object",
              "properties": {
                "ids": {"type": "array", "items": {"type": "integer"}},
                "states": {"type": "array", "items": {"type": "string"}},
                "words": {"type": "array", "items": {"type": "string"}},
                "filter": {"type": "object", "properties": {"status": {"type": "string"},
                           "created": {"type": "object", "properties": {"gte": {"type": "integer"}}}}},
                "expand": {"type": "array", "items": {"type": "string"}}
              }
            }
        ---
        List orders.
        """,
    "create_charge.md": """
        ---
        operation:
          method: POST
          url: https://api.stripe.test/v1/charges
          encoding: form
          names: {expand: "expand[]"}
          schema: |
            {
              "type": "object",
              "required": ["amount", "currency"],
              "properties": {
                "amount": {"type": "integer"},
                "currency": {"type": "string"},
                "capture": {"type": "boolean"},
                "description": {"type": ["string", "null"]},
                "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
                "items": {"type": "array", "items": {"type": "object",
                          "properties": {"price": {"type": "string"}, "quantity": {"type": "integer"}}}},
                "expand": {"type": "array", "items": {"type": "string"}}
              }
            }
        ---
        Create a charge.
        """,
    "upload.md": """
        ---
        operation:
          method: POST
          url: https://api.shop.test/v1/uploads
          encoding: multipart
          schema: |
            {
              "type": "object",
              "required": ["title"],
              "properties": {
                "title": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "meta": {"type": "object"}
              }
            }
        ---
        Upload a thing.
        """,
    "replace_tags.md": """
        ---
        operation:
          method: PUT
          url: https://api.shop.test/v1/items/{item_id}/tags
          payload: tags
          schema: |
            {
              "type": "object",
              "required": ["item_id", "tags"],
              "properties": {
                "item_id": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 3}
              }
            }
        ---
        Replace an item's tags.
        """,
}


@pytest.fixture
def shop(package: Callable[..., dict[str, Any]]) -> Callable[[str], dict[str, Any]]:
    release = package("shop", SHOP)
    return lambda name: operation_of(release, name)


def refusal(operation: dict[str, Any], arguments: Any) -> list[tuple[str, str]]:
    with pytest.raises(InvalidArguments) as caught:
        build_request(operation, arguments)
    return [(v.path, v.problem) for v in caught.value.violations]


def test_a_booking_becomes_a_json_post_with_content_type(hollowbrook: dict[str, Any]) -> None:
    request = build_request(
        operation_of(hollowbrook, "create_booking"),
        {"room_id": 3, "guest_name": "Ana Núñez", "arrival": "2025-06-01", "departure": "2025-06-03"},
    )
    assert request == {
        "method": "POST",
        "url": "http://hollowbrook.local:8084/bookings",
        "headers": {"Content-Type": "application/json"},
        "body": '{"arrival":"2025-06-01","departure":"2025-06-03","guest_name":"Ana Núñez","room_id":3}',
    }


def test_an_absent_optional_argument_is_not_sent_and_a_given_one_is(hollowbrook: dict[str, Any]) -> None:
    op = operation_of(hollowbrook, "create_booking")
    base = {"room_id": 1, "guest_name": "B", "arrival": "2025-01-01", "departure": "2025-01-02"}
    assert "note" not in json.loads(build_request(op, base)["body"])
    assert json.loads(build_request(op, {**base, "note": "late"})["body"])["note"] == "late"


def test_a_get_has_query_in_declaration_order_and_no_body_or_content_type(
    hollowbrook: dict[str, Any],
) -> None:
    request = build_request(
        operation_of(hollowbrook, "check_availability"),
        {"departure": "2025-06-03", "arrival": "2025-06-01", "room_id": 2.0},
    )
    assert request == {
        "method": "GET",
        "url": "http://hollowbrook.local:8084/availability?room_id=2&arrival=2025-06-01&departure=2025-06-03",
        "headers": {},
        "body": None,
    }


def test_an_operation_without_body_arguments_sends_no_body(hollowbrook: dict[str, Any]) -> None:
    request = build_request(operation_of(hollowbrook, "cancel_booking"), {"booking_id": "b-17"})
    assert request == {
        "method": "DELETE",
        "url": "http://hollowbrook.local:8084/bookings/b-17",
        "headers": {},
        "body": None,
    }


def test_path_parameters_are_percent_encoded(shop: Callable[[str], dict[str, Any]]) -> None:
    request = build_request(shop("get_note"), {"item_id": "a;b?c#d%e f", "note_id": "café~x.y-z_"})
    assert request["url"] == "https://api.shop.test/v1/items/a%3Bb%3Fc%23d%25e%20f/notes/caf%C3%A9~x.y-z_"


@pytest.mark.parametrize("value", ["a/b", "a\\b", "a\x00b", "tab\there", "del\x7f"])
def test_path_parameters_holding_separators_or_control_characters_are_refused(
    shop: Callable[[str], dict[str, Any]], value: str
) -> None:
    # the gateway refuses %2F, %5C and encoded control characters in a path: servers disagree on them
    assert refusal(shop("get_note"), {"item_id": value, "note_id": "n"}) == [("$.item_id", "invalid-path-segment")]


@pytest.mark.parametrize("segment", ["", ".", ".."])
def test_dot_segments_and_empty_path_parameters_are_refused(
    shop: Callable[[str], dict[str, Any]], segment: str
) -> None:
    assert refusal(shop("get_note"), {"item_id": segment, "note_id": ".."}) == [
        ("$.item_id", "invalid-path-segment"),
        ("$.note_id", "invalid-path-segment"),
    ]


def test_query_lists_repeat_and_scalars_use_json_notation(shop: Callable[[str], dict[str, Any]]) -> None:
    request = build_request(
        shop("search"),
        {"q": "red & blue", "tags": ["a b", "ü"], "limit": 10, "exact": False, "min_price": 2.50},
    )
    assert request["url"] == (
        "https://api.shop.test/v1/items?q=red%20%26%20blue&tags=a%20b&tags=%C3%BC&limit=10&exact=false&min_price=2.5"
    )
    assert request["body"] is None and request["headers"] == {}


def test_whole_numbers_given_as_floats_are_sent_as_integers(shop: Callable[[str], dict[str, Any]]) -> None:
    request = build_request(shop("search"), {"q": "x", "limit": 10.0, "min_price": 3.0})
    assert request["url"] == "https://api.shop.test/v1/items?q=x&limit=10&min_price=3"


def test_fixed_headers_and_header_arguments_are_sent_with_the_wire_name(
    shop: Callable[[str], dict[str, Any]],
) -> None:
    request = build_request(
        shop("create_item"),
        {"name": "Lamp", "price": 19.99, "tags": ["home"], "count": 2, "active": True, "request_tag": "t-1"},
    )
    assert request == {
        "method": "POST",
        "url": "https://api.shop.test/v1/items?source=agent",
        "headers": {"X-Api-Version": "2", "X-Request-Tag": "t-1", "Content-Type": "application/json"},
        "body": '{"active":true,"count":2,"name":"Lamp","price":19.99,"tags":["home"]}',
    }


def test_a_header_argument_with_a_line_break_is_refused(shop: Callable[[str], dict[str, Any]]) -> None:
    assert refusal(shop("create_item"), {"name": "L", "price": 1, "request_tag": "a\r\nX-Evil: 1"}) == [
        ("$.request_tag", "invalid-header-value")
    ]


def test_schema_form_splits_path_query_and_body_and_sends_null_for_a_nullable(
    shop: Callable[[str], dict[str, Any]],
) -> None:
    request = build_request(
        shop("update_item"),
        {
            "item_id": "i 1",
            "dry_run": True,
            "details": {"size": 2, "color": "red"},
            "note": None,
            "label": None,
        },
    )
    assert request == {
        "method": "PATCH",
        "url": "https://api.shop.test/v1/items/i%201?dry-run=true",
        "headers": {"Content-Type": "application/json"},
        "body": '{"details":{"color":"red","size":2},"label":null,"note":null}',
    }


def test_query_styles_deep_object_and_delimited_lists(shop: Callable[[str], dict[str, Any]]) -> None:
    request = build_request(
        shop("list_orders"),
        {
            "ids": [3, 4, 5],
            "states": ["open", "paid"],
            "words": ["big", "red"],
            "filter": {"status": "open", "created": {"gte": 1700000000}},
            "expand": ["customer", "invoice"],
        },
    )
    assert request["url"] == (
        "https://api.shop.test/v1/orders?ids=3,4,5&states=open%7Cpaid&words=big%20red"
        "&filter%5Bcreated%5D%5Bgte%5D=1700000000&filter%5Bstatus%5D=open"
        "&expand%5B%5D=customer&expand%5B%5D=invoice"
    )


def test_form_encoding_nests_objects_in_brackets_as_stripe_reads_them(
    shop: Callable[[str], dict[str, Any]],
) -> None:
    request = build_request(
        shop("create_charge"),
        {
            "amount": 2000,
            "currency": "eur",
            "capture": False,
            "description": "Room 3 & breakfast",
            "metadata": {"order": "o 1", "booking": "b-9"},
            "items": [{"price": "p_1", "quantity": 2}],
            "expand": ["customer", "balance_transaction"],
        },
    )
    assert request == {
        "method": "POST",
        "url": "https://api.stripe.test/v1/charges",
        "headers": {"Content-Type": "application/x-www-form-urlencoded"},
        "body": (
            "amount=2000&capture=false&currency=eur&description=Room+3+%26+breakfast"
            "&expand%5B%5D=customer&expand%5B%5D=balance_transaction"
            "&items%5B0%5D%5Bprice%5D=p_1&items%5B0%5D%5Bquantity%5D=2"
            "&metadata%5Bbooking%5D=b-9&metadata%5Border%5D=o+1"
        ),
    }


def test_form_encoding_sends_an_explicit_null_as_an_empty_value(
    shop: Callable[[str], dict[str, Any]],
) -> None:
    request = build_request(shop("create_charge"), {"amount": 1, "currency": "eur", "description": None})
    assert request["body"] == "amount=1&currency=eur&description="


def test_multipart_has_a_deterministic_boundary_and_one_part_per_field(
    shop: Callable[[str], dict[str, Any]],
) -> None:
    arguments = {"title": "Plan", "tags": ["a", "b"], "meta": {"k": 1}}
    request = build_request(shop("upload"), arguments)
    content_type = request["headers"]["Content-Type"]
    assert content_type.startswith("multipart/form-data; boundary=skillhouse-")
    boundary = content_type.split("boundary=")[1]
    assert request["body"] == (
        f'--{boundary}\r\nContent-Disposition: form-data; name="meta"\r\nContent-Type: application/json\r\n'
        '\r\n{"k":1}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="tags"\r\n\r\na\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="tags"\r\n\r\nb\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nPlan\r\n'
        f"--{boundary}--\r\n"
    )
    assert build_request(shop("upload"), arguments) == request


def test_a_payload_argument_is_the_whole_body(shop: Callable[[str], dict[str, Any]]) -> None:
    request = build_request(shop("replace_tags"), {"item_id": "i1", "tags": ["x", "y"]})
    assert request == {
        "method": "PUT",
        "url": "https://api.shop.test/v1/items/i1/tags",
        "headers": {"Content-Type": "application/json"},
        "body": '["x","y"]',
    }


def test_a_refusal_lists_every_violation_at_once(shop: Callable[[str], dict[str, Any]]) -> None:
    problems = refusal(
        shop("update_item"),
        {"item_id": "..", "dry_run": 1, "details": {"color": "green", "size": 0, "weight": 3}, "extra": True},
    )
    assert sorted(problems) == sorted(
        [
            ("$.dry_run", "wrong-type"),
            ("$.details.color", "not-in-enum"),
            ("$.details.size", "too-small"),
            ("$.details.weight", "unknown-property"),
            ("$.extra", "unknown-property"),
            ("$.item_id", "invalid-path-segment"),
        ]
    )


def test_missing_arguments_and_booleans_given_for_integers_are_refused(hollowbrook: dict[str, Any]) -> None:
    assert refusal(operation_of(hollowbrook, "create_booking"), {"room_id": True, "guest_name": "A"}) == [
        ("$.arrival", "missing"),
        ("$.departure", "missing"),
        ("$.room_id", "wrong-type"),
    ]


def test_arguments_that_are_not_an_object_are_refused(hollowbrook: dict[str, Any]) -> None:
    assert refusal(operation_of(hollowbrook, "list_rooms"), ["min_guests", 2]) == [("$", "wrong-type")]


def test_a_payload_with_duplicates_or_too_many_items_is_refused(
    shop: Callable[[str], dict[str, Any]],
) -> None:
    assert refusal(shop("replace_tags"), {"item_id": "i", "tags": ["a", "a", "b", "c"]}) == [
        ("$.tags", "too-many-items"),
        ("$.tags[1]", "duplicate-item"),
    ]


def test_the_refusal_document_has_the_design_shape(hollowbrook: dict[str, Any]) -> None:
    with pytest.raises(InvalidArguments) as caught:
        build_request(operation_of(hollowbrook, "list_rooms"), {"min_guests": "two"})
    document = caught.value.document("hollowbrook_list_rooms")
    assert document["error"]["code"] == "invalid-arguments"
    assert document["error"]["violations"] == [
        {"path": "$.min_guests", "problem": "wrong-type", "expected": "an integer, not a string"}
    ]


def test_a_raw_payload_is_sent_as_it_is_under_its_media_type() -> None:
    from skillhouse.guest.translation import build_request

    operation = {
        "method": "PUT",
        "url": "https://api.test/playlists/{id}/images",
        "arguments": [{"name": "id", "in": "path", "wire": "id"}, {"name": "image", "in": "body", "wire": "image"}],
        "schema": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "image": {"type": "string"}},
            "required": ["id", "image"],
            "additionalProperties": False,
        },
        "encoding": "raw",
        "payload": "image",
        "content_type": "image/jpeg",
        "headers": {},
    }
    assert build_request(operation, {"id": "p 1", "image": "/9j/4AAQ"}) == {
        "method": "PUT",
        "url": "https://api.test/playlists/p%201/images",
        "headers": {"Content-Type": "image/jpeg"},
        "body": "/9j/4AAQ",
    }
