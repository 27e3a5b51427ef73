"""Access tokens for OAuth 2.0 client-credentials bindings: fetched once, shared, refreshed before expiry.

A request whose origin has an ``oauth2-client-credentials`` binding gets ``Authorization: Bearer
<access token>``. The token is fetched after the egress rule passed for the request, just before it
is sent, and then kept until shortly before it expires (:func:`refresh_margin`): in this process's
memory, and encrypted in ``gateway_oauth_tokens`` for every other replica.

One fetch, however many callers: in a process, callers of one binding queue on a lock and the first
fetches; across processes, the fetch runs inside a transaction holding a lock on the binding (a
PostgreSQL advisory lock; SQLite's write lock, taken at ``BEGIN IMMEDIATE``), and a caller that gets
the lock after another fetched finds the new token in the row and uses it.
The lock is held for the token request only (at most :data:`TOKEN_TIMEOUT`), once per token
lifetime; on SQLite that is the database's one write lock, so other writes wait that long at worst.

The client secret goes only to the token URL sealed with it (``gateway/oauth_client.py``), and that
URL passes the egress rule too: its host may resolve only to public addresses unless the deployment
lists it for private access, the connection goes to the checked address, and redirects are never
followed. A token endpoint that fails, refuses the client or answers something other than a bearer
token ends the request with ``credential-unavailable`` before anything is sent upstream; the message
names the token endpoint and the OAuth ``error`` code, never a secret or the endpoint's body.
"""

from __future__ import annotations

import base64
import hashlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote

import httpx
from sqlalchemy import text

from skillhouse.gateway.credential_input import unsendable
from skillhouse.gateway.credentials import CredentialStore, Injection
from skillhouse.gateway.egress import EgressDecision, EgressPolicy, Resolver, decide_egress, parse_target
from skillhouse.gateway.errors import CredentialUnavailable, GatewayError
from skillhouse.gateway.oauth_client import AuthorizationCodeClient, ClientCredentials
from skillhouse.gateway.upstream_wire import PinnedTransport
from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import OAuthTokenRow

TOKEN_TIMEOUT = httpx.Timeout(10.0, connect=5.0)
"""The token endpoint's whole answer; the lock that makes the fetch single is held this long at most."""
MAX_TOKEN_RESPONSE = 64 * 1024
DEFAULT_LIFETIME = 300.0
"""Seconds a token is kept when the endpoint gives no ``expires_in`` (RFC 6749 makes it optional)."""

Reach = Callable[[str], tuple[frozenset[str], Mapping[tuple[str, int], str]]]
"""For a tenant: the hosts open to private addresses and the fixed resolution (``GatewayConfig.private_reach``)."""
TransportFactory = Callable[[EgressDecision], httpx.BaseTransport]


def refresh_margin(lifetime: float) -> float:
    """How long before expiry a token is replaced: a tenth of its lifetime, at most a minute."""
    return min(60.0, max(lifetime, 0.0) / 10)


@dataclass(frozen=True)
class AccessToken:
    value: str
    expires_at: float
    fetched_at: float

    def usable(self, now: float) -> bool:
        return now < self.expires_at - refresh_margin(self.expires_at - self.fetched_at)


def unavailable(client: ClientCredentials | AuthorizationCodeClient | str, why: str) -> CredentialUnavailable:
    """``credential-unavailable`` naming the token endpoint (of ``client``, or the URL given)."""
    authority = parse_target(client if isinstance(client, str) else client.token_url).authority
    return CredentialUnavailable(
        f"no access token from the token endpoint {authority}: {why}; nothing was sent upstream",
        token_endpoint=authority,
    )


