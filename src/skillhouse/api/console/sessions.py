"""Console sessions: signed cookies, CSRF tokens, scopes, and the dependencies every console page uses.

A session lives on the server (:mod:`skillhouse.registry.console_sessions`); the cookie holds only
``{sid, expires}``, the session's random secret, signed with HMAC-SHA256 under
``Settings.console_secret``; it is HttpOnly, ``SameSite=Strict`` and scoped to ``/console``. The API
token itself is never stored or shown. Every request looks the session up, so signing out, expiry and
revoking the token each end it for every copy of the cookie.

Scopes: a session has its token's scope. Each page says the least scope it needs with
``RunSessionDep`` or ``ApproveSessionDep`` (:class:`ScopeRequired`, which calls the same
:func:`~skillhouse.registry.tokens.require_scope` as the API); a page refused for its scope is a 403
page with code ``insufficient-scope``.

CSRF: every form carries the session's ``csrf`` value; a form whose value is missing or different is
refused with 403. The sign-in form, which comes before any session, is protected by a double-submit
token: a signed pre-session cookie and the same value in the form.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import parse_qs

from fastapi import Depends, Request, Response

from skillhouse.errors import CallerError, Signal
from skillhouse.json_types import JsonObject
from skillhouse.registry import console_sessions
from skillhouse.registry.tokens import Scope, require_scope, scope_allows
from skillhouse.settings import Settings
from skillhouse.store import Database

SESSION_COOKIE = "skh_console"
SIGN_IN_COOKIE = "skh_console_sign_in"
COOKIE_PATH = "/console"
SESSION_SECONDS = 8 * 3600
SIGN_IN_SECONDS = 3600
MAX_FORM_BYTES = 16 * 1024


class SignInRequired(Signal):
    """Not an error: no valid session (``sign-in-required``); the page answers with a redirect to the sign-in page."""

    code = "sign-in-required"

    def __init__(self, message: str = "sign in to see this page") -> None:
        super().__init__(message)


class ConsoleRefusal(CallerError):
    """A page refused with a code and a message for people (``csrf-refused``, ``form-too-large``,
    ``versions-missing``, ``unknown-profile``, ``tool-not-found``, ``not-found``); the status is the one
    every error gets (``skillhouse.api.errors.status_for``)."""


@dataclass(frozen=True)
class ConsoleSession:
    """The signed-in person: their tenant, the token they signed in with (by id) and its scope, the CSRF value."""

    tenant: str
    token_id: int
    token_label: str
    scope: Scope
    csrf: str

    @property
    def may_approve(self) -> bool:
        """Whether this session may decide approvals (pages show the buttons only then)."""
        return scope_allows(self.scope, "approve")


def _key(settings: Settings, purpose: str) -> bytes:
    # one derived key per purpose, so a sign-in cookie can never pass for a session cookie
    return hmac.new(settings.console_secret.encode(), purpose.encode(), hashlib.sha256).digest()


def sign(settings: Settings, purpose: str, payload: JsonObject) -> str:
    body = base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode().rstrip("=")
    mac = hmac.new(_key(settings, purpose), body.encode(), hashlib.sha256).hexdigest()
    return f"{body}.{mac}"


def unsign(settings: Settings, purpose: str, value: str | None) -> JsonObject | None:
    """The payload of a cookie signed for ``purpose`` and not yet expired; ``None`` otherwise."""
    if not value or "." not in value:
        return None
    body, _, mac = value.rpartition(".")
    expected = hmac.new(_key(settings, purpose), body.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(mac, expected):
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except ValueError:
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("expires"), (int, float)):
        return None
    return payload if payload["expires"] > time.time() else None


def _set_cookie(request: Request, response: Response, name: str, value: str, max_age: int) -> None:
    response.set_cookie(name, value, max_age=max_age, path=COOKIE_PATH, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")


def new_sign_in_token() -> str:
    return secrets.token_urlsafe(24)


def remember_sign_in_token(request: Request, response: Response, settings: Settings, token: str) -> None:
    """Set the signed twin of the sign-in form's double-submit ``token`` as a cookie."""
    cookie = sign(settings, "sign-in", {"csrf": token, "expires": time.time() + SIGN_IN_SECONDS})
    _set_cookie(request, response, SIGN_IN_COOKIE, cookie, SIGN_IN_SECONDS)


