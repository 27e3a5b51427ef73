"""Rate limits held by the database: N per window admits exactly N across replicas (two engines on one store, and
three processes on one PostgreSQL),
a limited call is not sent, claims no key and keeps its approval, and an upstream's 429 ``Retry-After`` holds
the tenant's later calls to that host."""

from __future__ import annotations

import threading
from email.utils import formatdate

import pytest
from tests.gateway.conftest import (
    booking_request,
    gateway_for,
)
from tests.gateway.test_approvals import charge
from tests.gateway.upstream_server import Upstream
from tests.gateway.wire import fetch_json

from skillhouse.gateway import Gateway, GatewayError, TurnContext, parse_target
from skillhouse.gateway.audit_queries import AuditFilter, audit_rows
from skillhouse.gateway.errors import RateLimited
from skillhouse.gateway.limits import RateLimits, gcra, retry_after_seconds
from skillhouse.store.database import Database, open_database

LIMIT = 10
CALLERS = 40
BOOKING = "hollowbrook.create_booking"


def test_a_limit_of_n_per_window_admits_exactly_n_across_two_replicas_under_concurrent_calls(database_url: str) -> None:
    replicas = [open_database(database_url) for _ in range(2)]  # two engines, as two serve processes have
    RateLimits(replicas[0]).set("acme", "tenant", "", LIMIT, 3600)
    start = threading.Barrier(CALLERS)
    admitted: list[int] = []
    limited: list[int] = []

    def caller(limits: RateLimits) -> None:
        start.wait(timeout=30)
        try:
            limits.admit("acme", BOOKING, "hollowbrook.local")
        except RateLimited as exc:
            limited.append(exc.retry_after)
        else:
            admitted.append(1)

    threads = [threading.Thread(target=caller, args=(RateLimits(replicas[i % 2]),)) for i in range(CALLERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for replica in replicas:
        replica.dispose()
    assert len(admitted) == LIMIT
    assert len(limited) == CALLERS - LIMIT
    # the next request is admitted one interval (3600 s / 10) after the burst (whole seconds, rounded up)
    assert all(0 < wait <= 361 for wait in limited)


def test_gcra_lets_a_burst_of_n_through_then_one_per_interval() -> None:
    tat, verdicts = 0.0, []
    for _ in range(4):
        ok, value = gcra(tat, 100.0, 3, 30.0)
        verdicts.append(ok)
        tat = value if ok else tat
    assert verdicts == [True, True, True, False]
    assert gcra(tat, 100.0, 3, 30.0) == (False, 10.0)
    assert gcra(tat, 110.0, 3, 30.0)[0] is True


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after_seconds("120", 1000.0) == 120.0
    assert retry_after_seconds(formatdate(1060.0, usegmt=True), 1000.0) == 60.0
    assert retry_after_seconds("soon", 1000.0) is None


def test_a_limited_call_is_not_sent_and_claims_no_key(gateway: Gateway, turn: TurnContext, upstream: Upstream) -> None:
    gateway.limits.set(turn.tenant, "operation", BOOKING, 1, 3600)
    assert fetch_json(gateway, turn, booking_request("Ada"))["status"] == 201
    refused = fetch_json(gateway, turn, booking_request("Grace"))
    assert refused["error"]["code"] == "rate-limited"
    assert refused["error"]["limit"] == f"operation {BOOKING}" and refused["error"]["retry_after"] > 0
    assert len(upstream.recorder.bookings) == 1
    assert len(gateway.key_review.list(turn.tenant)) == 1
    newest = audit_rows(gateway.database, turn.tenant, AuditFilter())[0]
    assert (newest.decision, newest.code) == ("refused", "rate-limited")
    # another operation of the same host, and another tenant, are not held by it
    assert fetch_json(gateway, turn, {"method": "GET", "url": "http://hollowbrook.local:8084/rooms", "headers": {},
                                "body": None})["status"] == 200
    other = TurnContext("tenant-b", "turn-2", turn.releases)
    assert fetch_json(gateway, other, booking_request("Grace"))["status"] == 201


def test_a_limited_approved_call_keeps_its_approval_for_later(gateway: Gateway, turn: TurnContext,
                                                              upstream: Upstream) -> None:
    approval_id = fetch_json(gateway, turn, charge())["error"]["approval_id"]
    gateway.approvals.decide(turn.tenant, approval_id, approve=True, by="ops")
    gateway.limits.set(turn.tenant, "host", "hollowbrook.local", 1, 3600)
    fetch_json(gateway, turn, {"method": "GET", "url": "http://hollowbrook.local:8084/rooms", "headers": {}, "body": None})
    assert fetch_json(gateway, turn, charge())["error"]["code"] == "rate-limited"
    assert upstream.recorder.charges == []
    assert gateway.approvals.get(turn.tenant, approval_id).state == "approved"
    gateway.limits.delete(turn.tenant, "host", "hollowbrook.local")
    assert fetch_json(gateway, turn, charge())["status"] == 201
    assert len(upstream.recorder.charges) == 1


def test_an_upstream_429_with_retry_after_holds_the_tenants_later_calls_to_that_host(
    database: Database, upstream: Upstream, turn: TurnContext
) -> None:
    gateway = gateway_for(database, upstream)
    upstream.recorder.busy = "120"
    assert fetch_json(gateway, turn, booking_request("Ada"))["status"] == 429
    upstream.recorder.busy = None
    held = fetch_json(gateway, turn, booking_request("Grace"))
    assert held["error"]["code"] == "rate-limited" and held["error"]["limit"] == "upstream hollowbrook.local"
    assert 115 <= held["error"]["retry_after"] <= 120
    assert len(upstream.recorder.requests) == 1
    [wait] = gateway.limits.waits(turn.tenant)
    assert (wait.host, wait.status) == ("hollowbrook.local", 429)
    other = TurnContext("tenant-b", "turn-2", turn.releases)
    assert fetch_json(gateway, other, booking_request("Grace"))["status"] == 201
    gateway.close()


@pytest.mark.parametrize(("scope", "subject", "requests", "window", "field"), [
    ("planet", "", 1, 1.0, "scope"),
    ("tenant", "x", 1, 1.0, "subject"),
    ("host", "", 1, 1.0, "subject"),
    ("host", "a.example/path", 1, 1.0, "subject"),
    ("operation", BOOKING, 0, 1.0, "requests"),
    ("operation", BOOKING, 1, 0.0, "window_seconds"),
    ("operation", BOOKING, 1, float("inf"), "window_seconds"),
    ("operation", BOOKING, None, None, "requests"),
    ("operation", BOOKING, 5, None, "window_seconds"),
])
def test_a_bad_limit_is_refused_naming_its_field(database: Database, scope: str, subject: str, requests: int | None,
                                                 window: float | None, field: str) -> None:
    with pytest.raises(GatewayError) as refused:
        RateLimits(database).set("acme", scope, subject, requests, window)
    assert (refused.value.code, refused.value.details["field"]) == ("invalid-limit", field)
    assert RateLimits(database).limits("acme") == []


def test_a_concurrent_call_limit_holds_across_two_replicas_and_frees_when_the_call_ends(
    database_url: str, upstream: Upstream, turn: TurnContext
) -> None:
    replicas = [open_database(database_url) for _ in range(2)]
    gateways = [gateway_for(replica, upstream) for replica in replicas]
    gateways[0].limits.set(turn.tenant, "host", "hollowbrook.local", None, None, concurrent=1)
    upstream.recorder.hold = threading.Event()
    answers: list[dict[str, object]] = []
    first = threading.Thread(target=lambda: answers.append(fetch_json(gateways[0], turn, booking_request("Ada"))))
    first.start()
    try:
        assert upstream.recorder.received.wait(10)
        busy = fetch_json(gateways[1], turn, booking_request("Grace"))
        assert (busy["error"]["code"], busy["error"]["retry_after"]) == ("rate-limited", 1)
    finally:
        upstream.recorder.hold.set()
        first.join(10)
    assert answers[0]["status"] == 201
    assert fetch_json(gateways[1], turn, booking_request("Grace"))["status"] == 201
    assert [b["guest_name"] for b in upstream.recorder.bookings] == ["Ada", "Grace"]
    for gateway, replica in zip(gateways, replicas, strict=True):
        gateway.close()
        replica.dispose()


def test_a_lease_left_by_a_replica_that_died_mid_call_expires(database: Database) -> None:
    limits = RateLimits(database)
    limits.set("acme", "tenant", "", None, None, concurrent=1)
    limits.admit("acme", None, "a.example", now=1000.0, lease_seconds=70.0)  # never released: the replica died
    with pytest.raises(RateLimited):
        limits.admit("acme", None, "a.example", now=1069.0)
    limits.release(limits.admit("acme", None, "a.example", now=1071.0))
    limits.admit("acme", None, "a.example", now=1072.0)


def test_deleting_a_limit_that_is_not_set_is_not_found(database: Database) -> None:
    with pytest.raises(GatewayError) as missing:
        RateLimits(database).delete("acme", "tenant", "")
    assert missing.value.code == "rate-limit-not-found"


def test_the_stored_state_read_says_when_a_limit_may_apply_so_others_pay_no_admission(gateway: Gateway) -> None:
    target = parse_target("http://hollowbrook.local:8084/bookings")

    def may_be_limited() -> bool:
        return gateway.stored.read("acme", target, None).may_be_limited

    assert may_be_limited() is False
    gateway.limits.set("acme", "host", "elsewhere.example", 1, 60)
    gateway.limits.set("globex", "tenant", "", 1, 60)
    assert may_be_limited() is False
    gateway.limits.set("acme", "host", "hollowbrook.local", 1, 60)
    assert may_be_limited() is True
    gateway.limits.delete("acme", "host", "hollowbrook.local")
    gateway.limits.note_answer("acme", "hollowbrook.local", 429, {"Retry-After": "30"})
    assert may_be_limited() is True
