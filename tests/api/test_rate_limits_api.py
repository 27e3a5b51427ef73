"""Rate limits through the HTTP API: set, listed and removed by an admin token; a call over a limit answers the
model ``rate-limited`` with ``retry_after``, is not sent and claims no idempotency key."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.api.test_idempotency_keys import Headers, app, book, client, hostile, tenant  # noqa: F401 - the fixtures
from tests.gateway.hostile_upstream import Hostile

from skillhouse.registry.tokens import create_token

LIMITS = "/v1/limits"
BOOKING_LIMIT = {"scope": "operation", "subject": "hollowbrook.create_booking", "requests": 1, "window_seconds": 3600}


def test_a_call_over_a_limit_answers_rate_limited_is_not_sent_and_claims_no_key(
    client: TestClient, hostile: Hostile, tenant: Callable[[str, str], tuple[Headers, str]]  # noqa: F811
) -> None:
    acme, turn_id = tenant("acme", "")
    put = client.put(LIMITS, json=BOOKING_LIMIT, headers=acme)
    assert put.status_code == 200, put.text
    assert client.get(LIMITS, headers=acme).json() == {"data": [{**BOOKING_LIMIT, "concurrent": None}], "upstream_waits": []}
    assert book(client, acme, turn_id, "Ada")["status"] == 201
    limited = book(client, acme, turn_id, "Grace")["error"]
    assert (limited["code"], limited["limit"]) == ("rate-limited", "operation hollowbrook.create_booking")
    assert 3500 <= limited["retry_after"] <= 3600
    assert len(hostile.bookings) == 1
    assert len(client.get("/v1/idempotency-keys", headers=acme).json()["data"]) == 1
    removed = client.delete(LIMITS, params={"scope": "operation", "subject": "hollowbrook.create_booking"}, headers=acme)
    assert removed.status_code == 204
    assert book(client, acme, turn_id, "Grace")["status"] == 201
    again = client.delete(LIMITS, params={"scope": "operation", "subject": "hollowbrook.create_booking"}, headers=acme)
    assert again.status_code == 404 and again.json()["error"]["code"] == "rate-limit-not-found"


def test_limits_need_an_admin_token_and_a_bad_limit_is_a_located_422(
    app: FastAPI, client: TestClient, tenant: Callable[[str, str], tuple[Headers, str]]  # noqa: F811
) -> None:
    acme, _ = tenant("acme", "")
    with app.state.database.transaction() as session:
        secret, _ = create_token(session, "acme", "runner", scope="run")
    runner = {"Authorization": f"Bearer {secret}"}
    assert client.put(LIMITS, json=BOOKING_LIMIT, headers=runner).status_code == 403
    assert client.get(LIMITS, headers=runner).status_code == 403
    zero = client.put(LIMITS, json={**BOOKING_LIMIT, "requests": 0}, headers=acme)
    assert zero.status_code == 422 and zero.json()["error"]["problems"][0]["path"] == "requests"
    subject = client.put(LIMITS, json={"scope": "tenant", "subject": "x", "requests": 1, "window_seconds": 1}, headers=acme)
    assert subject.status_code == 422 and subject.json()["error"]["code"] == "invalid-limit"
    assert subject.json()["error"]["problems"][0]["path"] == "subject"
    assert client.get(LIMITS, headers=acme).json()["data"] == []