class TokenBroker:
    """Hands out the access token of a binding, fetching it only when no caller anywhere holds a usable one."""

    def __init__(
        self, database: Database, credentials: CredentialStore, reach: Reach, resolver: Resolver,
        transport_for: TransportFactory | None = None, clock: Callable[[], float] = time.time,
    ) -> None:  # fmt: skip
        self.database = database
        self.credentials = credentials
        self.reach = reach
        self.resolver = resolver
        self.transport_for = transport_for or (lambda decision: PinnedTransport(decision.address, decision.port))
        self.clock = clock
        self._tokens: dict[tuple[str, str], AccessToken] = {}
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._guard = threading.Lock()
        self.fetches = 0
        """Tokens this process fetched from token endpoints (what the benchmarks and tests count)."""

    def resolve(self, tenant: str, injections: Sequence[Injection]) -> list[Injection]:
        """``injections`` with every grant's header filled in with its access token."""
        resolved: list[Injection] = []
        for injection in injections:
            if not isinstance(injection.grant, ClientCredentials):
                resolved.append(injection)
                continue
            token = self.token(tenant, injection.binding, injection.grant)
            resolved.append(Injection(injection.header, f"Bearer {token}", (*injection.secrets, token)))
        return resolved

    def token(self, tenant: str, binding: str, client: ClientCredentials) -> str:
        key = (tenant, binding)
        held = self._tokens.get(key)
        if held is not None and held.usable(self.clock()):
            return held.value
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            held = self._tokens.get(key)
            if held is None or not held.usable(self.clock()):
                held = self._shared(tenant, binding, client)
                self._tokens[key] = held
            return held.value

    def forget(self, tenant: str, binding: str, token: str) -> None:
        """Drop ``token`` (the upstream refused it): the next call fetches a new one, here and in other replicas."""
        key = (tenant, binding)
        held = self._tokens.get(key)
        if held is not None and held.value == token:
            self._tokens.pop(key, None)
        with self.database.transaction() as session:
            row = session.get(OAuthTokenRow, (tenant, binding))
            if row is not None and self.credentials.unseal(row.access_token, "an access token") == token:
                session.delete(row)

    def _shared(self, tenant: str, binding: str, client: ClientCredentials) -> AccessToken:
        """The stored token if another replica fetched one still usable, else a new one, stored: under the lock."""
        with self.database.transaction() as session:
            if self.database.dialect == "postgresql":
                lock = int.from_bytes(hashlib.sha256(f"{tenant}\0{binding}".encode()).digest()[:8], "big", signed=True)
                session.execute(text("SELECT pg_advisory_xact_lock(:lock)"), {"lock": lock})
            row = session.get(OAuthTokenRow, (tenant, binding))
            if row is not None:
                stored = AccessToken(self.credentials.unseal(row.access_token, "an access token"), row.expires_at, row.fetched_at)
                if stored.usable(self.clock()):
                    return stored
            fresh = self._fetch(tenant, client)
            sealed = self.credentials.seal(fresh.value)
            if row is None:
                session.add(OAuthTokenRow(tenant_id=tenant, binding=binding, access_token=sealed,
                                          expires_at=fresh.expires_at, fetched_at=fresh.fetched_at))  # fmt: skip
            else:
                row.access_token, row.expires_at, row.fetched_at = sealed, fresh.expires_at, fresh.fetched_at
            return fresh

    def _fetch(self, tenant: str, client: ClientCredentials) -> AccessToken:
        """POST the client-credentials grant to the checked address of the token URL (RFC 6749 §4.4.2)."""
        form = {"grant_type": "client_credentials"}
        if client.scopes:
            form["scope"] = " ".join(client.scopes)
        if client.audience is not None:
            form["audience"] = client.audience
        if client.resource is not None:
            form["resource"] = client.resource
        started = self.clock()
        response = self.post(tenant, client.token_url, form, client)
        self.fetches += 1
        return _token_of(client, response, started)

    def post(self, tenant: str, url: str, form: dict[str, str], client: ClientCredentials | AuthorizationCodeClient,
             what: str = "token endpoint") -> httpx.Response:  # fmt: skip
        """POST ``form`` with the client's authentication to ``url`` (its token or revocation endpoint), at the
        address the egress rule checked, redirects not followed; ``credential-unavailable`` if it cannot be."""
        target = parse_target(url)
        private_hosts, fixed = self.reach(tenant)
        try:
            decision = decide_egress(target, EgressPolicy(frozenset({target.host}), private_hosts), fixed, self.resolver)
        except GatewayError as exc:
            raise unavailable(url, f"the {what} URL is refused by the egress rule ({exc.message})") from None
        headers = {"Accept": "application/json"}
        form = dict(form)
        if client.auth_method == "client_secret_post":
            form.update(client_id=client.client_id, client_secret=client.client_secret)
        else:
            pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        try:
            with httpx.Client(transport=self.transport_for(decision), timeout=TOKEN_TIMEOUT, follow_redirects=False) as http:
                return http.post(url, data=form, headers=headers)
        except Exception as exc:  # httpx's and the pinned transport's httpcore failures alike: nothing reached
            raise unavailable(url, f"it could not be reached ({type(exc).__name__})") from None


def _token_of(client: ClientCredentials, response: httpx.Response, started: float) -> AccessToken:
    """The access token of a token endpoint's answer, or ``credential-unavailable`` saying what was wrong."""
    return token_answer(client.token_url, response, started)[0]


def oauth_error(response: httpx.Response) -> str | None:
    """The OAuth ``error`` code of a token endpoint's refusal, when it gave a plain one."""
    try:
        document = response.json()
    except ValueError:
        return None
    error = document.get("error") if isinstance(document, dict) else None
    return error if isinstance(error, str) and error.isascii() and error.isprintable() and len(error) < 80 else None


def token_answer(token_url: str, response: httpx.Response, started: float) -> tuple[AccessToken, dict[str, object]]:
    """The access token of a token endpoint's answer and the whole answer (for its ``refresh_token`` and
    ``scope``), or ``credential-unavailable`` saying what was wrong."""
    if len(response.content) > MAX_TOKEN_RESPONSE:
        raise unavailable(token_url, f"its answer is over {MAX_TOKEN_RESPONSE} bytes")
    try:
        document = response.json()
    except ValueError:
        document = None
    if response.status_code != 200:
        error = oauth_error(response)
        named = f" ({error})" if error else ""
        raise unavailable(token_url, f"it answered {response.status_code}{named}; check the client id, secret and scopes")
    if not isinstance(document, dict) or not isinstance(document.get("access_token"), str):
        raise unavailable(token_url, "its answer has no access_token")
    if str(document.get("token_type", "")).lower() != "bearer":
        raise unavailable(token_url, "its token is not a bearer token")
    token = document["access_token"]
    if unsendable(f"Bearer {token}") is not None:
        raise unavailable(token_url, "its access token cannot be sent as a header value")
    lifetime = document.get("expires_in", DEFAULT_LIFETIME)
    if isinstance(lifetime, str) and lifetime.isdigit():
        lifetime = int(lifetime)  # some servers send it as a string
    if isinstance(lifetime, bool) or not isinstance(lifetime, (int, float)) or lifetime <= 0:
        raise unavailable(token_url, "its expires_in is not a positive number of seconds")
    return AccessToken(token, started + float(lifetime), started), document
