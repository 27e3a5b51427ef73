"""Per-user OAuth connections through the API, against Authlib's authorization server on loopback: an admin
binds an ``oauth2-authorization-code`` client, a turn is bound for a subject, its call answers
``connection-required`` with the URL, the person's HTTP client follows it and consents, the provider's
redirect reaches ``/v1/connections/callback``, and the call then acts as that person; connections are
listed (never a token) and revoked. Two ``skillhouse serve`` processes sharing PostgreSQL refresh an
expired token once between them. No secret or token appears in any answer."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from sqlalchemy import update
from tests.api.served import serve_processes
from tests.api.test_token_scopes import console_session
from tests.gateway.oauth_server import AuthorizationServerOnLoopback, Client, authorization_server
from tests.real_parts import postgres_url
from tests.scratch import postgres_schema_url, scratch_database

from skillhouse.api import create_app
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings
from skillhouse.store import open_database
from skillhouse.store.gateway_tables import OAuthConnectionRow

CANARY = "canary-api-code-secret-41b9-do-not-leak"
API = "http://api.local:9401"
SKILL = {
    "SKILL.md": "---\nname: profile\ndescription: Read the profile of the person a turn acts for at the example API.\n"
                "metadata:\n  version: \"1.0.0\"\n---\n# Profile\n\nUse `whoami` to learn who the person is.\n",
    "whoami.md": "---\noperation:\n  method: GET\n  url: http://api.local:9401/api/me\n---\n"
                 "Read the profile of the person this turn acts for.\n",
}  # fmt: skip


@pytest.fixture
def auth() -> Iterator[AuthorizationServerOnLoopback]:
    with authorization_server([Client("skillhouse-app", CANARY, ("profile",), ())], expires_in=3600) as server:
        yield server


def resolve(auth: AuthorizationServerOnLoopback) -> str:
    return f"api.local:9401=127.0.0.1:{auth.port},auth.local:9400=127.0.0.1:{auth.port}"


def binding(auth: AuthorizationServerOnLoopback, base: str) -> dict[str, Any]:
    redirect = f"{base}/v1/connections/callback"
    auth.oauth.clients["skillhouse-app"].redirect_uris = (redirect,)
    return {"origin": API, "scheme": "oauth2-authorization-code", "allow_http": True, "value": CANARY,
            "client_id": "skillhouse-app", "scopes": ["profile"], "redirect_uri": redirect,
            "authorization_url": f"http://127.0.0.1:{auth.port}/authorize", "token_url": "http://auth.local:9400/token",
            "revocation_url": "http://auth.local:9400/revoke"}  # fmt: skip


def publish_and_bind(client: httpx.Client | TestClient, base: str, auth: AuthorizationServerOnLoopback, subject: str) -> str:
    assert client.put(f"{base}/v1/credentials", json=binding(auth, base)).status_code == 200
    assert client.put(f"{base}/v1/egress/allowed-hosts", json={"hosts": ["api.local:9401"]}).status_code == 200
    version = f"{base}/v1/skills/profile/versions/1.0.0"
    assert client.put(version, json={"files": SKILL}).status_code == 200
    assert client.post(f"{version}/validate").status_code == 200
    assert client.post(f"{version}/publish").status_code == 201, client.post(f"{version}/publish").text
    turn = client.post(f"{base}/v1/turns", json={"skills": [{"name": "profile", "version": "1.0.0"}], "subject": subject})
    assert turn.status_code == 201 and turn.json()["subject"] == subject
    return str(turn.json()["id"])


def follow_and_consent(url: str, person: str) -> str:
    """The person's HTTP client opens the authorization URL signed in and consents: where it is sent back to."""
    answer = httpx.get(url, headers={"X-Person": person}, follow_redirects=False, timeout=10)
    assert answer.status_code == 302, answer.text
    return answer.headers["location"]


def token_in(database_url: str) -> str:
    database = open_database(database_url)
    try:
        with database.transaction() as session:
            return create_token(session, "acme", scope="admin")[0]
    finally:
        database.dispose()


