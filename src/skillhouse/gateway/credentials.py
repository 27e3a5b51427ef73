"""Credentials bound per tenant, origin and header: encrypted at rest, written but never read back.

A credential is one of four schemes: ``bearer`` (``Authorization: Bearer <secret>``), ``basic``
(``Authorization: Basic base64(<user:password>)``), ``header`` (``<header>: <secret>``, an API-key
header) or ``oauth2-client-credentials`` (``Authorization: Bearer <access token>``, the token fetched
with the client configuration the value holds: ``gateway/oauth.py``). The header value is encrypted with Fernet (AES-128-CBC + HMAC-SHA256) under the key in
``SKILLHOUSE_SECRET_KEY``. The only reader is the gateway, which injects the value after the egress
rule passes and hands the secret's spellings to the redactor; the API lists bindings, never values.

A binding's origin is scheme + host + port (``credential_input.py``): it is injected only into a
request whose canonical target has that exact scheme, host and port, over plain http only with the
binding's ``allow_http`` opt-in. Redaction is wider on purpose: every secret bound anywhere on the
request's host is scrubbed from its answer, whatever the scheme or port.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, cast, get_args

from cryptography.fernet import Fernet, InvalidToken
from sqlalchemy import Table, delete, select
from sqlalchemy.exc import IntegrityError

from skillhouse.gateway.credential_input import Origin, check_opt_in, check_sendable, parse_origin, unsendable
from skillhouse.gateway.egress import Target
from skillhouse.gateway.errors import CredentialError, GatewayUnavailable
from skillhouse.gateway.oauth_client import (
    CODE_GRANT,
    GRANT,
    GRANTS,
    AuthorizationCodeClient,
    ClientCredentials,
    ClientShown,
    unsealed_client,
)
from skillhouse.json_types import one_of
from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import CredentialRow, OAuthConnectionRow, OAuthTokenRow

CredentialScheme = Literal["bearer", "basic", "header", "oauth2-client-credentials", "oauth2-authorization-code"]
SCHEMES: tuple[CredentialScheme, ...] = ("bearer", "basic", "header")
"""The static schemes; :data:`GRANTS` bindings are written with :meth:`CredentialStore.put_client`."""
ALL_SCHEMES: tuple[CredentialScheme, ...] = get_args(CredentialScheme)
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # fullmatch: ``$`` would let a final line break through
_TABLE = cast(Table, CredentialRow.__table__)
CREDENTIAL_COLUMNS = (_TABLE.c.origin_scheme, _TABLE.c.port, _TABLE.c.allow_http, _TABLE.c.header, _TABLE.c.scheme, _TABLE.c.value)
"""What the gateway reads of each credential of a host, in this order (``stored_state.py`` reads them too)."""


@dataclass(frozen=True)
class Binding:
    """What the API may show of a credential: where it goes, never what it is."""

    origin: Origin
    header: str
    scheme: CredentialScheme
    allow_http: bool = False
    client: ClientShown | None = None
    """For an OAuth 2.0 binding: its client, all but the secret."""

    @property
    def host(self) -> str:
        return self.origin.host


@dataclass(frozen=True)
class Injection:
    """A header to set on the way out, and the secret strings to redact on the way back."""

    header: str
    value: str
    secrets: tuple[str, ...]
    grant: ClientCredentials | AuthorizationCodeClient | None = None
    """An OAuth 2.0 binding: ``value`` is empty until the gateway fetches the token (``gateway/oauth.py``), or
    for an authorization-code binding takes the token of the turn's subject's connection (``gateway/connections.py``)."""
    binding: str = ""
    """For a grant: a digest of the stored value, naming the token cached for it."""
    origin: str = ""
    """For a grant: the binding's origin (``scheme://host[:port]``), naming the connections made with it."""


@dataclass(frozen=True)
class HostCredentials:
    """For one request: the headers its origin gets, and every secret bound anywhere on its host."""

    injections: Sequence[Injection] = ()
    secrets: tuple[str, ...] = ()
    """Redacted from the answer whatever the scheme or port: an echo of any of them is a leak."""


def header_value(scheme: str, secret: str) -> tuple[str, tuple[str, ...]]:
    """The header value for a scheme, and every secret string it contains."""
    if scheme == "bearer":
        return f"Bearer {secret}", (secret,)
    if scheme == "basic":
        encoded = base64.b64encode(secret.encode()).decode()
        password = secret.partition(":")[2]
        return f"Basic {encoded}", tuple(s for s in (secret, encoded, password) if s)
    return secret, (secret,)


