"""Per-user OAuth 2.0 connections: the tokens a person granted an ``oauth2-authorization-code`` binding's client.

A connection belongs to a tenant, a *subject* (the end user a turn acts for, given when the turn is
bound) and a binding (named by its origin). It is made in two steps: :meth:`ConnectionBroker.start` (the
binding found by its origin; :meth:`ConnectionBroker.begin` given its client) stores a single-use ``state`` (its SHA-256) with a PKCE verifier (RFC 7636, ``S256``; the verifier
encrypted) for :data:`STATE_TTL` seconds and answers the provider's authorization URL; after the
person consents, the provider sends their browser to the callback, and :meth:`ConnectionBroker.complete`
takes the state (deleted in the same transaction that reads it, so it works once), exchanges the code
with the verifier at the token URL, and stores the access and refresh tokens encrypted.

A turn's call to the binding's origin sends its subject's access token (:meth:`ConnectionBroker.resolve`);
without a connection it is answered ``connection-required`` with a fresh authorization URL, and
nothing is sent. An access token near its expiry is refreshed under the connection row's lock
(``SELECT ... FOR UPDATE`` on PostgreSQL, SQLite's write lock), so replicas refresh one at a time and
the second finds the first's tokens; the rotated refresh token is committed before the new access
token is used. A refresh the provider refuses with ``invalid_grant`` (revoked, expired) ends the
connection: the call is answered ``connection-required``. A 401 from the upstream makes
:meth:`ConnectionBroker.after_refusal` refresh once (unless another call already did) so the gateway
retries once; nothing else is retried.

Tokens are never shown: :meth:`ConnectionBroker.list` gives the scopes, expiry and times only.
:meth:`ConnectionBroker.revoke` deletes the connection and, where the binding names one, tells the
provider's RFC 7009 revocation endpoint.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from sqlalchemy import delete, select

from skillhouse.gateway.credentials import CredentialStore, Injection
from skillhouse.gateway.errors import (
    BindingNotFound,
    ConnectionRequired,
    CredentialError,
    CredentialUnavailable,
    GatewayError,
    InvalidRequest,
)
from skillhouse.gateway.oauth import AccessToken, TokenBroker, oauth_error, token_answer
from skillhouse.gateway.oauth_client import AuthorizationCodeClient
from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import OAuthConnectionRow, OAuthPendingRow

STATE_TTL = 600.0
"""Seconds an authorization URL stays usable: the person consents within this, or asks again."""
LAST_USED_STEP = 60.0
"""``last_used_at`` is written when it is older than this, not on every call."""
MAX_SUBJECT = 255


def check_subject(subject: str, field: str = "subject") -> str:
    """A subject as given: 1 to 255 printable characters without surrounding space (a user id, an email)."""
    if not subject or len(subject) > MAX_SUBJECT or not subject.isprintable() or subject != subject.strip():
        raise CredentialError(f"{field}: 1 to {MAX_SUBJECT} printable characters, no surrounding space",
                              code="invalid-subject", field=field)  # fmt: skip
    return subject


def _digest(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def pkce_challenge(verifier: str) -> str:
    """RFC 7636 ``S256``: base64url(SHA-256(verifier)) without padding."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


@dataclass(frozen=True)
class Started:
    """A connection being made: the URL to send the person to, and until when it works."""

    authorization_url: str
    expires_at: float
    subject: str
    origin: str


@dataclass(frozen=True)
class Connection:
    """What may be shown of a connection: never a token."""

    subject: str
    origin: str
    client_id: str
    scopes: tuple[str, ...]
    expires_at: float
    """When the current access token expires (it is refreshed when needed while a refresh token is held)."""
    refreshable: bool
    connected_at: float
    refreshed_at: float
    last_used_at: float | None


@dataclass(frozen=True)
class Revoked:
    connection: Connection
    provider_revoked: bool
    """Whether the provider's revocation endpoint accepted the revocation (``False``: none is configured, or it failed)."""
    provider_message: str


def _shown(row: OAuthConnectionRow) -> Connection:
    return Connection(row.subject, row.origin, row.client_id, tuple(row.scopes.split()), row.expires_at,
                      row.refresh_token is not None, row.connected_at, row.refreshed_at, row.last_used_at)  # fmt: skip