def test_a_person_connects_through_the_api_and_the_turn_acts_as_them(
    tmp_path: Path, auth: AuthorizationServerOnLoopback
) -> None:
    with scratch_database("sqlite", tmp_path, None) as database:
        settings = Settings(data_dir=tmp_path, database_url=database.url, guest="inprocess",
                            resolve={("api.local", 9401): f"127.0.0.1:{auth.port}",
                                     ("auth.local", 9400): f"127.0.0.1:{auth.port}"},
                            secret_key=Fernet.generate_key().decode())  # fmt: skip
        app = create_app(settings, database)
        client = TestClient(app, headers={"Authorization": f"Bearer {token_in(database.url)}"})
        seen: list[str] = []
        turn_id = publish_and_bind(client, "http://testserver", auth, "ada@example.com")
        call = {"tool": "profile_whoami", "arguments": {}}
        required = client.post(f"/v1/turns/{turn_id}/calls", json=call)
        seen.append(required.text)
        error = required.json()["error"]
        assert required.status_code == 200 and error["code"] == "connection-required"
        assert auth.resource_requests == []  # nothing was sent
        callback = follow_and_consent(error["connect_url"], "ada")
        assert urlsplit(callback).path == "/v1/connections/callback"
        connected = TestClient(app).get(callback)  # the browser has no skillhouse token: the state is enough
        seen.append(connected.text)
        assert connected.status_code == 200 and connected.json()["subject"] == "ada@example.com"
        assert connected.json()["scopes"] == ["profile"] and connected.json()["refreshable"] is True
        again = TestClient(app).get(callback)  # the state is used
        assert again.status_code == 422 and again.json()["error"]["code"] == "connection-state-invalid"
        answer = client.post(f"/v1/turns/{turn_id}/calls", json=call)
        seen.append(answer.text)
        assert answer.json()["status"] == 200 and json.loads(answer.json()["body"])["user"] == "ada"
        listed = client.get("/v1/connections", params={"subject": "ada@example.com"})
        seen.append(listed.text)
        (shown,) = listed.json()["data"]
        assert shown["origin"] == API and shown["client_id"] == "skillhouse-app" and shown["last_used_at"] is not None
        console, _ = console_session(app, {"Authorization": client.headers["Authorization"]})
        page = console.get("/console/credentials")
        seen.append(page.text)
        assert page.status_code == 200 and "ada@example.com" in page.text and "oauth2-authorization-code" in page.text
        started = client.post("/v1/connections", json={"subject": "grace", "origin": API})
        assert started.status_code == 201 and "code_challenge=" in started.json()["authorization_url"]
        assert client.post("/v1/connections", json={"subject": "grace", "origin": "https://nowhere.example"}).status_code == 404
        revoked = client.delete("/v1/connections", params={"subject": "ada@example.com", "origin": API})
        seen.append(revoked.text)
        assert revoked.status_code == 200 and revoked.json()["provider_revoked"] is True
        assert client.delete("/v1/connections", params={"subject": "ada@example.com", "origin": API}).status_code == 404
        seen += [client.get("/v1/credentials").text, client.get(f"/v1/turns/{turn_id}").text]
        app.state.gateway.close()
    tokens = [t[k] for t in auth.issued.tokens for k in ("access_token", "refresh_token")]
    assert tokens
    for secret in (CANARY, *tokens):
        assert all(secret not in text for text in seen)


def test_two_serve_processes_on_one_postgresql_refresh_an_expired_token_once(
    tmp_path: Path, auth: AuthorizationServerOnLoopback
) -> None:
    with postgres_schema_url(postgres_url()) as database_url:
        token = token_in(database_url)
        env = {"SKILLHOUSE_DATABASE_URL": database_url, "SKILLHOUSE_DATA_DIR": str(tmp_path),
               "SKILLHOUSE_GUEST": "inprocess", "SKILLHOUSE_RESOLVE": resolve(auth),
               "SKILLHOUSE_SECRET_KEY": Fernet.generate_key().decode()}  # fmt: skip
        with serve_processes(2, env) as urls, httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
            turn_id = publish_and_bind(client, urls[0], auth, "ada")
            call = {"tool": "profile_whoami", "arguments": {}}
            error = client.post(f"{urls[0]}/v1/turns/{turn_id}/calls", json=call).json()["error"]
            assert httpx.get(follow_and_consent(error["connect_url"], "ada"), timeout=30).status_code == 200
            database = open_database(database_url)
            try:
                with database.transaction() as session:
                    session.execute(update(OAuthConnectionRow).values(expires_at=0.0))
            finally:
                database.dispose()
            barrier = threading.Barrier(20, timeout=60)

            def one(index: int) -> dict[str, Any]:
                barrier.wait()
                answer: dict[str, Any] = client.post(f"{urls[index % 2]}/v1/turns/{turn_id}/calls", json=call).json()
                return answer

            with ThreadPoolExecutor(20) as pool:
                answers = list(pool.map(one, range(20)))
    assert [a.get("status") for a in answers] == [200] * 20, [a for a in answers if "error" in a][:2]
    assert len(auth.grants("refresh_token")) == 1
    refreshed = auth.issued.tokens[-1]["access_token"]
    assert set(auth.resource_requests) == {refreshed}
