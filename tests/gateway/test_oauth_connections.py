"""Per-user OAuth 2.0 connections against a real authorization server (Authlib's authorization-code grant
with PKCE, rotating refresh tokens and RFC 7009 revocation) on loopback: the person consents through an
HTTP client following the authorization URL; a turn's call sends its subject's token; without a
connection it is ``connection-required`` with the URL and nothing is sent; an expired token is refreshed
once however many calls and replicas want it; a 401 refreshes once and retries once; revocation reaches
the provider; no token or secret appears anywhere it must not."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from sqlalchemy import select, update
from tests.gateway.conftest import SECRET_KEY
from tests.gateway.oauth_server import AuthorizationServerOnLoopback, Client, authorization_server
from tests.gateway.upstream_server import Upstream
from tests.gateway.wire import fetch_json

from skillhouse.gateway import Gateway, GatewayConfig, TurnContext, tenant_rules
from skillhouse.gateway.connections import pkce_challenge
from skillhouse.gateway.errors import CredentialError, InvalidRequest
from skillhouse.gateway.oauth_client import authorization_code_client
from skillhouse.store.database import Database, open_database
from skillhouse.store.gateway_tables import (
    ApprovalRow,
    AuditRow,
    CredentialRow,
    IdempotencyRow,
    OAuthConnectionRow,
    OAuthPendingRow,
)

CANARY = "canary-code-client-secret-7f3a-do-not-leak"
API = "http://api.local:9401"
TOKEN_URL = "http://auth.local:9400/token"
REVOKE_URL = "http://auth.local:9400/revoke"
REDIRECT = "http://skillhouse.test/v1/connections/callback"


@pytest.fixture
def auth() -> Iterator[AuthorizationServerOnLoopback]:
    clients = [Client("skillhouse-app", CANARY, ("profile", "bookings:write"), (REDIRECT,))]
    with authorization_server(clients, expires_in=3600) as server:
        yield server


def gateway_with(database: Database, upstream: Upstream, auth: AuthorizationServerOnLoopback) -> Gateway:
    resolve = {("hollowbrook.local", 8084): f"127.0.0.1:{upstream.port}", ("auth.local", 9400): f"127.0.0.1:{auth.port}",
               ("api.local", 9401): f"127.0.0.1:{auth.port}"}  # fmt: skip
    return Gateway(database, GatewayConfig(resolve=resolve), secret_key=SECRET_KEY)


def bind(gateway: Gateway, tenant: str, auth: AuthorizationServerOnLoopback, revocation: bool = True) -> None:
    client = authorization_code_client(f"http://127.0.0.1:{auth.port}/authorize", TOKEN_URL, "skillhouse-app", CANARY,
                                       REDIRECT, ["profile"], REVOKE_URL if revocation else None, allow_http=True)  # fmt: skip
    gateway.credentials.put_client(tenant, API, client, allow_http=True)
    tenant_rules.replace_allowed_hosts(gateway.database, tenant, ["api.local:9401"])


@pytest.fixture
def gateway(database: Database, upstream: Upstream, auth: AuthorizationServerOnLoopback, turn: TurnContext) -> Iterator[Gateway]:
    gateway = gateway_with(database, upstream, auth)
    bind(gateway, turn.tenant, auth)
    yield gateway
    gateway.close()


@pytest.fixture
def ada(turn: TurnContext) -> TurnContext:
    return replace(turn, subject="ada@example.com")


def me() -> dict[str, Any]:
    return {"method": "GET", "url": f"{API}/api/me", "headers": {}, "body": None}


def consent(authorization_url: str, person: str = "ada", deny: bool = False) -> dict[str, str]:
    """The person's browser: open the authorization URL signed in, consent, and read where it is sent back."""
    headers = {"X-Person": person, **({"X-Consent": "deny"} if deny else {})}
    answer = httpx.get(authorization_url, headers=headers, follow_redirects=False, timeout=10)
    assert answer.status_code == 302, answer.text
    location = answer.headers["location"]
    assert location.startswith(REDIRECT + "?")
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def connect(gateway: Gateway, turn: TurnContext) -> None:
    required = fetch_json(gateway, turn, me())["error"]
    assert required["code"] == "connection-required"
    back = consent(required["connect_url"])
    gateway.connections.complete(back["state"], back["code"])


