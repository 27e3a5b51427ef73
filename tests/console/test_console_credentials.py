"""The credentials page manages bindings and connections through forms, without a browser: every kind bound
through its form and listed without its secret, refusals next to their field in the API's words, deleting,
starting a person's connection, CSRF and scope refusals, and a canary secret in no page or redirect."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from html import unescape
from typing import Any

import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from tests.console.test_console_sessions import form_token
from tests.console.world import World
from tests.real_parts import guest_cache

from skillhouse.api.app import create_app
from skillhouse.gateway import CredentialStore
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings
from skillhouse.store.gateway_tables import OAuthConnectionRow

KEYS = "keys"  # a tenant of its own: the bindings made here reach no other test's requests
CANARY = "canary-console-secret-7f3d-do-not-leak"
ORIGIN = "https://api.keys.example"
SECRET_KEY = Fernet.generate_key().decode()  # one for the module: the bindings outlive each test's app
CODE_CLIENT = {
    "origin": "https://people.keys.example", "authorization_url": "https://id.keys.example/authorize",
    "token_url": "https://id.keys.example/token", "client_id": "console-app",
    "redirect_uri": "https://skillhouse.keys.example/v1/connections/callback", "scopes": "profile email",
    "revocation_url": "https://id.keys.example/revoke", "token_auth_method": "client_secret_post",
}
KINDS: dict[str, dict[str, str]] = {
    "bearer": {"origin": "https://bearer.keys.example"},
    "basic": {"origin": "https://basic.keys.example:8443"},
    "header": {"origin": "https://header.keys.example", "header": "X-Api-Key"},
    "oauth2-client-credentials": {"origin": "https://client.keys.example", "token_url": "https://id.keys.example/token",
                                  "client_id": "machine", "scopes": "read write", "audience": "https://client.keys.example"},
    "oauth2-authorization-code": CODE_CLIENT,
}


@dataclass
class Console:
    client: TestClient
    csrf: str
    pages: list[str]

    def get(self, path: str) -> str:
        answer = self.client.get(path)
        self.pages.append(answer.text)
        assert answer.status_code == 200, answer.text
        return answer.text

    def post(self, path: str, data: dict[str, str], csrf: bool = True) -> Any:
        answer = self.client.post(path, data={"csrf": self.csrf, **data} if csrf else data, follow_redirects=False)
        self.pages += [answer.text, answer.headers.get("location", "")]
        return answer


@pytest.fixture(scope="module")
def tokens(world: World) -> dict[str, str]:
    with world.database.transaction() as session:
        admin, _ = create_token(session, KEYS, label="keys admin", scope="admin")
        runner, _ = create_token(session, KEYS, label="keys runner", scope="approve")
    return {"admin": admin, "approve": runner}


@pytest.fixture
def seen() -> list[str]:
    return []


def open_console(world: World, token: str, seen: list[str]) -> Iterator[Console]:
    settings = Settings(database_url=world.database.url, guest_cache=guest_cache(), secret_key=SECRET_KEY)
    app = create_app(settings, database=world.database)
    client = TestClient(app, base_url="http://testserver")
    page = client.get("/console/sign-in")
    answer = client.post("/console/sign-in", data={"csrf": form_token(page.text), "token": token}, follow_redirects=False)
    assert answer.status_code == 303
    yield Console(client, form_token(client.get("/console/approvals").text), seen)
    gateway = getattr(app.state, "gateway", None)
    if gateway is not None:
        gateway.close()


@pytest.fixture
def admin(world: World, tokens: dict[str, str], seen: list[str]) -> Iterator[Console]:
    yield from open_console(world, tokens["admin"], seen)


def row_of(html: str, origin: str) -> str:
    rows = [row for row in re.findall(r"<tr>.*?</tr>", html, re.S) if f">{origin}" in row]
    assert len(rows) == 1, (origin, rows)
    return unescape(re.sub(r"<[^>]+>", " ", rows[0]))


def test_every_kind_is_bound_through_its_form_and_listed_without_its_secret(admin: Console, seen: list[str]) -> None:
    for kind, fields in KINDS.items():
        secret = f"user:{CANARY}" if kind == "basic" else CANARY
        answer = admin.post("/console/credentials/bind", {"scheme": kind, "value": secret, **fields})
        assert answer.status_code == 303, answer.text
        assert answer.headers["location"].startswith("/console/credentials?bound=")
        confirmed = admin.get(answer.headers["location"])
        assert f"A credential is bound for {fields['origin']}" in unescape(confirmed)
    listing = admin.get("/console/credentials")
    assert "header" in row_of(listing, "https://header.keys.example") and "x-api-key" in row_of(listing, "https://header.keys.example")
    assert "machine at https://id.keys.example/token (read write)" in row_of(listing, "https://client.keys.example")
    coded = row_of(listing, CODE_CLIENT["origin"])
    assert "oauth2-authorization-code" in coded and "console-app" in coded and "(profile email)" in coded
    assert "bearer" in row_of(listing, "https://bearer.keys.example")
    assert "basic" in row_of(listing, "https://basic.keys.example:8443")
    # the page keeps no value in any field of type password
    assert not re.search(r'type="password"[^>]*value=', listing)
    assert all(CANARY not in text for text in seen)


def test_a_refused_form_shows_the_apis_message_next_to_its_field_and_never_the_secret(
        admin: Console, seen: list[str], tokens: dict[str, str]) -> None:
    answer = admin.post("/console/credentials/bind", {"scheme": "bearer", "origin": "ftp://files.keys.example", "value": CANARY})
    assert answer.status_code == 422
    error = re.search(r'id="bearer-origin-error"[^>]*>([^<]*)<', answer.text)
    assert error is not None and "only http and https origins take credentials" in unescape(error.group(1))
    error_text = error.group(1)
    assert 'aria-invalid="true"' in answer.text and 'value="ftp://files.keys.example"' in answer.text
    missing = dict(CODE_CLIENT)
    del missing["redirect_uri"]
    answer = admin.post("/console/credentials/bind", {"scheme": "oauth2-authorization-code", "value": CANARY, **missing})
    error = re.search(r'id="oauth2-authorization-code-redirect_uri-error"[^>]*>([^<]*)<', answer.text)
    assert answer.status_code == 422 and error is not None
    assert unescape(error.group(1)) == "redirect_uri is required for scheme oauth2-authorization-code"
    answer = admin.post("/console/credentials/bind", {"scheme": "header", "origin": "https://header2.keys.example"})
    assert answer.status_code == 422 and re.search(r'id="header-value-error"[^>]*>Field required<', answer.text)
    answer = admin.post("/console/credentials/bind", {"scheme": "bearer", "origin": "http://plain.keys.example", "value": CANARY})
    assert answer.status_code == 422 and 'id="bearer-allow_http-error"' in answer.text
    # the API says the same about the same body
    api = admin.client.put("/v1/credentials", headers={"Authorization": f"Bearer {tokens['admin']}"},
                           json={"scheme": "bearer", "origin": "ftp://files.keys.example", "value": CANARY})
    seen.append(api.text)
    assert api.status_code == 422 and api.json()["error"]["message"] == unescape(error_text)
    assert "plain.keys.example" not in admin.get("/console/credentials").split("Bind a credential")[0]
    assert all(CANARY not in text for text in seen)


def test_delete_removes_a_binding_and_a_second_delete_is_not_found(admin: Console) -> None:
    origin = "https://gone.keys.example"
    assert admin.post("/console/credentials/bind", {"scheme": "bearer", "origin": origin, "value": CANARY}).status_code == 303
    assert f">{origin}" in admin.get("/console/credentials")
    answer = admin.post("/console/credentials/delete", {"origin": origin, "header": "authorization"})
    assert answer.status_code == 303
    assert f"No credential is bound for {origin} (authorization) now" in unescape(admin.get(answer.headers["location"]))
    assert f">{origin}" not in admin.get("/console/credentials")
    assert admin.post("/console/credentials/delete", {"origin": origin, "header": "authorization"}).status_code == 404
    # a link cannot make the page claim a binding that is not there
    assert "A credential is bound" not in admin.get(f"/console/credentials?bound={ORIGIN}%20authorization")


def test_a_connection_is_started_for_a_subject_and_the_page_shows_its_authorization_url(admin: Console) -> None:
    assert admin.post("/console/credentials/bind", {"scheme": "oauth2-authorization-code", "value": CANARY,
                                                    **CODE_CLIENT}).status_code == 303
    answer = admin.post("/console/credentials/connections", {"subject": "ada@keys.example", "origin": CODE_CLIENT["origin"]})
    assert answer.status_code == 200, answer.text
    url = re.search(r'<a href="(https://id\.keys\.example/authorize\?[^"]+)"', answer.text)
    assert url is not None
    assert "code_challenge_method=S256" in unescape(url.group(1)) and "client_id=console-app" in unescape(url.group(1))
    refused = admin.post("/console/credentials/connections", {"subject": " ada ", "origin": CODE_CLIENT["origin"]})
    assert refused.status_code == 422 and 'id="connect-subject-error"' in refused.text
    unbound = admin.post("/console/credentials/connections", {"subject": "ada", "origin": "https://nowhere.keys.example"})
    assert unbound.status_code == 404 and 'id="connect-origin-error"' in unbound.text
    gone = admin.post("/console/credentials/connections/revoke", {"subject": "ada", "origin": CODE_CLIENT["origin"]})
    assert gone.status_code == 404 and "connection-not-found" in gone.text


@pytest.mark.parametrize(("name", "csrf"), [("missing", None), ("empty", ""), ("other", "not-the-session-token")])
def test_a_form_without_its_csrf_token_changes_nothing(admin: Console, name: str, csrf: str | None) -> None:
    origin = f"https://csrf-{name}.keys.example"
    data = {"scheme": "bearer", "origin": origin, "value": CANARY} | ({} if csrf is None else {"csrf": csrf})
    answer = admin.post("/console/credentials/bind", data, csrf=False)
    assert answer.status_code == 403 and "csrf-refused" in answer.text
    assert f">{origin}" not in admin.get("/console/credentials")
    assert admin.post("/console/credentials/bind", {"scheme": "bearer", "origin": origin, "value": CANARY}).status_code == 303
    for path, fields in (("/console/credentials/delete", {"origin": origin, "header": "authorization"}),
                         ("/console/credentials/connections", {"subject": "ada", "origin": CODE_CLIENT["origin"]}),
                         ("/console/credentials/connections/revoke", {"subject": "ada", "origin": CODE_CLIENT["origin"]})):
        refused = admin.post(path, fields | ({} if csrf is None else {"csrf": csrf}), csrf=False)
        assert refused.status_code == 403 and "csrf-refused" in refused.text, path
    assert f">{origin}" in admin.get("/console/credentials")


def test_a_session_below_admin_is_refused_the_page_and_every_form(world: World, tokens: dict[str, str],
                                                                   seen: list[str]) -> None:
    for console in open_console(world, tokens["approve"], seen):
        assert console.client.get("/console/credentials").status_code == 403
        for path in ("/console/credentials/bind", "/console/credentials/delete", "/console/credentials/connections",
                     "/console/credentials/connections/revoke"):
            answer = console.post(path, {"scheme": "bearer", "origin": "https://approver.keys.example", "value": CANARY,
                                         "header": "authorization", "subject": "ada"})
            assert answer.status_code == 403 and "insufficient-scope" in answer.text, path
    assert all(CANARY not in text for text in seen)


def test_a_connection_is_revoked_from_its_row_and_the_page_says_what_the_provider_was_told(
        admin: Console, world: World, seen: list[str]) -> None:
    origin = "https://kept.keys.example"
    fields = {k: v for k, v in CODE_CLIENT.items() if k != "revocation_url"} | {"origin": origin}
    assert admin.post("/console/credentials/bind", {"scheme": "oauth2-authorization-code", "value": CANARY,
                                                    **fields}).status_code == 303
    token = "canary-connection-token-c01d"
    now = time.time()
    with world.database.transaction() as session:  # a connection as the callback stores one
        session.add(OAuthConnectionRow(tenant_id=KEYS, subject="grace@keys.example", origin=origin, client_id="console-app",
                                       access_token=CredentialStore(world.database, SECRET_KEY).seal(token),
                                       refresh_token=None, scopes="profile", expires_at=now + 3600, connected_at=now,
                                       refreshed_at=now))  # fmt: skip
    listed = admin.get("/console/credentials")
    assert "grace@keys.example" in listed and 'name="subject" value="grace@keys.example"' in listed
    answer = admin.post("/console/credentials/connections/revoke", {"subject": "grace@keys.example", "origin": origin})
    assert answer.status_code == 200
    shown = unescape(re.sub(r"\s+", " ", answer.text))
    assert "Revoked the connection of grace@keys.example to " + origin in shown
    assert "the binding names no revocation endpoint" in shown
    assert 'name="subject" value="grace@keys.example"' not in answer.text
    assert all(token not in text and CANARY not in text for text in seen)
