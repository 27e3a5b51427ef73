"""The server's address leads to the console, and a console address that does not exist is the console's
own "not found" page (HTML, for a person), not the API's JSON."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


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
