"""Sessions and forms without a browser: sign-in redirects, CSRF refusals, tenant isolation, no secrets."""

from __future__ import annotations

import datetime as dt
import json
import re
import time

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update
from tests.console.world import RIVAL, TENANT, World
from tests.gateway.wire import fetch_json

from skillhouse.api.console.sessions import SESSION_COOKIE, sign, unsign
from skillhouse.gateway import ApprovalStore, BoundReleases, TurnContext
from skillhouse.registry.tokens import create_token, hash_token, revoke_token
from skillhouse.settings import Settings
from skillhouse.store.console_tables import ConsoleSessionRow
from skillhouse.store.registry_tables import TokenRow, utcnow

PAGES = [
    "/console/approvals",
    "/console/approvals/apr_whatever",
    "/console/skills",
    "/console/skills/hollowbrook",
    "/console/skills/hollowbrook/1.0.0",
    "/console/skills/hollowbrook/1.0.0/tools/hollowbrook_charge?profile=gemini",
    "/console/skills/hollowbrook/diff?old=1.0.0&new=1.1.0",
    "/console/audit?turn=t&skill=hollowbrook",
]
FORMS = ["/console/approvals/apr_whatever/approve", "/console/approvals/apr_whatever/deny", "/console/sign-out"]


def form_token(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None, "the page has no CSRF field"
    return found.group(1)


def signed_in(client: TestClient, world: World, tenant: str = TENANT) -> str:
    """Sign ``client`` in as ``tenant``; the session's CSRF token."""
    page = client.get("/console/sign-in")
    answer = client.post("/console/sign-in", data={"csrf": form_token(page.text), "token": world.tokens[tenant]},
                         follow_redirects=False)
    assert answer.status_code == 303
    return form_token(client.get("/console/approvals").text)


def hold_charge(world: World, tenant: str, description: str, headers: dict[str, str] | None = None) -> str:
    """A charge held by the real gateway, sent as a turn's guest would hand it over."""
    context = TurnContext(tenant, f"turn-{tenant}", BoundReleases([world.releases[(tenant, "1.0.0")]]))
    body = {"amount_cents": 1200, "booking_id": "bk_9999", "description": description}
    answer = fetch_json(world.gateway, context, {"method": "POST", "url": "http://hollowbrook.local:8084/charges",
                                           "headers": {"Content-Type": "application/json", **(headers or {})},
                                           "body": json.dumps(body)})
    assert answer["error"]["code"] == "approval-required", answer
    return str(answer["error"]["approval_id"])


@pytest.mark.parametrize("path", PAGES)
def test_a_logged_out_request_to_any_page_redirects_to_sign_in(client: TestClient, path: str) -> None:
    answer = client.get(path, follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"].startswith("/console/sign-in?next=%2Fconsole")


@pytest.mark.parametrize("path", FORMS)
def test_a_logged_out_form_redirects_to_sign_in_and_changes_nothing(client: TestClient, path: str) -> None:
    answer = client.post(path, data={"csrf": "anything"}, follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"].startswith("/console/sign-in")


def test_a_form_without_its_csrf_token_is_refused_and_decides_nothing(client: TestClient, world: World) -> None:
    approval_id = hold_charge(world, TENANT, "csrf check")
    signed_in(client, world)
    for data in ({}, {"note": "no token"}, {"csrf": ""}, {"csrf": "not-the-session-token"}):
        answer = client.post(f"/console/approvals/{approval_id}/approve", data=data, follow_redirects=False)
        assert answer.status_code == 403
        assert "csrf-refused" in answer.text
    for body in ('{"csrf": "x"}', ""):
        answer = client.post(f"/console/approvals/{approval_id}/approve", content=body,
                             headers={"Content-Type": "application/json"}, follow_redirects=False)
        assert answer.status_code == 403
        assert "csrf-refused" in answer.text
    assert ApprovalStore(world.database).get(TENANT, approval_id).state == "pending"


def test_signing_out_needs_the_csrf_token(client: TestClient, world: World) -> None:
    csrf = signed_in(client, world)
    assert client.post("/console/sign-out", data={}, follow_redirects=False).status_code == 403
    answer = client.post("/console/sign-out", data={"csrf": csrf}, follow_redirects=False)
    assert answer.status_code == 303
    assert client.get("/console/approvals", follow_redirects=False).status_code == 303


def test_the_sign_in_form_without_its_double_submit_token_is_refused(client: TestClient, world: World) -> None:
    answer = client.post("/console/sign-in", data={"token": world.tokens[TENANT]}, follow_redirects=False)
    assert answer.status_code == 403
    assert SESSION_COOKIE not in answer.cookies
    assert world.tokens[TENANT] not in answer.text


def test_a_refused_token_is_never_shown_back(client: TestClient, world: World) -> None:
    page = client.get("/console/sign-in")
    wrong = "skh_" + "x" * 43
    answer = client.post("/console/sign-in", data={"csrf": form_token(page.text), "token": wrong}, follow_redirects=False)
    assert answer.status_code == 401
    assert "unknown-token" in answer.text
    assert wrong not in answer.text


def test_the_session_cookie_is_signed_httponly_and_strict(client: TestClient, world: World) -> None:
    page = client.get("/console/sign-in")
    answer = client.post("/console/sign-in", data={"csrf": form_token(page.text), "token": world.tokens[TENANT]},
                         follow_redirects=False)
    cookie = next(h for h in answer.headers.get_list("set-cookie") if h.startswith(SESSION_COOKIE + "="))
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/console" in cookie
    assert world.tokens[TENANT] not in cookie


def test_a_forged_session_cookie_is_not_a_session(client: TestClient, world: World) -> None:
    forged = sign(Settings(console_secret="someone else's key"), "session",
                  {"tenant": TENANT, "token": "0" * 64, "csrf": "x", "expires": time.time() + 60})
    client.cookies.set(SESSION_COOKIE, forged, path="/console")
    assert client.get("/console/approvals", follow_redirects=False).status_code == 303


def test_revoking_the_token_ends_its_console_sessions(client: TestClient, world: World) -> None:
    with world.database.transaction() as session:
        secret, info = create_token(session, TENANT, label="short-lived")
    world.tokens["short-lived"] = secret
    signed_in(client, world, "short-lived")
    assert client.get("/console/skills", follow_redirects=False).status_code == 200
    with world.database.transaction() as session:
        revoke_token(session, info.id, TENANT)
    assert client.get("/console/skills", follow_redirects=False).status_code == 303


def test_another_tenants_rows_are_not_found(client: TestClient, world: World) -> None:
    rival_approval = hold_charge(world, RIVAL, "rival's")
    csrf = signed_in(client, world)
    assert client.get(f"/console/approvals/{rival_approval}").status_code == 404
    for action in ("approve", "deny"):
        assert client.post(f"/console/approvals/{rival_approval}/{action}", data={"csrf": csrf}).status_code == 404
    assert ApprovalStore(world.database).get(RIVAL, rival_approval).state == "pending"
    assert client.get("/console/skills/rival-secrets").status_code == 404
    assert client.get("/console/skills/rival-secrets/0.1.0/tools/x").status_code == 404
    assert "turn-rival" not in client.get("/console/audit").text


def test_a_decided_approval_cannot_be_decided_again(client: TestClient, world: World) -> None:
    approval_id = hold_charge(world, TENANT, "decide twice")
    csrf = signed_in(client, world)
    assert client.post(f"/console/approvals/{approval_id}/deny", data={"csrf": csrf}, follow_redirects=False).status_code == 303
    answer = client.post(f"/console/approvals/{approval_id}/approve", data={"csrf": csrf}, follow_redirects=False)
    assert answer.status_code == 409
    assert "approval-not-pending" in answer.text
    assert ApprovalStore(world.database).get(TENANT, approval_id).state == "denied"


def test_a_credential_the_guest_wrote_into_a_held_request_is_hidden(client: TestClient, world: World) -> None:
    approval_id = hold_charge(world, TENANT, "with a header", {"Authorization": "Bearer sk_live_do_not_show",
                                                             "X-Api-Key": "key_do_not_show"})
    signed_in(client, world)
    for path in ("/console/approvals", f"/console/approvals/{approval_id}"):
        html = client.get(path).text
        assert "do_not_show" not in html
        assert "[hidden]" in html


def test_sign_in_only_returns_to_console_pages(client: TestClient, world: World) -> None:
    page = client.get("/console/sign-in?next=https://evil.example/")
    assert 'value="/console/approvals"' in page.text
    answer = client.post("/console/sign-in", data={"csrf": form_token(page.text), "token": world.tokens[TENANT],
                                                   "next": "//evil.example/"}, follow_redirects=False)
    assert answer.headers["location"] == "/console/approvals"


def test_bad_query_values_get_a_page_not_a_traceback(client: TestClient, world: World) -> None:
    signed_in(client, world)
    assert client.get("/console/skills/hollowbrook/1.0.0/tools/hollowbrook_charge?profile=nope").status_code == 404
    assert client.get("/console/skills/hollowbrook/diff").status_code == 422
    assert client.get("/console/skills/hollowbrook/diff?old=1.0.0&new=9.9.9").status_code == 404
    assert client.get("/console/audit?decision=<script>").status_code == 200


def test_an_expired_session_or_a_sign_in_cookie_is_not_a_session(client: TestClient, world: World) -> None:
    settings: Settings = client.app.state.settings
    signed_in(client, world)
    cookie = client.cookies.get(SESSION_COOKIE, path="/console")
    payload = unsign(settings, "session", cookie)
    assert payload is not None and cookie is not None
    client.cookies.clear()
    client.cookies.set(SESSION_COOKIE, cookie, path="/console")
    assert client.get("/console/skills", follow_redirects=False).status_code == 200
    with world.database.sessions() as session:
        token_hash = session.scalars(select(TokenRow.token_hash).where(TokenRow.tenant_id == TENANT)).first()
    for forged in (sign(settings, "session", {**payload, "expires": time.time() - 1}),
                   sign(settings, "sign-in", payload),
                   # a correctly signed cookie naming no server-side session (the old cookie's shape)
                   sign(settings, "session", {"tenant": TENANT, "token": token_hash, "csrf": "x", "expires": time.time() + 60})):
        client.cookies.clear()
        client.cookies.set(SESSION_COOKIE, forged, path="/console")
        assert client.get("/console/skills", follow_redirects=False).status_code == 303
    # expired on the server although the cookie still claims an hour: the server's expiry decides
    with world.database.transaction() as session:
        session.execute(update(ConsoleSessionRow).where(ConsoleSessionRow.id == hash_token(payload["sid"]))
                        .values(expires_at=utcnow() - dt.timedelta(seconds=1)))
    client.cookies.clear()
    client.cookies.set(SESSION_COOKIE, cookie, path="/console")
    assert client.get("/console/skills", follow_redirects=False).status_code == 303


def test_the_console_secret_comes_from_the_environment_or_is_one_per_process() -> None:
    assert Settings.from_env({"SKILLHOUSE_CONSOLE_SECRET": "from-env"}).console_secret == "from-env"
    assert Settings.from_env({}).console_secret == Settings().console_secret
    assert len(Settings().console_secret) >= 32


def test_console_pages_may_not_be_framed_or_run_scripts(client: TestClient, world: World) -> None:
    pages = [client.get("/console/sign-in")]
    signed_in(client, world)
    pages += [client.get("/console/approvals"), client.get("/console/skills/nope")]
    for page in pages:
        headers = page.headers
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert "script-src" not in headers["content-security-policy"]  # default-src 'none' covers scripts
        assert headers["x-frame-options"] == "DENY"
        assert headers["cache-control"] == "no-store"
