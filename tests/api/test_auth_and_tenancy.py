"""Every route needs a valid token and shows a tenant only its own rows (another tenant's: 404)."""

from __future__ import annotations

import re

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.api.specs_examples import skill_spec, tool_spec

Headers = dict[str, str]
VALUES = {"skill": "hollowbrook", "version": "1.0.0", "skill_id": "github-coding-custom", "token_id": "1"}


PROBES = {("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/metrics"), ("GET", "/v1/connections/callback")}
"""Open to orchestrators and Prometheus without a token, and the OAuth callback, which its single-use state
authenticates (docs/security.md), so left out below."""


def _routes(app: FastAPI) -> list[tuple[str, str]]:
    """Every operation of the app's OpenAPI document (which is every route the app serves) but the probes."""
    return [(method.upper(), path) for path, item in app.openapi()["paths"].items() for method in item
            if (method.upper(), path) not in PROBES]


def _url(path: str) -> str:
    url = re.sub(r"\{(\w+)\}", lambda m: VALUES.get(m.group(1), "1"), path)
    return url.replace("/skill-specs/github-coding-custom/1.0.0", "/skill-specs/github-coding-custom/1")


def _published_by_acme(client: TestClient, acme: Headers, files: dict[str, str]) -> None:
    base = "/v1/skills/hollowbrook/versions/1.0.0"
    assert client.put(base, json={"files": files}, headers=acme).status_code == 200
    assert client.post(f"{base}/validate", headers=acme).status_code == 200
    assert client.post(f"{base}/publish", headers=acme).status_code == 201
    client.post("/api/runtime/skills/tool-specs", json=tool_spec(), headers=acme)
    client.post("/api/runtime/skills/skill-specs", json=skill_spec(), headers=acme)
    assert client.post("/api/runtime/skills/skill-specs/github-coding-custom/1/publish", headers=acme).status_code == 201


@pytest.mark.parametrize("header", [None, "Basic dXNlcjpwYXNz", "Bearer", "Bearer skh_short", "Bearer " + "skh_" + "a" * 43, "revoked"])
def test_every_route_refuses_a_missing_malformed_unknown_or_revoked_token(
    app: FastAPI, client: TestClient, acme: Headers, header: str | None
) -> None:
    if header == "revoked":
        headers = dict(acme)
        token_id = client.get("/v1/tokens", headers=acme).json()["data"][0]["id"]
        assert client.post(f"/v1/tokens/{token_id}/revoke", headers=acme).status_code == 200
    else:
        headers = {} if header is None else {"Authorization": header}
    routes = _routes(app)
    assert len(routes) >= 20
    for method, path in routes:
        response = client.request(method, _url(path), headers=headers, json={})
        assert response.status_code == 401, (method, path)
        assert response.json()["error"]["code"] in {"missing-token", "malformed-token", "unknown-token", "revoked-token"}
        assert response.headers["www-authenticate"] == "Bearer"


def test_another_tenant_reads_none_of_acmes_rows(client: TestClient, acme: Headers, globex: Headers,
                                                 hollowbrook_files: dict[str, str]) -> None:
    _published_by_acme(client, acme, hollowbrook_files)
    for url in ["/v1/skills/hollowbrook", "/v1/skills/hollowbrook/versions", "/v1/skills/hollowbrook/versions/1.0.0",
                "/v1/skills/hollowbrook/releases", "/v1/skills/hollowbrook/releases/1.0.0",
                "/v1/skills/hollowbrook/releases/1.0.0/tools", "/v1/skills/hollowbrook/releases/1.0.0/compatibility",
                "/api/runtime/skills/releases/github-coding-custom/1"]:
        assert client.get(url, headers=acme).status_code == 200, url
        assert client.get(url, headers=globex).status_code == 404, url
    assert {s["name"] for s in client.get("/v1/skills", headers=globex).json()["data"]} == {"github-coding", "resend-comms"}
    assert [t["source"] for t in client.get("/api/runtime/skills/tool-specs", headers=globex).json()["data"]] == ["builtin", "builtin"]
    assert all(s["source"] == "builtin" for s in client.get("/api/runtime/skills/skill-specs", headers=globex).json()["data"])
    assert all(t["tenant"] == "globex" for t in client.get("/v1/tokens", headers=globex).json()["data"])


def test_another_tenant_changes_none_of_acmes_rows(client: TestClient, acme: Headers, globex: Headers,
                                                   hollowbrook_files: dict[str, str]) -> None:
    _published_by_acme(client, acme, hollowbrook_files)
    digest = client.get("/v1/skills/hollowbrook/releases/1.0.0", headers=acme).json()["digest"]
    base = "/v1/skills/hollowbrook/versions/1.0.0"
    for action in ("validate", "publish", "deprecate"):
        assert client.post(f"{base}/{action}", headers=globex).status_code == 404, action
    assert client.post("/api/runtime/skills/skill-specs/github-coding-custom/1/publish", headers=globex).status_code == 404
    assert client.post("/v1/tokens/1/revoke", headers=globex).status_code == 404
    changed = dict(hollowbrook_files, **{"SKILL.md": hollowbrook_files["SKILL.md"] + "\nMine now.\n"})
    own = client.put(base, json={"files": changed}, headers=globex)
    assert own.status_code == 200 and own.json()["state"] == "draft"
    assert client.post("/api/runtime/skills/tool-specs", json=tool_spec(name="Globex's"), headers=globex).status_code == 201
    assert client.get("/v1/skills/hollowbrook/releases/1.0.0", headers=acme).json()["digest"] == digest
    acme_tool = [t for t in client.get("/api/runtime/skills/tool-specs", headers=acme).json()["data"]
                 if t["tool_spec"]["tool_id"] == "github.custom"]
    assert acme_tool[0]["tool_spec"]["name"] == "GitHub Custom"
    assert client.get("/v1/tokens", headers=acme).status_code == 200


def test_builtins_are_visible_to_every_tenant_and_writable_by_none(client: TestClient, acme: Headers) -> None:
    assert client.get("/v1/skills/github-coding/releases/1", headers=acme).json()["builtin"] is True
    refused = client.post("/v1/skills/github-coding/versions/1/deprecate", headers=acme)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "builtin-readonly"
    assert client.get("/v1/skills/github-coding/releases/1", headers=acme).json()["builtin"] is True