def bearer_sent(auth: AuthorizationServerOnLoopback) -> list[str]:
    return list(auth.resource_requests)


def test_a_call_without_a_connection_is_connection_required_with_the_url_and_sends_nothing(
    gateway: Gateway, ada: TurnContext, auth: AuthorizationServerOnLoopback, database: Database
) -> None:
    answer = fetch_json(gateway, ada, me())
    error = answer["error"]
    assert error["code"] == "connection-required" and error["subject"] == "ada@example.com" and error["origin"] == API
    url = urlsplit(error["connect_url"])
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert (url.port, url.path) == (auth.port, "/authorize")
    assert query["response_type"] == "code" and query["client_id"] == "skillhouse-app"
    assert query["redirect_uri"] == REDIRECT and query["scope"] == "profile"
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert auth.resource_requests == [] and auth.token_requests == 0
    with database.transaction() as session:
        (pending,) = session.scalars(select(OAuthPendingRow))
        assert pending.state_digest != query["state"] and query["state"] not in pending.code_verifier
        decisions = [(r.decision, r.code) for r in session.scalars(select(AuditRow))]
    assert decisions == [("held", "connection-required")]
    # a turn bound for nobody cannot use anyone's connection
    nobody = fetch_json(gateway, replace(ada, subject=None), me())["error"]
    assert nobody["code"] == "connection-required" and "connect_url" not in nobody and "subject" in nobody["message"]


def test_consent_through_the_authorization_url_connects_and_the_call_sends_the_persons_token(
    gateway: Gateway, ada: TurnContext, auth: AuthorizationServerOnLoopback, database: Database
) -> None:
    connect(gateway, ada)
    (exchange,) = auth.grants("authorization_code")
    assert exchange["form"]["redirect_uri"] == REDIRECT
    assert len(exchange["form"]["code_verifier"]) >= 43  # Authlib checked it against the S256 challenge
    answer = fetch_json(gateway, ada, me())
    assert answer["status"] == 200 and json.loads(answer["body"])["user"] == "ada"
    (token,) = [t["access_token"] for t in auth.issued.tokens]
    assert bearer_sent(auth) == [token]
    (shown,) = gateway.connections.list(ada.tenant, "ada@example.com")
    assert shown.scopes == ("profile",) and shown.refreshable and shown.last_used_at is not None
    # another person of the same tenant has no connection: nothing of Ada's is sent for them
    grace = fetch_json(gateway, replace(ada, subject="grace"), me())
    assert grace["error"]["code"] == "connection-required" and bearer_sent(auth) == [token]


def test_a_state_works_once_and_a_refused_consent_stores_nothing(
    gateway: Gateway, ada: TurnContext, auth: AuthorizationServerOnLoopback
) -> None:
    url = fetch_json(gateway, ada, me())["error"]["connect_url"]
    back = consent(url)
    gateway.connections.complete(back["state"], back["code"])
    with pytest.raises(InvalidRequest) as again:
        gateway.connections.complete(back["state"], back["code"])
    assert again.value.code == "connection-state-invalid"
    denied = consent(fetch_json(gateway, replace(ada, subject="grace"), me())["error"]["connect_url"], "grace", deny=True)
    with pytest.raises(InvalidRequest) as refused:
        gateway.connections.complete(denied["state"], denied.get("code"), denied.get("error"))
    assert refused.value.code == "connection-not-granted"
    assert [c.subject for c in gateway.connections.list(ada.tenant)] == ["ada@example.com"]
    with pytest.raises(InvalidRequest):
        gateway.connections.complete("made-up-state", "code")
    assert len(auth.grants("authorization_code")) == 1


