"""A tool's answer as a model reads it: the JSON body parsed, transport headers left out, the rest as it is."""

from __future__ import annotations

import json
from typing import Any

import pytest

from skillhouse.guest import model_result
from skillhouse.guest.results import model_text


def response(body: str, **headers: str) -> dict[str, Any]:
    return {"status": 200, "headers": {k.replace("_", "-"): v for k, v in headers.items()}, "body": body}


def test_a_json_body_is_parsed_and_its_content_type_and_transport_headers_left_out() -> None:
    answer = response(
        '{"items": [1, 2], "next": null}',
        content_type="application/json",
        date="Tue, 01 Dec 2026 18:00:00 GMT",
        server="envoy",
        content_length="31",
        connection="keep-alive",
        strict_transport_security="max-age=63072000",
        access_control_allow_origin="*",
        link='<https://api.test/items?page=2>; rel="next"',
        x_ratelimit_remaining="4999",
        x_request_id="req-1",
    )
    assert model_result(answer) == {
        "status": 200,
        "headers": {
            "link": '<https://api.test/items?page=2>; rel="next"',
            "x-ratelimit-remaining": "4999",
            "x-request-id": "req-1",
        },
        "body": {"items": [1, 2], "next": None},
    }


@pytest.mark.parametrize("media_type", ["application/json", "application/problem+json", "application/vnd.api+json; charset=utf-8", None])
def test_every_json_media_type_and_an_undeclared_one_are_parsed(media_type: str | None) -> None:
    headers = {} if media_type is None else {"Content-Type": media_type}
    shaped = model_result({"status": 400, "headers": headers, "body": '{"error": "bad"}'})
    assert shaped["body"] == {"error": "bad"} and shaped["headers"] == {}


def test_text_and_what_does_not_parse_stay_text_with_their_content_type() -> None:
    html = response("<p>{}</p>", Content_Type="text/html")
    assert model_result(html) == html
    looks_like_json = response('{"a": 1}', Content_Type="text/plain")
    assert model_result(looks_like_json)["body"] == '{"a": 1}'
    broken = response('{"a": ', Content_Type="application/json")
    assert model_result(broken)["body"] == '{"a": '
    assert model_result(broken)["headers"] == {"Content-Type": "application/json"}
    not_a_number = response('{"a": NaN}', Content_Type="application/json")
    assert model_result(not_a_number)["body"] == '{"a": NaN}'
    empty = {"status": 204, "headers": {"Date": "x"}, "body": ""}
    assert model_result(empty) == {"status": 204, "headers": {}, "body": ""}


def test_a_body_nested_past_the_limit_stays_text() -> None:
    deep = "[" * 200 + "]" * 200
    assert model_result(response(deep, Content_Type="application/json"))["body"] == deep


def test_the_status_replay_mark_and_location_and_retry_after_are_kept() -> None:
    answer = {
        "status": 303,
        "replayed": True,
        "headers": {"Location": "/bookings/b-1", "Retry-After": "5", "Server": "x"},
        "body": "",
    }
    assert model_result(answer) == {
        "status": 303,
        "replayed": True,
        "headers": {"Location": "/bookings/b-1", "Retry-After": "5"},
        "body": "",
    }


def test_refusals_signals_and_other_answers_pass_unchanged() -> None:
    held = {"error": {"code": "approval-required", "approval_id": "ap_1", "message": "held"}}
    withheld = {"error": {"code": "response-withheld", "status": 200, "message": "x"}}
    loaded = {"loaded": [{"name": "a", "description": "b"}]}
    for answer in (held, withheld, loaded, "text", None):
        assert model_result(answer) is answer
    assert model_text("not json") == "not json"
    assert model_text(json.dumps(held)) == json.dumps(held)
    assert json.loads(model_text(json.dumps(response('{"a": 1}')))) == {"status": 200, "headers": {}, "body": {"a": 1}}