def sign_in_token_matches(request: Request, settings: Settings, submitted: str) -> bool:
    payload = unsign(settings, "sign-in", request.cookies.get(SIGN_IN_COOKIE))
    return bool(payload and submitted and hmac.compare_digest(str(payload.get("csrf", "")), submitted))


def start_session(request: Request, response: Response, settings: Settings, token_id: int) -> None:
    """Sign the person in with API token ``token_id``: a new server-side session, whose cookie replaces
    the sign-in cookie."""
    database: Database = request.app.state.database
    secret = console_sessions.open_session(database, token_id, SESSION_SECONDS)
    payload = {"sid": secret, "expires": time.time() + SESSION_SECONDS}
    _set_cookie(request, response, SESSION_COOKIE, sign(settings, "session", payload), SESSION_SECONDS)
    response.delete_cookie(SIGN_IN_COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict")


def _session_secret(request: Request) -> str:
    settings: Settings = request.app.state.settings
    payload = unsign(settings, "session", request.cookies.get(SESSION_COOKIE))
    return str(payload.get("sid", "")) if payload else ""


def end_session(request: Request, response: Response) -> None:
    """Sign out: the server forgets the session (every copy of the cookie stops working) and the cookie goes."""
    secret = _session_secret(request)
    if secret:
        database: Database = request.app.state.database
        console_sessions.end_session(database, secret)
    response.delete_cookie(SESSION_COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict")


def read_session(request: Request) -> ConsoleSession | None:
    """The session of this request if its cookie is valid and its server-side session live; else ``None``."""
    database: Database = request.app.state.database
    live = console_sessions.live_session(database, _session_secret(request))
    if live is None:
        return None
    return ConsoleSession(live.tenant, live.token_id, live.label, live.scope, live.csrf)


def signed_in(request: Request) -> ConsoleSession:
    session = read_session(request)
    if session is None:
        raise SignInRequired()
    return session


async def posted_form(request: Request) -> dict[str, str]:
    """The fields of a URL-encoded form (first value of each); any other body has no fields, so no CSRF token."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        return {}
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise ConsoleRefusal(f"a console form is at most {MAX_FORM_BYTES} bytes", code="form-too-large")
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {name: values[0] for name, values in fields.items()}


def checked_form(
    session: Annotated[ConsoleSession, Depends(signed_in)],
    form: Annotated[dict[str, str], Depends(posted_form)],
) -> dict[str, str]:
    """A form of a signed-in person whose CSRF token is this session's; else 403."""
    submitted = form.get("csrf", "")
    if not submitted or not hmac.compare_digest(submitted, session.csrf):
        raise ConsoleRefusal("this form is missing its CSRF token or it is stale; reload the page and try again",
                             code="csrf-refused")
    return form


class ScopeRequired:
    """A console page's dependency saying the least scope it needs: the session, if its token's scope allows."""

    def __init__(self, minimum: Scope) -> None:
        self.minimum = minimum

    def __call__(self, session: Annotated[ConsoleSession, Depends(signed_in)]) -> ConsoleSession:
        require_scope(session.scope, self.minimum)  # InsufficientScope: a 403 page
        return session

    def __repr__(self) -> str:
        return f"ScopeRequired({self.minimum!r})"


RunSessionDep = Annotated[ConsoleSession, Depends(ScopeRequired("run"))]
ApproveSessionDep = Annotated[ConsoleSession, Depends(ScopeRequired("approve"))]
AdminSessionDep = Annotated[ConsoleSession, Depends(ScopeRequired("admin"))]
FormDep = Annotated[dict[str, str], Depends(checked_form)]
FieldsDep = Annotated[dict[str, str], Depends(posted_form)]