def test_twenty_concurrent_calls_with_an_expired_token_refresh_once_and_none_fails(
    gateway: Gateway, ada: TurnContext, auth: AuthorizationServerOnLoopback, database: Database
) -> None:
    connect(gateway, ada)
    with database.transaction() as session:
        session.execute(update(OAuthConnectionRow).values(expires_at=0.0))
    answers = concurrently(20, lambda n: fetch_json(gateway, ada, me()))
    assert [a.get("status") for a in answers] == [200] * 20
    assert len(auth.grants("refresh_token")) == 1 and gateway.connections.refreshes == 1
    first, second = auth.issued.tokens
    assert second["refresh_token"] != first["refresh_token"]  # rotated
    assert set(bearer_sent(auth)) == {second["access_token"]}
    with database.transaction() as session:
        (row,) = session.scalars(select(OAuthConnectionRow))
        assert row.generation == 1
        assert gateway.credentials.unseal(row.refresh_token or "", "test") == second["refresh_token"]


def concurrently(count: int, call: Any) -> list[dict[str, Any]]:
    start = threading.Barrier(count)
    answers: list[dict[str, Any]] = []

    def one(n: int) -> None:
        start.wait(10)
        answers.append(call(n))

    threads = [threading.Thread(target=one, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return answers


def test_two_replicas_on_one_database_refresh_once(
    database_url: str, database: Database, ada: TurnContext, upstream: Upstream, auth: AuthorizationServerOnLoopback
) -> None:
    other = open_database(database_url)
    replicas = [gateway_with(database, upstream, auth), gateway_with(other, upstream, auth)]
    try:
        bind(replicas[0], ada.tenant, auth)
        connect(replicas[0], ada)
        with database.transaction() as session:
            session.execute(update(OAuthConnectionRow).values(expires_at=0.0))
        answers = concurrently(20, lambda n: fetch_json(replicas[n % 2], ada, me()))
        assert [a.get("status") for a in answers] == [200] * 20
        assert len(auth.grants("refresh_token")) == 1
        assert replicas[0].connections.refreshes + replicas[1].connections.refreshes == 1
    finally:
        for replica in replicas:
            replica.close()
        other.dispose()


def test_a_401_refreshes_once_and_retries_once_and_only_for_a_401(
    gateway: Gateway, ada: TurnContext, auth: AuthorizationServerOnLoopback
) -> None:
    connect(gateway, ada)
    (first,) = [t["access_token"] for t in auth.issued.tokens]
    auth.revoke_access(first)  # the provider ended the access token early; the refresh token is still good
    answer = fetch_json(gateway, ada, me())
    assert answer["status"] == 200
    second = auth.issued.tokens[-1]["access_token"]
    assert bearer_sent(auth) == [first, second] and len(auth.grants("refresh_token")) == 1
    # a 401 again after the refresh is the answer: one refresh, one retry, no more
    auth.revoke_access(second)
    auth.oauth.by_refresh.clear()  # and the refresh token is gone too: the refresh fails, the 401 stands
    refused = fetch_json(gateway, ada, me())
    assert refused["status"] == 401 and bearer_sent(auth) == [first, second, second]
    # the provider refused the refresh (invalid_grant): the connection has ended and the next call says so
    assert fetch_json(gateway, ada, me())["error"]["code"] == "connection-required"


def test_revoking_a_connection_revokes_it_at_the_provider(
    gateway: Gateway, ada: TurnContext, auth: AuthorizationServerOnLoopback, database: Database, upstream: Upstream
) -> None:
    connect(gateway, ada)
    revoked = gateway.connections.revoke(ada.tenant, "ada@example.com", API)
    assert revoked is not None and revoked.provider_revoked
    (gone,) = auth.oauth.revocations
    assert gone.user == "ada" and gone.revoked
    (request,) = [r for r in auth.issued.requests if r["path"] == "/revoke"]
    assert request["form"]["token_type_hint"] == "refresh_token"
    assert gateway.connections.list(ada.tenant) == []
    assert fetch_json(gateway, ada, me())["error"]["code"] == "connection-required"
    assert gateway.connections.revoke(ada.tenant, "ada@example.com", API) is None
    # without a revocation endpoint the connection is deleted here and the answer says the provider was not told
    bind(gateway, ada.tenant, auth, revocation=False)
    connect(gateway, ada)
    quiet = gateway.connections.revoke(ada.tenant, "ada@example.com", API)
    assert quiet is not None and not quiet.provider_revoked and "no revocation endpoint" in quiet.provider_message


def test_deleting_the_binding_forgets_its_connections(gateway: Gateway, ada: TurnContext) -> None:
    connect(gateway, ada)
    assert gateway.credentials.delete(ada.tenant, API, "authorization")
    assert gateway.connections.list(ada.tenant) == []


def test_a_canary_secret_and_tokens_never_appear_anywhere(
    gateway: Gateway, ada: TurnContext, auth: AuthorizationServerOnLoopback, database: Database,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    answers = [fetch_json(gateway, ada, me())]
    back = consent(answers[0]["error"]["connect_url"])
    shown = gateway.connections.complete(back["state"], back["code"])
    echo = {"method": "GET", "url": f"{API}/api/me", "headers": {}, "body": None}
    answers.append(fetch_json(gateway, ada, echo))
    tenant_rules.replace_tenant_gates(database, ada.tenant, [("GET /api/me", "a person looks first")])
    answers.append(fetch_json(gateway, ada, me()))
    assert answers[-1]["error"]["code"] == "approval-required"
    with database.transaction() as session:
        session.execute(update(OAuthConnectionRow).values(expires_at=0.0))
    tenant_rules.replace_tenant_gates(database, ada.tenant, [])
    answers.append(fetch_json(gateway, ada, me()))  # refreshed: a second pair of tokens
    revoked = gateway.connections.revoke(ada.tenant, "ada@example.com", API)
    tokens = [t[k] for t in auth.issued.tokens for k in ("access_token", "refresh_token")]
    assert len(tokens) == 4
    with database.transaction() as session:
        tables = (AuditRow, IdempotencyRow, CredentialRow, OAuthConnectionRow, OAuthPendingRow, ApprovalRow)
        rows = [r for table in tables for r in session.scalars(select(table))]
        stored = json.dumps([{c.name: str(getattr(r, c.name)) for c in r.__table__.columns} for r in rows])
    listed = repr(gateway.credentials.list(ada.tenant)) + repr(gateway.connections.list(ada.tenant)) + repr(shown)
    logged = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("authlib"))
    seen = json.dumps(answers) + logged + stored + listed + repr(revoked)
    for secret in (CANARY, *tokens):
        assert secret not in seen


def test_a_binding_refuses_what_it_cannot_use_naming_the_field() -> None:
    good = {"authorization_url": "https://auth.example/authorize", "token_url": "https://auth.example/token",
            "client_id": "app", "client_secret": "s3cret", "redirect_uri": "https://skillhouse.example/v1/connections/callback"}
    cases = [
        ({"authorization_url": "ftp://auth.example/a"}, "authorization_url"),
        ({"redirect_uri": "https://skillhouse.example/cb?x=1"}, "redirect_uri"),
        ({"revocation_url": "https://u:p@auth.example/revoke"}, "revocation_url"),
        ({"token_url": "http://auth.example/token"}, "token_url"),
        ({"scopes": ["a b"]}, "scopes[0]"),
        ({"client_id": ""}, "client_id"),
    ]
    for change, field in cases:
        with pytest.raises(CredentialError) as raised:
            authorization_code_client(**{**good, **change})
        assert raised.value.details.get("field") == field, change
    made = authorization_code_client(**good)
    assert "s3cret" not in repr(made) and made.shown().authorization_url == good["authorization_url"]


def test_the_pkce_challenge_is_the_one_authlib_checks() -> None:
    for verifier in ("a" * 43, "dBjftJeZ4CVP-mB92K27uhbUJU2p1r0l4kQw4gvYP-k", "~._-" * 20):
        assert pkce_challenge(verifier) == create_s256_code_challenge(verifier)
