"""Idempotency through the gateway's Python interface against a real loopback upstream."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from tests.gateway.conftest import booking_request, gateway_for
from tests.gateway.upstream_server import Upstream
from tests.gateway.wire import fetch_json

from skillhouse.gateway import Gateway, KeyPolicy, TurnContext
from skillhouse.gateway.audit_queries import AuditFilter, audit_rows
from skillhouse.store.prepared import DriverTransaction, Pending, Prepared


def test_a_hundred_concurrent_identical_bookings_make_one_booking(
    gateway: Gateway, turn: TurnContext, upstream: Upstream
) -> None:
    start = threading.Barrier(20)

    def book(_: int) -> dict[str, Any]:
        with contextlib.suppress(threading.BrokenBarrierError):
            start.wait(5)
        return fetch_json(gateway, turn, booking_request())

    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(book, range(100)))
    assert len(upstream.recorder.bookings) == 1
    assert all(a.get("status") == 201 for a in answers), [a for a in answers if "error" in a][:3]
    assert sum(1 for a in answers if a.get("replayed")) == 99
    assert len({json.loads(a["body"])["id"] for a in answers}) == 1


def test_the_derived_key_is_sent_upstream_as_idempotency_key(gateway: Gateway, turn: TurnContext, upstream: Upstream) -> None:
    fetch_json(gateway, turn, booking_request())
    sent = upstream.recorder.requests[0]["headers"]
    assert sent["Idempotency-Key"].startswith("skh-")


def test_the_same_identity_with_a_different_payload_is_a_mismatch(
    gateway: Gateway, turn: TurnContext, upstream: Upstream
) -> None:
    assert fetch_json(gateway, turn, booking_request(note="late"))["status"] == 201
    answer = fetch_json(gateway, turn, booking_request(note="early"))
    assert answer["error"]["code"] == "idempotency-mismatch"
    assert len(upstream.recorder.bookings) == 1


def test_a_different_identity_is_a_different_booking(gateway: Gateway, turn: TurnContext, upstream: Upstream) -> None:
    fetch_json(gateway, turn, booking_request("Ada"))
    fetch_json(gateway, turn, booking_request("Grace"))
    assert len(upstream.recorder.bookings) == 2


def test_a_guest_cannot_choose_its_own_idempotency_key(gateway: Gateway, turn: TurnContext, upstream: Upstream) -> None:
    first = booking_request()
    first["headers"]["Idempotency-Key"] = "guest-chosen-1"
    second = booking_request()
    second["headers"]["Idempotency-Key"] = "guest-chosen-2"
    fetch_json(gateway, turn, first)
    assert fetch_json(gateway, turn, second)["replayed"] is True
    assert len(upstream.recorder.bookings) == 1


def test_a_duplicate_in_flight_gets_a_conflict_after_its_bounded_wait(
    database: Any, upstream: Upstream, turn: TurnContext
) -> None:
    gateway = gateway_for(database, upstream, keys=KeyPolicy(wait_seconds=0.2))
    upstream.recorder.hold = threading.Event()
    first: list[dict[str, Any]] = []
    runner = threading.Thread(target=lambda: first.append(fetch_json(gateway, turn, booking_request())))
    runner.start()
    assert upstream.recorder.received.wait(5)
    assert fetch_json(gateway, turn, booking_request())["error"]["code"] == "idempotency-conflict"
    upstream.recorder.hold.set()
    runner.join(5)
    assert first[0]["status"] == 201
    assert len(upstream.recorder.bookings) == 1
    gateway.close()


def test_the_audit_row_is_written_with_the_claim_before_the_request_leaves(
    gateway: Gateway, turn: TurnContext, upstream: Upstream
) -> None:
    upstream.recorder.hold = threading.Event()
    runner = threading.Thread(target=lambda: fetch_json(gateway, turn, booking_request()))
    runner.start()
    assert upstream.recorder.received.wait(5)
    in_flight = audit_rows(gateway.database, turn.tenant, AuditFilter())
    upstream.recorder.hold.set()
    runner.join(5)
    assert [(row.decision, row.status) for row in in_flight] == [("allowed", None)]
    assert (in_flight[0].idempotency_key or "").startswith("skh-")
    finished = audit_rows(gateway.database, turn.tenant, AuditFilter())
    assert [(row.id, row.decision, row.status) for row in finished] == [(in_flight[0].id, "allowed", 201)]


def test_a_fresh_booking_claims_its_key_in_the_stored_state_read_on_postgresql(
    gateway: Gateway, turn: TurnContext, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    statements: list[str] = []
    send = DriverTransaction.send

    def counted(transaction: DriverTransaction, statement: Prepared, values: Mapping[str, Any]) -> Pending:
        statements.append(statement.sql)
        return send(transaction, statement, values)

    monkeypatch.setattr(DriverTransaction, "send", counted)
    answer = fetch_json(gateway, turn, booking_request())
    assert answer.get("status") == 201 and len(upstream.recorder.bookings) == 1
    # PostgreSQL: the read that claims, the completion (one round trip each); SQLite: the read, the claim
    # (key row, audit row), the completion (key row, audit row)
    assert len(statements) == (2 if gateway.database.dialect == "postgresql" else 5)
    [row] = audit_rows(gateway.database, turn.tenant, AuditFilter())
    assert (row.decision, row.status, row.operation) == ("allowed", 201, "hollowbrook.create_booking")
    assert (row.idempotency_key or "").startswith("skh-") and row.address == "127.0.0.1"
    assert fetch_json(gateway, turn, booking_request()).get("replayed") is True
    assert len(upstream.recorder.bookings) == 1