def secrets_of(scheme: str, value: str) -> tuple[str, ...]:
    """Recover the secret strings from a stored header value (for redaction)."""
    if scheme in GRANTS:
        return (unsealed_client(value).client_secret,)
    if scheme == "bearer":
        secret = value.removeprefix("Bearer ")
    elif scheme == "basic":
        secret = base64.b64decode(value.removeprefix("Basic ")).decode()
    else:
        secret = value
    return header_value(scheme, secret)[1] + (value,)


def injects(origin_scheme: str, port: int, allow_http: bool, target: Target) -> bool:
    """Whether a binding of the target's host goes on this request: same scheme and port, http only by opt-in."""
    return origin_scheme == target.scheme and port == target.port and (origin_scheme == "https" or allow_http)


class CredentialStore:
    """Write, list and delete a tenant's credentials; :meth:`for_rows` reads those the gateway's stored-state
    read found for a request (``gateway/stored_state.py``)."""

    def __init__(self, database: Database, secret_key: str | None) -> None:
        self.database = database
        self._fernet: Fernet | None = None
        if secret_key:
            try:
                self._fernet = Fernet(secret_key.encode())
            except ValueError:
                raise GatewayUnavailable(
                    "SKILLHOUSE_SECRET_KEY must be 32 bytes in urlsafe base64 (Fernet.generate_key())",
                    code="secret-key-invalid",
                ) from None
        # decrypted once per stored value, not per request: the redactor's forms are cached per secret too
        self._opened = lru_cache(maxsize=1024)(self._decrypt)

    def _cipher(self) -> Fernet:
        if self._fernet is None:
            raise GatewayUnavailable(
                "credentials need SKILLHOUSE_SECRET_KEY set (32 bytes, urlsafe base64)", code="secret-key-missing"
            )
        return self._fernet

    def seal(self, text: str) -> str:
        return self._cipher().encrypt(text.encode()).decode()

    def unseal(self, text: str, what: str) -> str:
        try:
            return self._cipher().decrypt(text.encode()).decode()
        except InvalidToken:
            raise GatewayUnavailable(
                f"{what} cannot be decrypted with this SKILLHOUSE_SECRET_KEY", code="credential-undecryptable"
            ) from None

    def put(self, tenant: str, origin: str, scheme: str, secret: str, header: str | None = None,
            allow_http: bool = False) -> Binding:  # fmt: skip
        """Bind ``secret`` to (tenant, origin, header), replacing any earlier one; refuse what cannot be sent."""
        where = parse_origin(origin)
        check_opt_in(where, allow_http)
        if scheme not in SCHEMES:
            raise CredentialError(f"scheme must be one of {', '.join(SCHEMES)}", field="scheme")
        if scheme == "basic" and ":" not in secret:
            raise CredentialError("a basic credential is user:password", field="value")
        name = "Authorization" if scheme in ("bearer", "basic") else (header or "")
        if not _TOKEN.fullmatch(name) or len(name) > 128:
            raise CredentialError("header must be a valid HTTP header name", field="header")
        value, _ = header_value(scheme, secret)
        check_sendable(secret, value)
        self._write(tenant, where, name.lower(), scheme, self.seal(value), allow_http)
        return Binding(where, name.lower(), one_of(scheme, ALL_SCHEMES, "scheme"), allow_http)

    def put_client_credentials(self, tenant: str, origin: str, client: ClientCredentials, allow_http: bool = False) -> Binding:
        """Bind an OAuth 2.0 client to (tenant, origin, ``authorization``): the gateway fetches, caches and
        injects its access token as ``Authorization: Bearer``. ``client`` comes from ``client_credentials()``."""
        return self.put_client(tenant, origin, client, allow_http)

    def put_client(self, tenant: str, origin: str, client: ClientCredentials | AuthorizationCodeClient,
                   allow_http: bool = False) -> Binding:  # fmt: skip
        """Bind an OAuth 2.0 client of either grant to (tenant, origin, ``authorization``). Binding an
        authorization-code client again keeps the people's connections made with the same client id (a
        rotated client secret); connections made with another client id are no longer used."""
        where = parse_origin(origin)
        check_opt_in(where, allow_http)
        scheme: CredentialScheme = CODE_GRANT if isinstance(client, AuthorizationCodeClient) else GRANT
        self._write(tenant, where, "authorization", scheme, self.seal(client.sealed()), allow_http)
        return Binding(where, "authorization", scheme, allow_http, client.shown())

    def _write(self, tenant: str, where: Origin, header: str, scheme: str, encrypted: str, allow_http: bool) -> None:
        row = {"tenant_id": tenant, "host": where.host, "origin_scheme": where.scheme, "port": where.port, "header": header}
        for _attempt in range(3):
            try:
                with self.database.transaction() as session:
                    self._forget(session, tenant, row)
                    session.add(CredentialRow(**row, allow_http=allow_http, scheme=scheme, value=encrypted))
                break
            except IntegrityError:
                continue  # a concurrent writer bound the same header first; replace theirs

    @staticmethod
    def _forget(session: Any, tenant: str, row: dict[str, Any]) -> bool:
        """Delete the binding ``row`` names and any access token cached for it."""
        where = [getattr(CredentialRow, k) == v for k, v in row.items()]
        earlier = list(session.scalars(select(CredentialRow.value).where(*where)))
        if earlier:
            session.execute(delete(OAuthTokenRow).where(
                OAuthTokenRow.tenant_id == tenant, OAuthTokenRow.binding.in_([binding_digest(v) for v in earlier])
            ))  # fmt: skip
        result = session.execute(delete(CredentialRow).where(*where))
        return bool(getattr(result, "rowcount", 0))

    def list(self, tenant: str) -> list[Binding]:
        with self.database.transaction() as session:
            rows = session.scalars(
                select(CredentialRow)
                .where(CredentialRow.tenant_id == tenant)
                .order_by(CredentialRow.host, CredentialRow.origin_scheme, CredentialRow.port, CredentialRow.header)
            )
            return [
                Binding(Origin(r.origin_scheme, r.host, r.port), r.header, one_of(r.scheme, ALL_SCHEMES, "scheme"), r.allow_http,
                        unsealed_client(self.unseal(r.value, "an OAuth binding")).shown() if r.scheme in GRANTS else None)
                for r in rows
            ]  # fmt: skip

    def delete(self, tenant: str, origin: str, header: str) -> bool:
        """Remove the binding of ``origin`` (a bare host meaning https, as in :meth:`put`) and ``header``; an
        authorization-code binding's connections go with it (forgotten here, not revoked at the provider)."""
        where = parse_origin(origin)
        row = {"tenant_id": tenant, "host": where.host, "origin_scheme": where.scheme, "port": where.port,
               "header": header.lower()}  # fmt: skip
        with self.database.transaction() as session:
            removed = self._forget(session, tenant, row)
            if removed and header.lower() == "authorization":
                session.execute(delete(OAuthConnectionRow).where(
                    OAuthConnectionRow.tenant_id == tenant, OAuthConnectionRow.origin == where.text))  # fmt: skip
            return removed

    def client_of(self, tenant: str, origin: str) -> tuple[Origin, AuthorizationCodeClient] | None:
        """The authorization-code client bound to ``origin``, if one is."""
        where = parse_origin(origin)
        with self.database.reading() as session:
            value = session.scalars(select(CredentialRow.value).where(
                CredentialRow.tenant_id == tenant, CredentialRow.host == where.host,
                CredentialRow.origin_scheme == where.scheme, CredentialRow.port == where.port,
                CredentialRow.header == "authorization", CredentialRow.scheme == CODE_GRANT)).first()  # fmt: skip
        if value is None:
            return None
        return where, AuthorizationCodeClient.unsealed(self.unseal(value, "an OAuth binding"))

    def for_rows(self, target: Target, found: Sequence[tuple[Any, ...]]) -> HostCredentials:
        """From the host's rows (:data:`CREDENTIAL_COLUMNS`): the origin's injections and every secret of the host."""
        if not found:
            return HostCredentials()
        injections: list[Injection] = []
        secrets: list[str] = []
        for origin_scheme, port, allow_http, header, scheme, encrypted in found:
            value, spelled = self._opened(header, scheme, encrypted)
            secrets.extend(spelled)
            if injects(origin_scheme, int(port), bool(allow_http), target):
                if scheme in GRANTS:
                    grant = unsealed_client(value)
                    where = Origin(origin_scheme, target.host, int(port)).text
                    injections.append(Injection(header, "", spelled, grant, binding_digest(encrypted), where))
                    continue
                if unsendable(value) is not None:
                    raise CredentialError(
                        f"the credential for {target.authority} ({header}) cannot be sent as a header; bind it again",
                        code="credential-not-sendable",
                    )
                injections.append(Injection(header, value, spelled))
        return HostCredentials(injections, tuple(secrets))

    def _decrypt(self, header: str, scheme: str, encrypted: str) -> tuple[str, tuple[str, ...]]:
        value = self.unseal(encrypted, f"a credential ({header})")
        return value, secrets_of(scheme, value)


def binding_digest(encrypted: str) -> str:
    """Names the access token of one stored binding value; a new value (bound again) gets a new name."""
    return hashlib.sha256(encrypted.encode()).hexdigest()
