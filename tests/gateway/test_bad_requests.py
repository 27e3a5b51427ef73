"""Bad requests fail before anything is claimed, with a located code, and what is approved is what is sent.

Through :meth:`Gateway.fetch` against the loopback upstream, on SQLite and PostgreSQL: header names
and values the wire cannot carry one way, headers given twice, JSON keys given twice, over-long URLs
and bodies that have no canonical form are refused with ``field`` and ``reason`` before an idempotency
key is claimed, an approval held or a byte sent, and the refusal is on the audit trail.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from tests.gateway.conftest import booking_request
from tests.gateway.test_canonical_spellings import CHARGE, post, stored_counts
from tests.gateway.upstream_server import Upstream
from tests.gateway.wire import fetch_json

from skillhouse.gateway import Gateway, TurnContext
from skillhouse.store.gateway_tables import AuditRow

URL = "http://hollowbrook.local:8084/bookings"
BOOKING_TEXT = '{"arrival":"2030-05-01","departure":"2030-05-03","guest_name":"Ada","room_id":2}'


def with_headers(headers: dict[str, str]) -> dict[str, Any]:
    return {**booking_request(), "headers": {"Content-Type": "application/json", **headers}}


def with_body(body: str) -> dict[str, Any]:
    return {**booking_request(), "body": body}


CASES = [
    (with_headers({"X-Note": "a\r\nX-Injected: 1"}), "invalid-request", "headers.X-Note", "invalid-value"),
    (with_headers({"X-Note": "line\u2028separator"}), "invalid-request", "headers.X-Note", "invalid-value"),
    (with_headers({"X-Note": "final line break\n"}), "invalid-request", "headers.X-Note", "invalid-value"),
    (with_headers({"X-Note\n": "name with a final line break"}), "invalid-request", "headers", "invalid-name"),
    (with_headers({"X-Note": "caf\u00e9"}), "invalid-request", "headers.X-Note", "invalid-value"),
    (with_headers({"X-Note": "bell\x07"}), "invalid-request", "headers.X-Note", "invalid-value"),
    (with_headers({"X-Note": "nul\x00"}), "invalid-request", "headers.X-Note", "invalid-value"),
    (with_headers({"X Note": "space in the name"}), "invalid-request", "headers.X Note", "invalid-name"),
    (with_headers({"X-N\u00f6te": "x"}), "invalid-request", "headers.X-N\u00f6te", "invalid-name"),
    (with_headers({"content-type": "text/plain"}), "duplicate-header", "headers.content-type", None),
    (with_headers({"X-HTTP-Method-Override": "DELETE"}), "invalid-request", "headers.X-HTTP-Method-Override",
     "routing-override"),
    (with_headers({"x-original-url": "/charges"}), "invalid-request", "headers.x-original-url", "routing-override"),
    (with_headers({"X-Rewrite-URL": "/charges"}), "invalid-request", "headers.X-Rewrite-URL", "routing-override"),
    (with_headers({f"X-{i}": "v" for i in range(70)}), "invalid-request", "headers", "too-many"),
    (with_headers({"X-Big": "v" * 20_000}), "invalid-request", "headers", "too-large"),
    (with_body(BOOKING_TEXT[:-1] + ',"room_id":3}'), "duplicate-json-key", "body", None),
    (with_body('{"a":{"b":1,"b":1},"room_id":2}'), "duplicate-json-key", "body", None),
    (with_body('{"room_id":NaN}'), "invalid-request", "body", "not-json"),
    (with_body('{"room_id":1e999}'), "invalid-request", "body", "number-out-of-range"),
    (with_body("{not json"), "invalid-request", "body", "not-json"),
    (with_body('{"guest_name":"\ud800"}'), "invalid-request", "body", "not-utf8"),
    (with_body(BOOKING_TEXT.replace('"room_id":2', '"room_id":9007199254740993')), "invalid-request", "body",
     "identity-not-canonical"),
    ({**booking_request(), "url": URL + "?" + "x" * 9000}, "invalid-request", "url", "too-long"),
    ({**booking_request(), "url": "http://hollowbrook.local:8084/bookings%2F..%2Fcharges"}, "invalid-request", "url",
     "encoded-separator"),
    ({**booking_request(), "url": "http://user:pw@hollowbrook.local:8084/bookings"}, "invalid-request", "url", "userinfo"),
    ({**booking_request(), "method": "TRACE"}, "invalid-request", "method", None),
    ({**booking_request(), "body": 7}, "invalid-request", "body", None),
]  # fmt: skip


@pytest.mark.parametrize(("request_", "code", "where", "reason"), CASES)
def test_a_bad_request_is_refused_with_its_place_before_anything_is_claimed_or_sent(
    gateway: Gateway, turn: TurnContext, upstream: Upstream, request_: dict[str, Any], code: str, where: str,
    reason: str | None,
) -> None:
    answer = fetch_json(gateway, turn, request_)
    error = answer["error"]
    assert (error["code"], error["field"], error.get("reason")) == (code, where, reason), error
    assert upstream.recorder.requests == [] and stored_counts(gateway) == (0, 0)
    with gateway.database.transaction() as session:
        refused = session.scalar(select(func.count()).select_from(AuditRow).where(AuditRow.decision == "refused"))
    assert refused == 1
    # the same booking, written well, still books once: nothing was left claimed by the refusal
    assert fetch_json(gateway, turn, booking_request())["status"] == 201


def test_a_guest_header_is_sent_lower_cased_and_trimmed_and_gateway_headers_are_its_own(
    gateway: Gateway, turn: TurnContext, upstream: Upstream
) -> None:
    request = with_headers({"X-Trace": "  abc  ", "Accept-Encoding": "gzip", "Host": "evil.test", "Idempotency-Key": "mine"})
    assert fetch_json(gateway, turn, request)["status"] == 201
    sent = upstream.recorder.requests[0]["headers"]
    assert sent["x-trace"] == "abc" and sent["Accept-Encoding"] == "identity"
    assert sent["Host"] == "hollowbrook.local:8084" and sent["Idempotency-Key"].startswith("skh-")
    assert "gzip" not in json.dumps(sent) and "mine" not in json.dumps(sent) and "evil.test" not in json.dumps(sent)


def test_the_approval_shows_the_exact_body_that_is_sent_and_another_spelling_needs_its_own(
    gateway: Gateway, turn: TurnContext, upstream: Upstream
) -> None:
    charges = "http://hollowbrook.local:8084/charges"
    held = fetch_json(gateway, turn, post(charges, CHARGE))["error"]
    approval = gateway.approvals.get("tenant-a", held["approval_id"])
    assert approval.canonical["body"] == {"text": CHARGE}
    assert approval.canonical["headers"] == {"content-type": "application/json"}
    respaced = fetch_json(gateway, turn, post(charges, CHARGE.replace(", ", ",")))["error"]
    assert respaced["code"] == "approval-required" and respaced["approval_id"] != held["approval_id"]
    gateway.approvals.decide("tenant-a", held["approval_id"], True, "ops")
    assert fetch_json(gateway, turn, post(charges, CHARGE))["status"] == 201
    assert upstream.recorder.requests[0]["body"] == CHARGE  # byte for byte what the approver read


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["X-Note", "Content-Type"]), value=st.text(min_size=1, max_size=12))
def test_any_header_value_is_sent_exactly_as_approved_or_refused_before_anything_is_claimed(
    gateway: Gateway, turn: TurnContext, upstream: Upstream, name: str, value: str
) -> None:
    headers = {"Content-Type": "application/json", name: value} if name == "X-Note" else {name: value}
    before = (len(upstream.recorder.requests), stored_counts(gateway))
    answer = fetch_json(gateway, turn, {**post("http://hollowbrook.local:8084/echo", "{}"), "headers": headers})
    printable = all(c == "\t" or " " <= c <= "~" for c in value)
    if not printable:
        assert (answer["error"]["code"], answer["error"]["reason"]) == ("invalid-request", "invalid-value")
        assert (len(upstream.recorder.requests), stored_counts(gateway)) == before
        return
    assert answer["status"] == 200
    echoed = json.loads(answer["body"])["headers"]
    assert echoed[name.lower()] == value.strip(" \t")


def test_a_body_that_is_not_one_json_document_is_sent_as_its_text(
    gateway: Gateway, turn: TurnContext, upstream: Upstream
) -> None:
    lines = '{"a":1}\n{"a":1}\n'  # NDJSON: repeated keys across lines are separate documents
    request = {**post("http://hollowbrook.local:8084/echo", lines), "headers": {"Content-Type": "application/x-ndjson"}}
    assert fetch_json(gateway, turn, request)["status"] == 200
    assert upstream.recorder.requests[0]["body"] == lines
