"""``PUT /v1/credentials`` refuses, with a code and the field, what the gateway could not send or should not
send: a value outside printable ASCII or too long, an origin that is not http(s), plain http without opt-in.
Nothing is stored by a refusal, and a call never fails later on a value that was accepted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.api.conftest import Headers
from tests.real_parts import guest_cache, postgres_url
from tests.scratch import scratch_database

from skillhouse.api import create_app
from skillhouse.settings import Settings


@pytest.fixture(params=["sqlite", "postgresql"])
def app(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FastAPI]:
    server = postgres_url() if request.param == "postgresql" else None
    with scratch_database(request.param, tmp_path, server) as database:
        settings = Settings(data_dir=tmp_path, database_url=database.url, secret_key=Fernet.generate_key().decode(),
                            guest_cache=guest_cache())
        yield create_app(settings, database)


UNSENDABLE = [
    ("tok\u00e9n-value", "secret-not-sendable"),  # latin-1, not ASCII
    ("tok\u4e2d\u6587-value", "secret-not-sendable"),  # not latin-1
    ("token\u2028value", "secret-not-sendable"),  # a line separator
    ("token\r\nX-Evil: 1", "secret-not-sendable"),
    ("token\nvalue", "secret-not-sendable"),
    ("token\x00value", "secret-not-sendable"),
    ("token\tvalue", "secret-not-sendable"),
    ("token\x7fvalue", "secret-not-sendable"),
    (" token-value", "secret-not-sendable"),
    ("token-value ", "secret-not-sendable"),
    ("t" * 8186, "secret-too-long"),  # "Bearer " + 8186 = 8193 bytes
]


@pytest.mark.parametrize(("value", "code"), UNSENDABLE)
def test_a_value_the_transport_cannot_send_is_refused_when_it_is_set(
    client: TestClient, acme: Headers, value: str, code: str
) -> None:
    put = client.put("/v1/credentials", json={"origin": "api.example.com", "scheme": "bearer", "value": value},
                     headers=acme)  # fmt: skip
    assert put.status_code == 422
    assert put.json()["error"]["problems"] == [{"path": "value", "code": code, "message": put.json()["error"]["message"]}]
    assert value not in put.text
    assert client.get("/v1/credentials", headers=acme).json()["data"] == []


def test_the_longest_sendable_value_is_accepted(client: TestClient, acme: Headers) -> None:
    put = client.put("/v1/credentials", json={"origin": "api.example.com", "scheme": "bearer", "value": "t" * 8185},
                     headers=acme)  # fmt: skip
    assert put.status_code == 200
    assert put.json() == {"origin": "https://api.example.com", "host": "api.example.com", "port": 443,
                          "header": "authorization", "scheme": "bearer", "allow_http": False, "client": None}  # fmt: skip
    assert "t" * 8185 not in put.text
    assert [c["origin"] for c in client.get("/v1/credentials", headers=acme).json()["data"]] == ["https://api.example.com"]


@pytest.mark.parametrize(
    ("body", "code", "path"),
    [({"origin": "ftp://files.example.com"}, "origin-scheme-refused", "origin"),
     ({"origin": "https://api.example.com/v1"}, "invalid-origin", "origin"),
     ({"origin": "http://api.example.com"}, "http-needs-opt-in", "allow_http"),
     ({"origin": "https://api.example.com", "allow_http": True}, "allow-http-mismatch", "allow_http")],
)  # fmt: skip
def test_an_origin_is_http_or_https_and_plain_http_is_opted_into(
    client: TestClient, acme: Headers, body: dict[str, object], code: str, path: str
) -> None:
    put = client.put("/v1/credentials", json={**body, "scheme": "bearer", "value": "s3cret-value"}, headers=acme)
    assert put.status_code == 422 and put.json()["error"]["code"] == code
    assert [p["path"] for p in put.json()["error"]["problems"]] == [path]


def test_a_bare_host_still_means_https_on_port_443(client: TestClient, acme: Headers) -> None:
    put = client.put("/v1/credentials", json={"host": "API.example.com", "scheme": "bearer", "value": "s3cret-value"},
                     headers=acme)  # fmt: skip
    assert put.json() == {"origin": "https://api.example.com", "host": "api.example.com", "port": 443,
                          "header": "authorization", "scheme": "bearer", "allow_http": False, "client": None}  # fmt: skip
    assert client.delete("/v1/credentials/api.example.com/authorization", headers=acme).status_code == 204


def test_an_oauth_client_is_bound_write_only_and_its_fields_are_checked(client: TestClient, acme: Headers) -> None:
    secret = "canary-api-client-secret-77c0"
    body = {"origin": "https://api.example.com", "scheme": "oauth2-client-credentials", "value": secret,
            "token_url": "https://auth.example.com/token", "client_id": "app", "scopes": ["read"]}  # fmt: skip
    refusals = [
        ({"token_url": None}, "token_url"),
        ({"token_url": "http://auth.example.com/token"}, "token_url"),
        ({"scopes": ["two words"]}, "scopes[0]"),
        ({"header": "X-Api-Key"}, "header"),
        ({"scheme": "bearer"}, "scheme"),  # OAuth fields on a static binding
    ]
    for change, path in refusals:
        put = client.put("/v1/credentials", json={**body, **change}, headers=acme)
        assert put.status_code == 422, change
        assert [p["path"] for p in put.json()["error"]["problems"]] == [path]
        assert secret not in put.text
    put = client.put("/v1/credentials", json=body, headers=acme)
    assert put.status_code == 200 and secret not in put.text
    listed = client.get("/v1/credentials", headers=acme)
    assert secret not in listed.text
    assert listed.json()["data"] == [{
        "origin": "https://api.example.com", "host": "api.example.com", "port": 443, "header": "authorization",
        "scheme": "oauth2-client-credentials", "allow_http": False,
        "client": {"token_url": "https://auth.example.com/token", "client_id": "app", "scopes": ["read"],
                   "audience": None, "resource": None, "token_auth_method": "client_secret_basic",
                   "authorization_url": None, "redirect_uri": None, "revocation_url": None},
    }]  # fmt: skip
    assert client.delete("/v1/credentials/api.example.com/authorization", headers=acme).status_code == 204
