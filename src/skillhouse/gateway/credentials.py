"""Credentials bound per tenant, host and header: encrypted at rest, written but never read back.

A credential is one of three schemes: ``bearer`` (``Authorization: Bearer <secret>``), ``basic``
(``Authorization: Basic base64(<user:password>)``) or ``header`` (``<header>: <secret>``, an API-key
header). The header value is encrypted with Fernet (AES-128-CBC + HMAC-SHA256) under the key in
``SKILLHOUSE_SECRET_KEY``. The only reader is the gateway, which injects the value after the egress
rule passes and hands the secret's spellings to the redactor; the API lists bindings, never values.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from cryptography.fernet import Fernet, InvalidToken
from sqlalchemy import Table, bindparam, delete, or_, select
from sqlalchemy.exc import IntegrityError

from skillhouse.gateway.egress import Target
from skillhouse.gateway.errors import CredentialError
from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import CredentialRow
from skillhouse.store.prepared import DriverTransaction, Prepared, read

SCHEMES = ("bearer", "basic", "header")
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_HOST = re.compile(r"^[a-z0-9.\-\[\]:]+$")
_TABLE = cast(Table, CredentialRow.__table__)


@dataclass(frozen=True)
class Binding:
    """What the API may show of a credential: where it goes, never what it is."""

    host: str
    header: str
    scheme: str


@dataclass(frozen=True)
class Injection:
    """A header to set on the way out, and the secret strings to redact on the way back."""

    header: str
    value: str
    secrets: tuple[str, ...]


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
    if scheme == "bearer":
        secret = value.removeprefix("Bearer ")
    elif scheme == "basic":
        secret = base64.b64decode(value.removeprefix("Basic ")).decode()
    else:
        secret = value
    return header_value(scheme, secret)[1] + (value,)


class CredentialStore:
    """Write, list and delete a tenant's credentials; :meth:`for_target` is the gateway's reader."""

    def __init__(self, database: Database, secret_key: str | None) -> None:
        self.database = database
        self._for_target = Prepared(
            database,
            select(_TABLE.c.host, _TABLE.c.header, _TABLE.c.scheme, _TABLE.c.value).where(
                _TABLE.c.tenant_id == bindparam("tenant"),
                or_(_TABLE.c.host == bindparam("host"), _TABLE.c.host == bindparam("authority")),
            ),
        )
        self._fernet: Fernet | None = None
        if secret_key:
            try:
                self._fernet = Fernet(secret_key.encode())
            except ValueError:
                raise CredentialError(
                    "SKILLHOUSE_SECRET_KEY must be 32 bytes in urlsafe base64 (Fernet.generate_key())",
                    code="secret-key-invalid",
                ) from None

    def _cipher(self) -> Fernet:
        if self._fernet is None:
            raise CredentialError(
                "credentials need SKILLHOUSE_SECRET_KEY set (32 bytes, urlsafe base64)", code="secret-key-missing"
            )
        return self._fernet

    def put(self, tenant: str, host: str, scheme: str, secret: str, header: str | None = None) -> Binding:
        """Bind ``secret`` to (tenant, host, header), replacing any earlier one."""
        host = host.strip().lower()
        if not host or not _HOST.match(host):
            raise CredentialError("host must be a host name or host:port", field="host")
        if scheme not in SCHEMES:
            raise CredentialError(f"scheme must be one of {', '.join(SCHEMES)}", field="scheme")
        if not secret or any(ch in secret for ch in "\r\n"):
            raise CredentialError("secret must be a non-empty single line", field="secret")
        if scheme == "basic" and ":" not in secret:
            raise CredentialError("a basic credential is user:password", field="secret")
        name = "Authorization" if scheme in ("bearer", "basic") else (header or "")
        if not _TOKEN.match(name):
            raise CredentialError("header must be a valid HTTP header name", field="header")
        value, _ = header_value(scheme, secret)
        encrypted = self._cipher().encrypt(value.encode()).decode()
        for _attempt in range(3):
            try:
                with self.database.transaction() as session:
                    session.execute(
                        delete(CredentialRow).where(
                            CredentialRow.tenant_id == tenant, CredentialRow.host == host, CredentialRow.header == name.lower()
                        )
                    )
                    session.add(CredentialRow(tenant_id=tenant, host=host, header=name.lower(), scheme=scheme, value=encrypted))
                break
            except IntegrityError:
                continue  # a concurrent writer bound the same header first; replace theirs
        return Binding(host, name.lower(), scheme)

    def list(self, tenant: str) -> list[Binding]:
        with self.database.transaction() as session:
            rows = session.scalars(
                select(CredentialRow).where(CredentialRow.tenant_id == tenant).order_by(CredentialRow.host, CredentialRow.header)
            )
            return [Binding(r.host, r.header, r.scheme) for r in rows]

    def delete(self, tenant: str, host: str, header: str) -> bool:
        with self.database.transaction() as session:
            result = session.execute(
                delete(CredentialRow).where(
                    CredentialRow.tenant_id == tenant,
                    CredentialRow.host == host.strip().lower(),
                    CredentialRow.header == header.lower(),
                )
            )
            return bool(getattr(result, "rowcount", 0))

    def for_target(self, tenant: str, target: Target) -> Sequence[Injection]:
        """The headers to inject for a request to ``target`` (decrypted here and only here)."""
        return read(self.database, lambda transaction: self.for_target_later(transaction, tenant, target)())

    def for_target_later(
        self, transaction: DriverTransaction, tenant: str, target: Target
    ) -> Callable[[], Sequence[Injection]]:
        """:meth:`for_target` with its read sent in the caller's transaction; call the result for the headers."""
        pending = transaction.send(self._for_target, {"tenant": tenant, "host": target.host, "authority": target.authority})
        return lambda: self.injections(target, pending.rows())

    def injections(self, target: Target, found: Sequence[tuple[Any, ...]]) -> Sequence[Injection]:
        """The headers to inject from credential rows read for ``target``: (host, header, scheme, encrypted value)."""
        if not found:
            return ()
        cipher = self._cipher()
        chosen: dict[str, tuple[str, str, str]] = {}
        for host, header, scheme, encrypted in found:
            # a host:port binding is more specific than a host binding for the same header
            if header not in chosen or host == target.authority:
                chosen[header] = (host, scheme, encrypted)
        injections = []
        for header, (host, scheme, encrypted) in chosen.items():
            try:
                value = cipher.decrypt(encrypted.encode()).decode()
            except InvalidToken:
                raise CredentialError(
                    f"the credential for {host} ({header}) cannot be decrypted with this SKILLHOUSE_SECRET_KEY",
                    code="credential-undecryptable",
                ) from None
            injections.append(Injection(header, value, secrets_of(scheme, value)))
        return injections
