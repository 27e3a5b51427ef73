"""Every answer carries ``X-Content-Type-Options: nosniff``: every route, with and without a token,
errors, 404s and 405s, the console's pages, redirects and stylesheet, the OpenAPI document, and even an
unexpected server error."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.api.test_token_scopes import console_session, declared, url

Headers = dict[str, str]


def test_every_route_answers_nosniff_with_and_without_a_token(app: FastAPI, client: TestClient,
                                                              token_for: Callable[..., Headers]) -> None:
    callers = [{}, {"Authorization": "Bearer skh_short"}, token_for("acme", "run"), token_for("acme", "admin")]
    seen: set[int] = set()
    for method, path in declared(app):
        for headers in callers:
            answer = client.request(method, url(path), headers=headers, json={}, follow_redirects=False)
            seen.add(answer.status_code)
            assert answer.headers.get("x-content-type-options") == "nosniff", (method, path, answer.status_code)
    assert {200, 303, 401, 403, 404, 422} <= seen


def test_console_pages_of_a_signed_in_person_answer_nosniff(app: FastAPI, token_for: Callable[..., Headers]) -> None:
    browser, _ = console_session(app, token_for("acme", "approve"))
    checked = []
    for method, path in declared(app):
        if path.startswith("/console") and method == "GET":
            answer = browser.get(url(path), follow_redirects=False)
            assert answer.headers.get("x-content-type-options") == "nosniff", (path, answer.status_code)
            checked.append(path)
    assert {"/console", "/console/approvals", "/console/skills", "/console/audit"} <= set(checked)


@pytest.mark.parametrize(("method", "path"), [("GET", "/nowhere"), ("GET", "/console/nowhere"), ("DELETE", "/v1/skills"),
                                              ("GET", "/console/static/console.css"), ("GET", "/openapi.json")])
def test_unrouted_and_static_answers_carry_nosniff(client: TestClient, method: str, path: str) -> None:
    answer = client.request(method, path)
    assert answer.headers.get("x-content-type-options") == "nosniff", answer.status_code
    assert answer.headers.get_list("x-content-type-options") == ["nosniff"]


def test_an_unexpected_server_error_carries_nosniff(app: FastAPI) -> None:
    def broken() -> None:
        raise RuntimeError("a bug")

    app.add_api_route("/broken-for-test", broken)
    answer = TestClient(app, raise_server_exceptions=False).get("/broken-for-test")
    assert answer.status_code == 500
    assert answer.headers.get("x-content-type-options") == "nosniff"
