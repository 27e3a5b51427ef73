"""OAuth 2.0 client credentials against a real authorization server (Authlib's) on loopback: the token is
fetched once, injected as a bearer token, shared by concurrent callers and replicas, refreshed before it
expires; a failing token endpoint ends the call before anything is sent; no secret leaks anywhere."""

from __future__ import annotations

import base64
import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from tests.gateway.conftest import SECRET_KEY, booking_request
from tests.gateway.oauth_server import AuthorizationServerOnLoopback, Client, authorization_server
from tests.gateway.upstream_server import Upstream
from tests.gateway.wire import fetch_json

from skillhouse.gateway import Gateway, GatewayConfig, TurnContext, tenant_rules
from skillhouse.gateway.errors import CredentialError
from skillhouse.gateway.oauth_client import ClientCredentials, client_credentials
from skillhouse.store.database import Database, open_database
from skillhouse.store.gateway_tables import (
    ApprovalRow,
    AuditRow,
    CredentialRow,
    IdempotencyRow,
    OAuthTokenRow,
)

CANARY = "canary-client-secret-5d1e8b-do-not-leak"
HOUSE = "http://hollowbrook.local:8084"
TOKEN_URL = "http://auth.local:9400/token"


class Clock:
    """The broker's clock, moved by the test instead of waited for."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def auth() -> Iterator[AuthorizationServerOnLoopback]:
    client = Client("skillhouse-app", CANARY, ("bookings:write", "rooms:read"))
    with authorization_server([client], expires_in=100) as server:
        yield server


def gateway_with_auth(database: Database, upstream: Upstream, auth: AuthorizationServerOnLoopback, **config: Any) -> Gateway:
    resolve = {("hollowbrook.local", 8084): f"127.0.0.1:{upstream.port}", ("auth.local", 9400): f"127.0.0.1:{auth.port}"}
    return Gateway(database, GatewayConfig(resolve=resolve, **config), secret_key=SECRET_KEY)


@pytest.fixture
def oauth_gateway(database: Database, upstream: Upstream, auth: AuthorizationServerOnLoopback) -> Iterator[Gateway]:
    gateway = gateway_with_auth(database, upstream, auth)
    yield gateway
    gateway.close()


def bind(gateway: Gateway, tenant: str, secret: str = CANARY, token_url: str = TOKEN_URL, **options: Any) -> None:
    client = client_credentials(token_url, "skillhouse-app", secret, ["bookings:write"], allow_http=True, **options)
    gateway.credentials.put_client_credentials(tenant, HOUSE, client, allow_http=True)


def rooms() -> dict[str, Any]:
    return {"method": "GET", "url": f"{HOUSE}/rooms", "headers": {}, "body": None}


def sent_authorizations(upstream: Upstream) -> list[str]:
    return [{k.lower(): v for k, v in r["headers"].items()}.get("authorization", "") for r in upstream.recorder.requests]


def issued_tokens(auth: AuthorizationServerOnLoopback) -> list[str]:
    return [t["access_token"] for t in auth.issued.tokens]


def test_the_token_is_fetched_once_and_sent_as_a_bearer_token(
    oauth_gateway: Gateway, turn: TurnContext, upstream: Upstream, auth: AuthorizationServerOnLoopback
) -> None:
    bind(oauth_gateway, turn.tenant)
    answers = [fetch_json(oauth_gateway, turn, rooms()) for _ in range(3)]
    assert [a["status"] for a in answers] == [200, 200, 200]
    assert auth.token_requests == 1
    (token,) = issued_tokens(auth)
    assert sent_authorizations(upstream) == [f"Bearer {token}"] * 3
    request = auth.issued.requests[0]
    assert request["form"] == {"grant_type": "client_credentials", "scope": "bookings:write"}
    assert request["headers"]["Authorization"] == "Basic " + base64.b64encode(f"skillhouse-app:{CANARY}".encode()).decode()


def test_client_secret_post_sends_the_client_in_the_form(
    oauth_gateway: Gateway, turn: TurnContext, upstream: Upstream, auth: AuthorizationServerOnLoopback
) -> None:
    bind(oauth_gateway, turn.tenant, auth_method="client_secret_post", audience="https://api.hollowbrook.local")
    assert fetch_json(oauth_gateway, turn, rooms())["status"] == 200
    form = auth.issued.requests[0]["form"]
    assert form["client_id"] == "skillhouse-app" and form["client_secret"] == CANARY
    assert form["audience"] == "https://api.hollowbrook.local"
    assert "authorization" not in {k.lower() for k in auth.issued.requests[0]["headers"]}


def test_the_token_is_replaced_shortly_before_it_expires_and_not_before(
    oauth_gateway: Gateway, turn: TurnContext, upstream: Upstream, auth: AuthorizationServerOnLoopback
) -> None:
    clock = Clock()
    oauth_gateway.tokens.clock = clock
    bind(oauth_gateway, turn.tenant)
    fetch_json(oauth_gateway, turn, rooms())
    clock.now += 89  # expires_in 100: replaced in the last tenth of its life
    fetch_json(oauth_gateway, turn, rooms())
    assert auth.token_requests == 1
    clock.now += 2
    fetch_json(oauth_gateway, turn, rooms())
    assert auth.token_requests == 2
    first, second = issued_tokens(auth)
    assert first != second
    assert sent_authorizations(upstream) == [f"Bearer {first}", f"Bearer {first}", f"Bearer {second}"]


def test_twenty_concurrent_calls_share_one_token_fetch(
    oauth_gateway: Gateway, turn: TurnContext, upstream: Upstream, auth: AuthorizationServerOnLoopback
) -> None:
    bind(oauth_gateway, turn.tenant)
    start = threading.Barrier(20)
    answers: list[dict[str, Any]] = []

    def call() -> None:
        start.wait(10)
        answers.append(fetch_json(oauth_gateway, turn, rooms()))

    threads = [threading.Thread(target=call) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert [a.get("status") for a in answers] == [200] * 20
    assert auth.token_requests == 1
    assert set(sent_authorizations(upstream)) == {f"Bearer {issued_tokens(auth)[0]}"}


def test_two_replicas_on_one_database_share_one_token_fetch(
    database_url: str, database: Database, turn: TurnContext, upstream: Upstream, auth: AuthorizationServerOnLoopback
) -> None:
    database.migrate()
    other_database = open_database(database_url)
    replicas = [gateway_with_auth(database, upstream, auth), gateway_with_auth(other_database, upstream, auth)]
    bind(replicas[0], turn.tenant)
    start = threading.Barrier(20)
    answers: list[dict[str, Any]] = []

    def call(gateway: Gateway) -> None:
        start.wait(10)
        answers.append(fetch_json(gateway, turn, rooms()))

    threads = [threading.Thread(target=call, args=(replicas[n % 2],)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    try:
        assert [a.get("status") for a in answers] == [200] * 20
        assert auth.token_requests == 1
        assert replicas[0].tokens.fetches + replicas[1].tokens.fetches == 1
        assert set(sent_authorizations(upstream)) == {f"Bearer {issued_tokens(auth)[0]}"}
    finally:
        for gateway in replicas:
            gateway.close()
        other_database.dispose()


def test_a_401_from_the_upstream_makes_the_next_call_fetch_a_new_token_without_retrying(
    oauth_gateway: Gateway, turn: TurnContext, upstream: Upstream, auth: AuthorizationServerOnLoopback, database: Database
) -> None:
    bind(oauth_gateway, turn.tenant)
    refused = fetch_json(oauth_gateway, turn, {**rooms(), "url": f"{HOUSE}/unauthorized"})
    assert refused["status"] == 401 and len(upstream.recorder.requests) == 1  # answered, not retried
    with database.transaction() as session:
        assert list(session.scalars(select(OAuthTokenRow))) == []  # forgotten for every replica too
    assert fetch_json(oauth_gateway, turn, rooms())["status"] == 200
    first, second = issued_tokens(auth)
    assert sent_authorizations(upstream) == [f"Bearer {first}", f"Bearer {second}"]


def test_binding_the_client_again_or_deleting_it_drops_its_token(
    oauth_gateway: Gateway, turn: TurnContext, upstream: Upstream, auth: AuthorizationServerOnLoopback, database: Database
) -> None:
    bind(oauth_gateway, turn.tenant)
    fetch_json(oauth_gateway, turn, rooms())
    bind(oauth_gateway, turn.tenant)  # bound again: a new value, so a new token
    fetch_json(oauth_gateway, turn, rooms())
    assert auth.token_requests == 2
    with database.transaction() as session:
        assert len(list(session.scalars(select(OAuthTokenRow)))) == 1
    assert oauth_gateway.credentials.delete(turn.tenant, HOUSE, "authorization")
    with database.transaction() as session:
        assert list(session.scalars(select(OAuthTokenRow))) == []
    assert fetch_json(oauth_gateway, turn, rooms())["status"] == 200
    assert sent_authorizations(upstream)[-1] == ""  # nothing bound any more: nothing injected
    assert auth.token_requests == 2


def test_a_refused_client_ends_the_call_before_anything_is_sent(
    oauth_gateway: Gateway, turn: TurnContext, upstream: Upstream, auth: AuthorizationServerOnLoopback, database: Database
) -> None:
    bind(oauth_gateway, turn.tenant, secret="not-the-secret")
    answer = fetch_json(oauth_gateway, turn, booking_request())
    assert answer["error"]["code"] == "credential-unavailable"
    assert answer["error"]["token_endpoint"] == "auth.local:9400"
    assert "invalid_client" in answer["error"]["message"]
    assert upstream.recorder.requests == []
    # the idempotency key was released: the same booking runs once the binding is fixed
    bind(oauth_gateway, turn.tenant)
    assert fetch_json(oauth_gateway, turn, booking_request())["status"] == 201
    with database.transaction() as session:
        decisions = [(r.decision, r.code) for r in session.scalars(select(AuditRow).order_by(AuditRow.id))]
    assert decisions == [("error", "credential-unavailable"), ("allowed", None)]


def test_an_unreachable_token_endpoint_is_credential_unavailable(
    database: Database, turn: TurnContext, upstream: Upstream, auth: AuthorizationServerOnLoopback
) -> None:
    gateway = Gateway(database, GatewayConfig(resolve={("hollowbrook.local", 8084): f"127.0.0.1:{upstream.port}",
                                                       ("auth.local", 9400): "127.0.0.1:9"}), secret_key=SECRET_KEY)
    bind(gateway, turn.tenant)
    answer = fetch_json(gateway, turn, rooms())
    gateway.close()
    assert answer["error"]["code"] == "credential-unavailable"
    assert upstream.recorder.requests == []


def test_a_token_url_at_a_private_address_is_refused_by_the_egress_rule(
    oauth_gateway: Gateway, turn: TurnContext, upstream: Upstream, auth: AuthorizationServerOnLoopback
) -> None:
    # the deployment never listed 127.0.0.1 for private access: the client secret must not go there
    bind(oauth_gateway, turn.tenant, token_url=f"http://127.0.0.1:{auth.port}/token")
    answer = fetch_json(oauth_gateway, turn, rooms())
    assert answer["error"]["code"] == "credential-unavailable"
    assert "egress rule" in answer["error"]["message"]
    assert auth.token_requests == 0 and upstream.recorder.requests == []


def test_a_canary_client_secret_and_its_token_never_appear_anywhere(
    oauth_gateway: Gateway, turn: TurnContext, upstream: Upstream, auth: AuthorizationServerOnLoopback,
    database: Database, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    bind(oauth_gateway, turn.tenant)
    tenant_rules.replace_tenant_gates(database, turn.tenant, [("GET /rooms", "a person looks first")])
    answers = [fetch_json(oauth_gateway, turn, {**rooms(), "url": f"{HOUSE}/echo"}), fetch_json(oauth_gateway, turn, booking_request())]
    answers.append(fetch_json(oauth_gateway, turn, rooms()))
    assert answers[2]["error"]["code"] == "approval-required"
    (token,) = issued_tokens(auth)
    assert sent_authorizations(upstream)[0] == f"Bearer {token}"  # it was sent, and echoed back
    with database.transaction() as session:
        tables = (AuditRow, IdempotencyRow, CredentialRow, OAuthTokenRow, ApprovalRow)
        rows = [r for table in tables for r in session.scalars(select(table))]
        stored = json.dumps([{c.name: str(getattr(r, c.name)) for c in r.__table__.columns} for r in rows])
    listed = repr(oauth_gateway.credentials.list(turn.tenant))
    assert "skillhouse-app" in listed and TOKEN_URL in listed
    # the authorization server's own log (Authlib's) is the other party's, not the gateway's
    logged = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("authlib"))
    seen = json.dumps(answers) + logged + stored + listed
    for secret in (CANARY, token, base64.b64encode(f"skillhouse-app:{CANARY}".encode()).decode()):
        assert secret not in seen
    assert "[REDACTED]" in answers[0]["headers"]["x-echo-auth"]


def test_a_binding_refuses_what_it_cannot_use_naming_the_field() -> None:
    cases = [
        ({"token_url": "http://auth.example/token"}, "token_url", "http-needs-opt-in"),
        ({"token_url": "https://user:pw@auth.example/token"}, "token_url", "invalid-credential"),
        ({"token_url": "ftp://auth.example/token"}, "token_url", "invalid-credential"),
        ({"client_id": ""}, "client_id", "invalid-credential"),
        ({"client_secret": "two\nlines"}, "value", "secret-not-sendable"),
        ({"scopes": ["ok", "not ok"]}, "scopes[1]", "invalid-credential"),
        ({"resource": "not-a-uri"}, "resource", "invalid-credential"),
        ({"resource": "http://[unclosed"}, "resource", "invalid-credential"),
        ({"token_url": "https://[unclosed/token"}, "token_url", "invalid-credential"),
        ({"token_url": "https://auth.example:99999/token"}, "token_url", "invalid-credential"),
        ({"auth_method": "private_key_jwt"}, "auth_method", "invalid-credential"),
    ]
    for change, field, code in cases:
        given: dict[str, Any] = {"token_url": "https://auth.example/token", "client_id": "app", "client_secret": "s3cret",
                                 **change}  # fmt: skip
        with pytest.raises(CredentialError) as raised:
            client_credentials(**given)
        assert (raised.value.details.get("field"), raised.value.code) == (field, code), change


@settings(max_examples=300, deadline=None)
@given(token_url=st.one_of(st.text(max_size=60), st.builds(lambda rest: f"https://{rest}", st.text(max_size=40))),
       client_id=st.text(max_size=20), secret=st.text(max_size=20), scopes=st.lists(st.text(max_size=10), max_size=3),
       resource=st.one_of(st.none(), st.text(max_size=30)), allow_http=st.booleans())  # fmt: skip
def test_any_binding_input_is_accepted_and_round_trips_or_is_refused_with_a_field(
    token_url: str, client_id: str, secret: str, scopes: list[str], resource: str | None, allow_http: bool
) -> None:
    try:
        client = client_credentials(token_url, client_id, secret, scopes, resource=resource, allow_http=allow_http)
    except CredentialError as refused:
        assert refused.details.get("field") in {"token_url", "client_id", "value", "resource"} | {
            f"scopes[{n}]" for n in range(len(scopes))}
        assert refused.details.get("field") != "value" or "the client secret" in refused.message
        return
    assert ClientCredentials.unsealed(client.sealed()) == client
    assert "client_secret=" not in repr(client)
