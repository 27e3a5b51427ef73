"""Who may do what: every route declares the least scope it needs, the docs table says the same, and a
token of each scope is let through exactly the routes at or below its scope (403 ``insufficient-scope``
otherwise), through the API with real tokens and through the console's pages."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient

from skillhouse.api import deps
from skillhouse.api.console import sessions
from skillhouse.registry.tokens import SCOPES, scope_allows

Headers = dict[str, str]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "security.md"
PUBLIC = {("GET", "/openapi.json"), ("GET", "/docs"), ("GET", "/docs/oauth2-redirect"), ("GET", "/redoc"),
          ("GET", "/console"), ("GET", "/console/static/console.css"), ("GET", "/console/sign-in"),
          ("POST", "/console/sign-in"), ("GET", "/"), ("GET", "/console/{_rest:path}"),
          ("POST", "/console/{_rest:path}"), ("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/metrics"),
          ("GET", "/v1/connections/callback")}
VALUES = {"skill": "hollowbrook", "skill_id": "github-coding-custom", "token_id": "999999", "turn_id": "turn_nope",
          "approval_id": "apr_nope", "host": "api.example.com", "header": "X-Api-Key", "tool": "hollowbrook_charge"}


def _scopes_in(dependant: Dependant) -> list[str]:
    found: list[str] = []
    for dependency in dependant.dependencies:
        if isinstance(dependency.call, (deps.ScopeRequired, sessions.ScopeRequired)):
            found.append(dependency.call.minimum)
        found += _scopes_in(dependency)
    return found


def declared(app: FastAPI) -> dict[tuple[str, str], list[str]]:
    """Every (method, path) the app serves, with the scopes its dependencies require (HEAD left out)."""
    table: dict[tuple[str, str], list[str]] = {}
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        for method in sorted(context.methods or ()):
            if method != "HEAD":
                table[(method, str(context.path))] = _scopes_in(route.dependant) if isinstance(route, APIRoute) else []
    return table


def documented() -> dict[tuple[str, str], str]:
    rows = re.findall(r"^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`]+)` \| ([^|]+) \|$", DOCS.read_text(encoding="utf-8"), re.M)
    return {(method, path): scope.strip() for method, path, scope in rows}


def url(path: str) -> str:
    version = "1" if path.startswith("/api/runtime") else "1.0.0"
    return re.sub(r"\{(\w+)\}", lambda m: version if m.group(1) == "version" else VALUES.get(m.group(1), "x"), path)


def test_every_route_declares_exactly_one_scope_or_is_public(app: FastAPI) -> None:
    table = declared(app)
    assert len(table) >= 50
    for route, scopes in table.items():
        if route in PUBLIC:
            assert scopes == [], route
        else:
            assert len(scopes) == 1 and scopes[0] in SCOPES, (route, scopes)


def test_the_table_in_the_docs_is_the_apps(app: FastAPI) -> None:
    actual = {route: scopes[0] if scopes else "none (public)" for route, scopes in declared(app).items()}
    assert documented() == actual


def test_a_route_taking_the_old_tenant_dependency_is_for_admins_only() -> None:
    # a route written before scopes, or by someone who forgot, fails closed
    assert deps.TenantDep is deps.AdminDep


@pytest.mark.parametrize("held", SCOPES)
def test_a_token_may_call_exactly_the_api_routes_at_or_below_its_scope(app: FastAPI, client: TestClient,
                                                                       token_for: Callable[..., Headers], held: str) -> None:
    headers = token_for("acme", held)
    routes = [(route, scopes[0]) for route, scopes in declared(app).items()
              if scopes and not route[1].startswith("/console")]
    assert len(routes) >= 35
    for (method, path), needed in routes:
        answer = client.request(method, url(path), headers=headers, json={})
        if scope_allows(held, needed):  # type: ignore[arg-type]
            assert answer.status_code not in (401, 403), (held, method, path, answer.text)
        else:
            assert answer.status_code == 403, (held, method, path)
            assert answer.json()["error"]["code"] == "insufficient-scope", (held, method, path)
            assert needed in answer.json()["error"]["message"]
            assert answer.headers["www-authenticate"] == f'Bearer error="insufficient_scope", scope="{needed}"'


def form_token(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None, "the page has no CSRF field"
    return found.group(1)


def console_session(app: FastAPI, secret_headers: Headers) -> tuple[TestClient, str]:
    """A browser-like client signed into the console with the token; its session's CSRF value."""
    client = TestClient(app, base_url="http://testserver")
    token = secret_headers["Authorization"].removeprefix("Bearer ")
    page = client.get("/console/sign-in")
    answer = client.post("/console/sign-in", data={"csrf": form_token(page.text), "token": token}, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    return client, form_token(client.get("/console/skills").text)


@pytest.mark.parametrize("held", SCOPES)
def test_a_console_session_may_use_exactly_the_pages_at_or_below_its_tokens_scope(
        app: FastAPI, token_for: Callable[..., Headers], held: str) -> None:
    headers = token_for("acme", held)
    routes = [(route, scopes[0]) for route, scopes in declared(app).items() if scopes and route[1].startswith("/console")]
    assert len(routes) >= 10
    for (method, path), needed in routes:
        client, csrf = console_session(app, headers)  # a fresh session each time: one of these signs out
        kwargs: dict[str, Any] = {"data": {"csrf": csrf}} if method == "POST" else {}
        answer = client.request(method, url(path), follow_redirects=False, **kwargs)
        if scope_allows(held, needed):  # type: ignore[arg-type]
            assert answer.status_code != 403, (held, method, path, answer.text)
            assert not answer.headers.get("location", "").startswith("/console/sign-in?"), (held, method, path)
        else:
            assert answer.status_code == 403, (held, method, path)
            assert "insufficient-scope" in answer.text
