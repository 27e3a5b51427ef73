"""A canary secret never leaves the gateway; redirects are returned, not followed; the checked
address is the one connected to, whatever the name resolves to a moment later."""

from __future__ import annotations

import json
import logging
from ipaddress import IPv4Address
from typing import Any

import httpcore
import pytest
from sqlalchemy import select
from tests.gateway.conftest import SECRET_KEY, booking_request
from tests.gateway.upstream_server import Upstream
from tests.gateway.wire import fetch_json

from skillhouse.gateway import BoundReleases, Gateway, GatewayConfig, TurnContext, UpstreamClient
from skillhouse.gateway.addresses import IPAddress
from skillhouse.gateway.audit_queries import AuditFilter, audit_rows
from skillhouse.gateway.upstream import PinnedTransport
from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import AuditRow, CredentialRow, IdempotencyRow

CANARY = "canary-7f3a9c2e1b-do-not-leak"
HOUSE = "http://hollowbrook.local:8084"  # the example house is plain http: its bindings opt in


def _echo(path: str = "/echo") -> dict[str, Any]:
    return {"method": "GET", "url": f"http://hollowbrook.local:8084{path}", "headers": {}, "body": None}


def _sent_headers(upstream: Upstream) -> dict[str, str]:
    return {k.lower(): v for k, v in upstream.recorder.requests[0]["headers"].items()}


def _everything_stored(database: Database) -> str:
    with database.transaction() as session:
        rows: list[Any] = [*session.scalars(select(AuditRow)), *session.scalars(select(IdempotencyRow))]
        rows += list(session.scalars(select(CredentialRow)))
        return json.dumps([{c.name: str(getattr(r, c.name)) for c in r.__table__.columns} for r in rows])


def test_a_canary_secret_never_appears_anywhere_even_when_echoed(
    gateway: Gateway, turn: TurnContext, upstream: Upstream, database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    gateway.credentials.put(turn.tenant, HOUSE, "bearer", CANARY, allow_http=True)
    answers = [fetch_json(gateway, turn, _echo()), fetch_json(gateway, turn, booking_request())]
    answers.append(fetch_json(gateway, turn, booking_request()))  # a replay from the store
    answers.append(fetch_json(gateway, turn, {**_echo(), "url": "http://elsewhere.example/"}))  # an error
    # the upstream really received it, so redaction (not absence) is what kept it out
    assert _sent_headers(upstream)["authorization"] == f"Bearer {CANARY}"
    seen = json.dumps(answers) + caplog.text + _everything_stored(database)
    assert CANARY not in seen
    assert "[REDACTED]" in answers[0]["body"] and "[REDACTED]" in answers[0]["headers"]["x-echo-auth"]
    assert [b.host for b in gateway.credentials.list(turn.tenant)] == ["hollowbrook.local"]


@pytest.mark.parametrize("encode", ["base64", "urlencoded"])
def test_an_encoded_echo_of_the_secret_is_redacted(encode: str) -> None:
    import base64
    from urllib.parse import quote

    from skillhouse.gateway.redaction import Redactor

    spelled = base64.b64encode(CANARY.encode()).decode() if encode == "base64" else quote(CANARY + "/x", safe="")
    assert CANARY not in Redactor([CANARY, CANARY + "/x"]).text(f"token={spelled}")
    assert "canary" not in Redactor([CANARY, CANARY + "/x"]).text(f"token={spelled}")


def test_the_guest_cannot_override_the_bound_credential(gateway: Gateway, turn: TurnContext, upstream: Upstream) -> None:
    gateway.credentials.put(turn.tenant, HOUSE, "header", CANARY, header="X-Api-Key", allow_http=True)
    request = _echo()
    request["headers"] = {"x-api-key": "guest-made-this-up"}
    fetch_json(gateway, turn, request)
    assert _sent_headers(upstream)["x-api-key"] == CANARY


def test_a_redirect_to_a_private_address_is_returned_not_followed(
    gateway: Gateway, turn: TurnContext, upstream: Upstream
) -> None:
    answer = fetch_json(gateway, turn, _echo("/redirect"))
    assert answer["status"] == 302
    assert len(upstream.recorder.requests) == 1
    followed = fetch_json(gateway, turn, {**_echo(), "url": answer["headers"]["location"]})
    assert followed["error"]["code"] == "egress-refused"


class RecordingBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self.connected: list[tuple[str, int]] = []

    def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        self.connected.append((host, port))
        raise httpcore.ConnectError("recorded, not connected")


def test_rebinding_between_check_and_connect_cannot_reach_the_new_address(database: Database) -> None:
    answers = iter([[IPv4Address("93.184.216.34")], [IPv4Address("127.0.0.1")]])
    lookups: list[str] = []

    def rebinding(host: str, port: int) -> list[IPAddress]:
        lookups.append(host)
        return next(answers)

    backend = RecordingBackend()
    client = UpstreamClient(lambda decision: PinnedTransport(decision.address, decision.port, backend))
    gateway = Gateway(database, GatewayConfig(), secret_key=SECRET_KEY, upstream=client, resolver=rebinding)
    release = {"skill": "api", "version": "1", "operations": [
        {"name": "get", "method": "GET", "url": "http://rebind.example.com/data", "arguments": [], "identity": []}
    ]}  # fmt: skip
    turn = TurnContext("tenant-a", None, BoundReleases([release]))
    answer = fetch_json(gateway, turn, {"method": "GET", "url": "http://rebind.example.com/data", "headers": {}, "body": None})
    assert answer["error"]["code"] == "upstream-unreachable"
    assert lookups == ["rebind.example.com"]
    assert backend.connected == [("93.184.216.34", 80)]
    # the next request is judged afresh: now the name resolves to loopback and is refused
    second = fetch_json(gateway, turn, {"method": "GET", "url": "http://rebind.example.com/data", "headers": {}, "body": None})
    assert second["error"]["code"] == "egress-refused"
    assert backend.connected == [("93.184.216.34", 80)]


def test_every_decision_has_an_audit_row(gateway: Gateway, turn: TurnContext, database: Database) -> None:
    fetch_json(gateway, turn, booking_request())
    fetch_json(gateway, turn, booking_request())
    fetch_json(gateway, turn, {**_echo(), "url": "http://10.0.0.1/"})
    decisions = [row.decision for row in reversed(audit_rows(gateway.database, turn.tenant, AuditFilter()))]
    assert decisions == ["allowed", "replayed", "refused"]


@pytest.mark.parametrize(
    "request_",
    [None, {"method": "BREW", "url": "http://x/"}, {"method": "GET", "url": 5}, {"method": "GET", "url": "http://h/", "headers": {"a": 1}},
     {"method": "GET", "url": "http://h/", "headers": {"a": "b\r\nc: d"}}, {"method": "GET", "url": "http://h/", "body": {}}],
)  # fmt: skip
def test_a_malformed_request_is_refused_with_a_code(gateway: Gateway, turn: TurnContext, request_: Any) -> None:
    assert fetch_json(gateway, turn, request_)["error"]["code"] == "invalid-request"