class ConnectionBroker:
    """Makes, uses, refreshes, lists and revokes the people's connections of a tenant's authorization-code bindings."""

    def __init__(self, database: Database, credentials: CredentialStore, tokens: TokenBroker,
                 clock: Callable[[], float] = time.time, state_ttl: float = STATE_TTL) -> None:  # fmt: skip
        self.database = database
        self.credentials = credentials
        self.tokens = tokens
        self.clock = clock
        self.state_ttl = state_ttl
        self._locks: dict[tuple[str, str, str], threading.Lock] = {}
        self._guard = threading.Lock()
        self.refreshes = 0
        """Refresh-token grants this process sent (what the tests count)."""

    # making a connection

    def start(self, tenant: str, subject: str, origin: str) -> Started:
        """Start ``subject``'s connection to the ``oauth2-authorization-code`` binding of ``origin`` (as a person
        wrote it): the authorization URL to send them to. What the API, the console and the CLI all call.
        ``invalid-subject`` (field ``subject``), ``invalid-origin`` (field ``origin``), ``binding-not-found``."""
        checked = check_subject(subject)
        bound = self.credentials.client_of(tenant, origin)
        if bound is None:
            raise BindingNotFound(f"no oauth2-authorization-code binding for {origin}")
        where, client = bound
        return self.begin(tenant, checked, where.text, client)

    def begin(self, tenant: str, subject: str, origin: str, client: AuthorizationCodeClient) -> Started:
        """Store a single-use state with a PKCE verifier; the provider's authorization URL carrying them."""
        check_subject(subject)
        state = secrets.token_urlsafe(32)
        verifier = secrets.token_urlsafe(64)
        now = self.clock()
        with self.database.transaction() as session:
            session.execute(delete(OAuthPendingRow).where(OAuthPendingRow.expires_at < now))
            session.add(OAuthPendingRow(state_digest=_digest(state), tenant_id=tenant, subject=subject, origin=origin,
                                        code_verifier=self.credentials.seal(verifier), expires_at=now + self.state_ttl))
        query = {"response_type": "code", "client_id": client.client_id, "redirect_uri": client.redirect_uri,
                 "state": state, "code_challenge": pkce_challenge(verifier), "code_challenge_method": "S256"}
        if client.scopes:
            query["scope"] = " ".join(client.scopes)
        joiner = "&" if "?" in client.authorization_url else "?"
        return Started(client.authorization_url + joiner + urlencode(query), now + self.state_ttl, subject, origin)

    def complete(self, state: str, code: str | None, error: str | None = None) -> Connection:
        """The callback: use the state once, exchange the code (with the PKCE verifier) and store the tokens."""
        now = self.clock()
        with self.database.transaction() as session:
            pending = session.get(OAuthPendingRow, _digest(state), with_for_update=True) if len(state) < 200 else None
            if pending is not None:
                session.delete(pending)  # used once, whatever happens next
            found = None if pending is None else (pending.tenant_id, pending.subject, pending.origin,
                                                  pending.code_verifier, pending.expires_at)  # fmt: skip
        if found is None or found[4] < now:
            raise InvalidRequest("this connection link is unknown, used or expired; ask for a new one",
                                 code="connection-state-invalid")  # fmt: skip
        tenant, subject, origin, sealed_verifier, _ = found
        if error is not None or not code:
            said = error if error and error.isascii() and error.isprintable() and len(error) < 80 else "no code"
            raise InvalidRequest(f"the provider did not grant the connection ({said}); nothing was stored",
                                 code="connection-not-granted")  # fmt: skip
        bound = self.credentials.client_of(tenant, origin)
        if bound is None:
            raise InvalidRequest(f"{origin} has no authorization-code binding any more", code="connection-state-invalid")
        client = bound[1]
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": client.redirect_uri,
                "code_verifier": self.credentials.unseal(sealed_verifier, "a connection's verifier")}
        started = self.clock()
        access, document = token_answer(client.token_url, self.tokens.post(tenant, client.token_url, form, client), started)
        refresh = document.get("refresh_token")
        granted = document.get("scope")
        scopes = granted if isinstance(granted, str) else " ".join(client.scopes)
        values = {"client_id": client.client_id, "access_token": self.credentials.seal(access.value),
                  "refresh_token": self.credentials.seal(refresh) if isinstance(refresh, str) and refresh else None,
                  "scopes": scopes, "expires_at": access.expires_at, "connected_at": started, "refreshed_at": started,
                  "last_used_at": None, "generation": 0}  # fmt: skip
        with self.database.transaction() as session:
            row = session.get(OAuthConnectionRow, (tenant, subject, origin), with_for_update=True)
            if row is None:
                row = OAuthConnectionRow(tenant_id=tenant, subject=subject, origin=origin, **values)
                session.add(row)
            else:
                for name, value in values.items():
                    setattr(row, name, value)
            session.flush()
            return _shown(row)

    # using one

    def resolve(self, tenant: str, subject: str | None, injections: Sequence[Injection]) -> list[Injection]:
        """``injections`` with each authorization-code binding's header set to the subject's access token;
        ``connection-required`` (with the URL to connect) when the subject has no usable connection."""
        resolved: list[Injection] = []
        for injection in injections:
            client = injection.grant
            if not isinstance(client, AuthorizationCodeClient):
                resolved.append(injection)
                continue
            token = self.token(tenant, subject, injection.origin, client)
            resolved.append(Injection(injection.header, f"Bearer {token}", (*injection.secrets, token),
                                      client, injection.binding, injection.origin))  # fmt: skip
        return resolved

    def required(self, tenant: str, subject: str | None, origin: str, client: AuthorizationCodeClient,
                 why: str) -> ConnectionRequired:  # fmt: skip
        if subject is None:
            return ConnectionRequired(
                f"{origin} acts for a person through their own connection, and this turn was bound without a "
                "subject; bind the turn with the subject it acts for; nothing was sent", origin=origin)  # fmt: skip
        started = self.begin(tenant, subject, origin, client)
        return ConnectionRequired(
            f"{why}: give the person the connect_url to connect their account to {origin}, then call again; "
            "nothing was sent", origin=origin, subject=subject, connect_url=started.authorization_url,
            connect_expires_at=started.expires_at)  # fmt: skip

    def token(self, tenant: str, subject: str | None, origin: str, client: AuthorizationCodeClient) -> str:
        """The subject's usable access token for ``origin``, refreshed first when it is near expiry."""
        if subject is None:
            raise self.required(tenant, subject, origin, client, "no subject")
        key = (tenant, subject, origin)
        now = self.clock()
        with self.database.reading() as session:
            row = session.get(OAuthConnectionRow, key)
            held = self._held(row, client)
            used = None if row is None else row.last_used_at
        if held is not None and held.usable(now):
            if used is None or now - used > LAST_USED_STEP:
                self._touch(key, now)
            return held.value
        if row is None or row.client_id != client.client_id:
            raise self.required(tenant, subject, origin, client, f"{subject} has no connection to {origin}")
        return self._refreshed(tenant, subject, origin, client, refused=None)

    def after_refusal(self, tenant: str, subject: str | None, sent: Sequence[Injection]) -> list[Injection] | None:
        """The upstream answered 401 to a request carrying connection tokens: refresh each once (unless another
        call already replaced it) and answer the injections to retry with, or ``None`` to answer the 401.
        Never raises: the 401 stands when no new token can be had."""
        if subject is None or not any(isinstance(i.grant, AuthorizationCodeClient) for i in sent):
            return None
        retried: list[Injection] = []
        for injection in sent:
            client = injection.grant
            if not isinstance(client, AuthorizationCodeClient):
                retried.append(injection)
                continue
            try:
                token = self._refreshed(tenant, subject, injection.origin, client, refused=injection.value.removeprefix("Bearer "))
            except GatewayError:
                return None
            retried.append(Injection(injection.header, f"Bearer {token}", (*injection.secrets, token),
                                     client, injection.binding, injection.origin))  # fmt: skip
        return retried

    def _held(self, row: OAuthConnectionRow | None, client: AuthorizationCodeClient) -> AccessToken | None:
        if row is None or row.client_id != client.client_id:
            return None
        value = self.credentials.unseal(row.access_token, "a connection's access token")
        return AccessToken(value, row.expires_at, row.refreshed_at)

    def _touch(self, key: tuple[str, str, str], now: float) -> None:
        with self.database.transaction(durable=False) as session:
            row = session.get(OAuthConnectionRow, key)
            if row is not None:
                row.last_used_at = now

    def _refreshed(self, tenant: str, subject: str, origin: str, client: AuthorizationCodeClient, refused: str | None) -> str:
        """Under the row's lock: the stored access token if it is usable (and not the one refused), else a
        refreshed one, its rotated refresh token committed before it is returned."""
        key = (tenant, subject, origin)
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        ended, token = False, ""
        with lock:
            with self.database.transaction() as session:
                row = session.get(OAuthConnectionRow, key, with_for_update=True)
                held = self._held(row, client)
                now = self.clock()
                if row is None or held is None:
                    ended = True
                elif held.value != refused and held.usable(now):  # another call refreshed, or none was needed
                    row.last_used_at = now
                    return held.value
                elif row.refresh_token is None:
                    session.delete(row)
                    ended = True
                else:
                    refresh = self.credentials.unseal(row.refresh_token, "a connection's refresh token")
                    form = {"grant_type": "refresh_token", "refresh_token": refresh}
                    response = self.tokens.post(tenant, client.token_url, form, client)
                    self.refreshes += 1
                    if response.status_code in (400, 401) and oauth_error(response) == "invalid_grant":
                        session.delete(row)  # revoked or expired at the provider: the person connects again
                        ended = True
                    else:
                        access, document = token_answer(client.token_url, response, now)
                        rotated = document.get("refresh_token")
                        if isinstance(rotated, str) and rotated:
                            row.refresh_token = self.credentials.seal(rotated)
                        granted = document.get("scope")
                        if isinstance(granted, str):
                            row.scopes = granted
                        row.access_token = self.credentials.seal(access.value)
                        row.expires_at, row.refreshed_at, row.last_used_at = access.expires_at, now, now
                        row.generation += 1
                        token = access.value
            # committed: the rotated refresh token is stored before its access token is used
            if not ended:
                return token
        raise self.required(tenant, subject, origin, client, f"{subject}'s connection to {origin} has ended")

    # seeing and ending them

    def list(self, tenant: str, subject: str | None = None, origin: str | None = None) -> list[Connection]:
        query = select(OAuthConnectionRow).where(OAuthConnectionRow.tenant_id == tenant)
        if subject is not None:
            query = query.where(OAuthConnectionRow.subject == subject)
        if origin is not None:
            query = query.where(OAuthConnectionRow.origin == origin)
        with self.database.reading() as session:
            rows = session.scalars(query.order_by(OAuthConnectionRow.subject, OAuthConnectionRow.origin))
            return [_shown(row) for row in rows]

    def revoke(self, tenant: str, subject: str, origin: str) -> Revoked | None:
        """Delete the connection (``None``: there was none) and tell the provider's revocation endpoint, if any."""
        with self.database.transaction() as session:
            row = session.get(OAuthConnectionRow, (tenant, subject, origin), with_for_update=True)
            if row is None:
                return None
            shown = _shown(row)
            sealed, hint = (row.refresh_token, "refresh_token") if row.refresh_token else (row.access_token, "access_token")
            token = self.credentials.unseal(sealed, "a connection's token")
            session.delete(row)
        bound = self.credentials.client_of(tenant, origin)
        if bound is None or bound[1].revocation_url is None:
            return Revoked(shown, False, "the binding names no revocation endpoint; the connection is deleted here")
        client = bound[1]
        url = client.revocation_url or ""
        try:
            response = self.tokens.post(tenant, url, {"token": token, "token_type_hint": hint}, client, "revocation endpoint")
        except CredentialUnavailable as failed:
            return Revoked(shown, False, failed.message.replace("no access token from the token endpoint", "the revocation endpoint"))
        if response.status_code == 200:
            return Revoked(shown, True, "revoked at the provider")
        error = oauth_error(response)
        return Revoked(shown, False, f"the revocation endpoint answered {response.status_code}" + (f" ({error})" if error else ""))
