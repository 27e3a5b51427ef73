"""Bounded per call and per tenant: a 400 MB answer is cut at the cap with memory bounded, a trickling
upstream is cut at the call's deadline, and one tenant's hanging upstream fills only its own slots."""

from __future__ import annotations

import json
import threading
import tracemalloc
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tests.gateway.conftest import SECRET_KEY, booking_request
from tests.gateway.hostile_upstream import HUGE, Hostile
from tests.gateway.wire import fetch_json

from skillhouse.gateway import Gateway, GatewayConfig, TurnContext, UpstreamClient
from skillhouse.gateway.audit_queries import AuditFilter, audit_rows
from skillhouse.store.database import Database

CAP = 1024 * 1024
ROOMS = {"method": "GET", "url": "http://hollowbrook.local:8084/rooms", "headers": {}, "body": None}


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    with Hostile() as server:
        yield server


def gateway_with(database: Database, hostile: Hostile, **config: Any) -> Gateway:
    client = UpstreamClient(timeout=httpx.Timeout(30.0, connect=5.0), max_response_bytes=CAP,
                            deadline_seconds=config.pop("deadline_seconds", 60.0))  # fmt: skip
    resolve = {("hollowbrook.local", 8084): f"127.0.0.1:{hostile.port}"}
    return Gateway(database, GatewayConfig(resolve=resolve, **config), secret_key=SECRET_KEY, upstream=client)


def test_a_400_mb_answer_stops_at_the_cap_with_memory_bounded_and_its_key_completed(
    database: Database, hostile: Hostile, turn: TurnContext
) -> None:
    hostile.mode = "huge"
    gateway = gateway_with(database, hostile)
    tracemalloc.start()
    try:
        answer = fetch_json(gateway, turn, booking_request())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert answer["error"]["code"] == "upstream-response-too-large" and answer["error"]["status"] == 200
    assert peak < 8 * CAP, f"peak {peak} bytes while reading a capped answer"
    # the gateway hung up (the connection was closed, not pooled half-read), long before 400 MB
    assert hostile.stopped.wait(10) and hostile.streamed < HUGE
    # the request was done: a duplicate replays the refusal, nothing is sent again, no person is needed
    again = fetch_json(gateway, turn, booking_request())
    assert again["error"]["code"] == "upstream-response-too-large" and again["replayed"] is True
    assert len(hostile.requests) == 1
    assert [k.state for k in gateway.key_review.list(turn.tenant)] == ["completed"]
    assert audit_rows(gateway.database, turn.tenant, AuditFilter())[-1].code == "upstream-response-too-large"
    gateway.close()


def test_a_declared_400_mb_answer_is_refused_without_reading_it(database: Database, hostile: Hostile, turn: TurnContext) -> None:
    hostile.mode = "huge-declared"
    gateway = gateway_with(database, hostile)
    answer = fetch_json(gateway, turn, ROOMS)
    assert answer["error"]["code"] == "upstream-response-too-large" and answer["error"]["sent"] is True
    assert hostile.stopped.wait(10) and hostile.streamed < HUGE
    assert fetch_json(gateway, turn, ROOMS)["error"]["code"] == "upstream-response-too-large"  # no key: sent again, refused again
    gateway.close()


def test_an_answer_encoded_against_the_request_is_withheld(database: Database, hostile: Hostile, turn: TurnContext) -> None:
    hostile.mode = "gzip"
    gateway = gateway_with(database, hostile)
    assert fetch_json(gateway, turn, ROOMS)["error"]["code"] == "upstream-encoding-refused"
    gateway.close()


def test_a_trickling_upstream_is_cut_at_the_calls_deadline_and_its_key_left_unresolved(
    database: Database, hostile: Hostile, turn: TurnContext
) -> None:
    hostile.mode = "trickle"  # a byte every 50 ms: every read is quick, only the whole call is late
    gateway = gateway_with(database, hostile, deadline_seconds=1.0)
    answer = fetch_json(gateway, turn, booking_request())
    assert answer["error"]["code"] == "upstream-unresolved" and answer["error"]["cause"] == "deadline-exceeded"
    assert hostile.stopped.wait(10)
    assert [k.state for k in gateway.key_review.list(turn.tenant)] == ["unresolved"]
    gateway.close()


def test_a_trickling_answer_without_a_key_is_a_deadline_refusal(database: Database, hostile: Hostile, turn: TurnContext) -> None:
    hostile.mode = "trickle"
    gateway = gateway_with(database, hostile, deadline_seconds=1.0)
    answer = fetch_json(gateway, turn, ROOMS)
    assert answer["error"]["code"] == "upstream-deadline-exceeded" and answer["error"]["sent"] is True
    gateway.close()


def test_a_tenant_with_every_slot_hanging_is_busy_while_another_tenant_goes_through(
    database: Database, hostile: Hostile, turn: TurnContext
) -> None:
    hostile.mode = "hang"
    hostile.by_guest = {"Grace": "ok"}
    gateway = gateway_with(database, hostile, tenant_calls=2, tenant_wait_seconds=0.2)
    hanging = [threading.Thread(target=fetch_json, args=(gateway, turn, booking_request(name))) for name in ("Ada", "Alan")]
    for thread in hanging:
        thread.start()
    for _ in range(100):  # until both hanging calls have reached the upstream
        if len(hostile.requests) == 2:
            break
        hostile.received.wait(0.1)
        hostile.received.clear()
    assert len(hostile.requests) == 2
    busy = fetch_json(gateway, turn, booking_request("Edsger"))
    assert busy["error"]["code"] == "tenant-busy" and busy["error"]["sent"] is False
    other = TurnContext("tenant-b", "turn-b", turn.releases)
    through = fetch_json(gateway, other, booking_request("Grace"))
    assert through["status"] == 201 and json.loads(through["body"])["guest_name"] == "Grace"
    assert {k.state for k in gateway.key_review.list(turn.tenant)} == {"running"}  # Edsger's key was released
    assert len(gateway.key_review.list(turn.tenant)) == 2
    hostile.release.set()
    for thread in hanging:
        thread.join(10)
    assert fetch_json(gateway, turn, booking_request("Edsger"))["status"] == 201
    gateway.close()
