"""The server's address leads to the console, and a console address that does not exist, a page that
fails and a bad filter or form value each get the console's own HTML page (for a person), not the API's JSON."""

from __future__ import annotations

import pytest
from fastapi import APIRouter
from fastapi.testclient import TestClient
from tests.console.test_console_sessions import hold_charge, signed_in
from tests.console.world import TENANT, World, console_app

from skillhouse.api.console.routing import ConsoleRoute
from skillhouse.gateway import ApprovalStore


def test_the_servers_home_leads_to_the_console(client: TestClient) -> None:
    home = client.get("/", follow_redirects=False)
    followed = client.get("/")

    assert (home.status_code, home.headers["location"]) == (303, "/console")
    assert followed.status_code == 200 and followed.url.path == "/console/sign-in"
    assert followed.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize("method, path", [("GET", "/console/aprovals"), ("GET", "/console/skills/x/y/z/w"),
                                          ("POST", "/console/nowhere"), ("HEAD", "/console/static/missing.css")])
def test_an_unknown_console_path_is_the_consoles_html_not_found_page(client: TestClient, method: str, path: str) -> None:
    answer = client.request(method, path)

    assert answer.status_code == 404
    assert answer.headers["content-type"].startswith("text/html")
    assert answer.headers["content-security-policy"].startswith("default-src 'none'")
    if method != "HEAD":
        assert "Not found" in answer.text and "not-found" in answer.text


def test_an_unknown_api_path_stays_json(client: TestClient) -> None:
    answer = client.get("/v1/nowhere")

    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "not-found"


def test_a_page_that_fails_is_the_consoles_html_error_page_without_a_traceback(world: World) -> None:
    app = console_app(world)
    failing = APIRouter(route_class=ConsoleRoute)

    @failing.get("/console/failing")
    def fail() -> None:
        raise RuntimeError("select secret from somewhere")

    @failing.get("/console/counted")
    def counted(n: int) -> None:
        raise AssertionError("not reached: n is not a number")

    app.router.routes[0:0] = failing.routes
    answer = TestClient(app).get("/console/failing")
    assert answer.status_code == 500
    assert answer.headers["content-type"].startswith("text/html")
    assert "console-failure" in answer.text and "Traceback" not in answer.text and "select secret" not in answer.text
    invalid = TestClient(app).get("/console/counted?n=many")
    assert invalid.status_code == 422 and invalid.headers["content-type"].startswith("text/html")
    assert "query.n:" in invalid.text


def test_bad_filter_and_form_values_get_located_console_pages(client: TestClient, world: World) -> None:
    csrf = signed_in(client, world)
    since = client.get("/console/audit?since=yesterday")
    assert since.status_code == 422 and "invalid-time" in since.text and "since: &#39;yesterday&#39;" in since.text
    assert client.get("/console/audit?until=2030-01-01&since=2029-12-31T08:00").status_code == 200
    assert client.get("/console/approvals?show=everything").status_code == 404
    approval_id = hold_charge(world, TENANT, "a reason too long")
    answer = client.post(f"/console/approvals/{approval_id}/deny", data={"csrf": csrf, "reason": "x" * 501})
    assert answer.status_code == 422 and "reason-too-long" in answer.text
    assert ApprovalStore(world.database).get(TENANT, approval_id).state == "pending"
