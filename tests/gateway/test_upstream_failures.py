"""Whether anything left decides what a failure means: before the first byte it is "not sent" and the
key is released; after it, the key is unresolved. Each stage is failed for real: a loopback server, or
a network backend whose connection fails exactly there."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from ipaddress import IPv4Address
from typing import Any

import httpcore
import httpx
import pytest
from tests.gateway.conftest import SECRET_KEY, booking_request
from tests.gateway.hostile_upstream import Hostile
from tests.gateway.wire import fetch_json

from skillhouse.gateway import Gateway, GatewayConfig, TurnContext, UpstreamClient
from skillhouse.gateway.egress import EgressDecision, parse_target
from skillhouse.gateway.upstream import MaybeSent, NotSent, PinnedTransport
from skillhouse.store.database import Database, open_database

RESOLVE = ("hollowbrook.local", 8084)


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    with Hostile() as server:
        yield server


def decision_for(url: str, port: int) -> EgressDecision:
    return EgressDecision(parse_target(url), IPv4Address("127.0.0.1"), port, True)


class FailingStream(httpcore.NetworkStream):
    """A connection that fails at one stage: ``tls``, ``write`` (part way through the request: the
    gateway sends it in one write) or ``read``."""

    def __init__(self, stage: str, error: BaseException) -> None:
        self.stage, self.error, self.written = stage, error, b""

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        raise self.error if self.stage == "read" else httpcore.ReadError("no answer")

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if self.stage == "write":
            self.written += buffer[:16]
            raise self.error
        self.written += buffer

    def close(self) -> None:
        pass

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:  # fmt: skip
        if self.stage == "tls":
            raise self.error
        return self


class FailingBackend(httpcore.NetworkBackend):
    def __init__(self, stage: str, error: BaseException) -> None:
        self.stage, self.error = stage, error
        self.streams: list[FailingStream] = []

    def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        if self.stage == "connect":
            raise self.error
        self.streams.append(FailingStream(self.stage, self.error))
        return self.streams[-1]


STAGES = [
    ("connect", httpcore.ConnectError("refused"), NotSent, "upstream-unreachable"),
    ("connect", httpcore.ConnectTimeout("slow"), NotSent, "upstream-unreachable"),
    ("connect", RuntimeError("a bug in a backend"), NotSent, "upstream-unreachable"),
    ("connect", TypeError("a bad argument"), NotSent, "upstream-request-refused"),
    ("tls", ssl.SSLError("bad context"), NotSent, "upstream-unreachable"),
    ("tls", httpcore.ConnectError("certificate verify failed"), NotSent, "upstream-unreachable"),
    ("write", httpcore.WriteError("reset mid-body"), MaybeSent, None),
    ("write", httpcore.WriteTimeout("stalled"), MaybeSent, None),
    ("write", RuntimeError("a bug after the first byte"), MaybeSent, None),
    ("read", httpcore.ReadError("reset"), MaybeSent, None),
    ("read", httpcore.RemoteProtocolError("garbage"), MaybeSent, None),
]


@pytest.mark.parametrize(("stage", "error", "expected", "code"), STAGES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_each_stage_fails_as_not_sent_before_the_first_byte_and_maybe_sent_after(
    stage: str, error: BaseException, expected: type[Exception], code: str | None
) -> None:
    backend = FailingBackend(stage, error)
    client = UpstreamClient(lambda decision: PinnedTransport(decision.address, decision.port, backend))
    url = "https://api.test/bookings" if stage == "tls" else "http://api.test/bookings"
    with pytest.raises(expected) as failure:
        client.send(decision_for(url, 443), "POST", url, {"Content-Type": "application/json"}, '{"a": 1}')
    if isinstance(failure.value, NotSent):
        assert failure.value.code == code
        assert all(stream.written == b"" for stream in backend.streams)
    client.close()


@pytest.mark.parametrize(
    ("url", "headers", "field"),
    [
        ("http://hollowbrook.local:8084/rooms", {"X-Note": "caf\u00e9"}, "headers"),  # httpx: UnicodeEncodeError
        ("http://hollowbrook.local:8084/rooms", {"Bad Header": "x"}, "headers"),  # h11: LocalProtocolError
        ("http://hollowbrook.local:8084/rooms\x01", {}, "url"),  # httpx: InvalidURL
        ("http://hollowbrook.local:8084/rooms", {}, "body"),  # a lone surrogate in the body
    ],
)
def test_a_request_the_client_will_not_put_on_the_wire_is_not_sent_with_its_field(
    hostile: Hostile, url: str, headers: dict[str, str], field: str
) -> None:
    client = UpstreamClient()
    body = '{"note": "\ud800"}' if field == "body" else None
    with pytest.raises(NotSent) as failure:
        client.send(decision_for("http://hollowbrook.local:8084/rooms", hostile.port), "POST", url, headers, body)
    assert (failure.value.code, failure.value.field) == ("upstream-request-refused", field)
    assert hostile.requests == []
    client.close()


def test_a_closed_port_is_not_sent() -> None:
    with Hostile() as closed:
        port = closed.port
    client = UpstreamClient()
    with pytest.raises(NotSent) as failure:
        client.send(decision_for("http://api.test/rooms", port), "GET", "http://api.test/rooms", {}, None)
    assert failure.value.code == "upstream-unreachable"


def test_a_hang_up_after_the_request_arrived_is_maybe_sent(hostile: Hostile) -> None:
    hostile.mode = "close"
    client = UpstreamClient()
    with pytest.raises(MaybeSent):
        client.send(decision_for("http://api.test/bookings", hostile.port), "POST", "http://api.test/bookings", {}, "{}")
    assert len(hostile.requests) == 1
    client.close()


def test_no_free_connection_in_the_pool_is_not_sent(hostile: Hostile) -> None:
    hostile.mode = "hang"
    client = UpstreamClient(lambda d: PinnedTransport(d.address, d.port, max_connections=1),
                            timeout=httpx.Timeout(30.0, pool=0.1))  # fmt: skip
    decision = decision_for("http://api.test/rooms", hostile.port)
    first = threading.Thread(target=lambda: client.send(decision, "GET", "http://api.test/rooms", {}, None))
    first.start()
    assert hostile.received.wait(10)
    with pytest.raises(NotSent) as failure:
        client.send(decision, "GET", "http://api.test/rooms", {}, None)
    assert failure.value.code == "upstream-unreachable"
    hostile.release.set()
    first.join(10)
    assert len(hostile.requests) == 1
    client.close()


def gateway_with(database: Database, hostile: Hostile, client: UpstreamClient | None = None) -> Gateway:
    config = GatewayConfig(resolve={RESOLVE: f"127.0.0.1:{hostile.port}"})
    return Gateway(database, config, secret_key=SECRET_KEY, upstream=client)


def test_a_failure_before_the_first_byte_releases_the_key_so_the_booking_can_run(
    database: Database, hostile: Hostile, turn: TurnContext
) -> None:
    backend = FailingBackend("connect", RuntimeError("unexpected"))
    broken = gateway_with(database, hostile, UpstreamClient(lambda d: PinnedTransport(d.address, d.port, backend)))
    answer = fetch_json(broken, turn, booking_request())
    assert answer["error"]["code"] == "upstream-unreachable" and answer["error"]["sent"] is False
    assert broken.key_review.list(turn.tenant) == []
    broken.close()
    working = gateway_with(database, hostile)
    assert fetch_json(working, turn, booking_request())["status"] == 201
    assert len(hostile.bookings) == 1
    working.close()


def test_a_transport_that_cannot_even_be_built_is_not_sent(database: Database, hostile: Hostile, turn: TurnContext) -> None:
    def no_transport(decision: EgressDecision) -> httpx.BaseTransport:
        raise ssl.SSLError("the CA bundle cannot be loaded")

    gateway = gateway_with(database, hostile, UpstreamClient(no_transport))
    answer = fetch_json(gateway, turn, booking_request())
    assert answer["error"]["code"] == "upstream-unreachable"
    assert gateway.key_review.list(turn.tenant) == [] and hostile.requests == []
    gateway.close()


def test_a_hang_up_after_sending_leaves_the_key_unresolved_and_never_resends(
    database: Database, hostile: Hostile, turn: TurnContext
) -> None:
    hostile.mode = "close"
    gateway = gateway_with(database, hostile)
    answer = fetch_json(gateway, turn, booking_request())
    assert answer["error"]["code"] == "upstream-unresolved" and answer["error"]["sent"] is True
    hostile.mode = "ok"
    assert fetch_json(gateway, turn, booking_request())["error"]["code"] == "upstream-unresolved"
    assert len(hostile.requests) == 1
    assert [(k.state, k.key) for k in gateway.key_review.list(turn.tenant)] == [("unresolved", answer["error"]["idempotency_key"])]
    gateway.close()


def test_a_fault_of_the_gateways_own_store_is_a_refusal_not_an_exception(database_url: str, turn: TurnContext) -> None:
    unmigrated = open_database(database_url, migrate=False)  # no tables: every read of the store fails
    gateway = Gateway(unmigrated, GatewayConfig(resolve={RESOLVE: "127.0.0.1:9"}), secret_key=SECRET_KEY)
    try:
        assert fetch_json(gateway, turn, booking_request())["error"]["code"] == "gateway-failure"
    finally:
        gateway.close()
        unmigrated.dispose()


CHARGE = {"method": "POST", "url": "http://hollowbrook.local:8084/charges", "headers": {"Content-Type": "application/json"},
          "body": '{"amount_cents": 19000, "booking_id": "b1", "description": "Two nights"}'}


def test_an_approved_request_that_was_not_sent_keeps_its_approval_and_runs_later(
    database: Database, hostile: Hostile, turn: TurnContext
) -> None:
    with Hostile() as closed:
        port = closed.port  # nothing listens here any more
    unreachable = Gateway(database, GatewayConfig(resolve={RESOLVE: f"127.0.0.1:{port}"}), secret_key=SECRET_KEY)
    approval_id = fetch_json(unreachable, turn, CHARGE)["error"]["approval_id"]
    unreachable.approvals.decide(turn.tenant, approval_id, True, by="ops")
    assert fetch_json(unreachable, turn, CHARGE)["error"]["code"] == "upstream-unreachable"
    assert unreachable.approvals.get(turn.tenant, approval_id).state == "approved"  # given back, not used up
    unreachable.close()
    working = gateway_with(database, hostile)
    assert fetch_json(working, turn, CHARGE)["status"] == 201
    assert working.approvals.get(turn.tenant, approval_id).state == "used"
    assert len(hostile.requests) == 1
    working.close()
