"""Settings, built in one place from the environment.

``SKILLHOUSE_DATA_DIR``      where the SQLite database and the built guest component live
``SKILLHOUSE_DATABASE_URL``  SQLAlchemy URL; default SQLite in the data directory
``SKILLHOUSE_GUEST``         ``wasm`` (the default: the sandboxed component) or ``inprocess``: which guest runner turns use
``SKILLHOUSE_GUEST_CACHE``   where the built guest component is cached (default ``<data dir>/guest``)
``SKILLHOUSE_RESOLVE``       ``[tenant/]host:port=address,...``: fixed name resolution; an entry with
                             ``tenant/`` applies to that tenant's requests only (see "Scoped entries")
``SKILLHOUSE_SECRET_KEY``    key that encrypts stored credentials (urlsafe base64, 32 bytes)
``SKILLHOUSE_MODEL``         ``scripted``, ``openai:MODEL`` or ``anthropic:MODEL`` for the agent loop
``SKILLHOUSE_CONSOLE_SECRET`` key that signs web console sessions; default a random key per process
``SKILLHOUSE_PRIVATE_HOSTS`` ``[tenant/]host[:port],...`` the gateway may reach at private addresses; an
                             entry with ``tenant/`` is open to that tenant's requests only
``SKILLHOUSE_KEY_LEASE_SECONDS``   how long a request holding an idempotency key may take (default 45)
``SKILLHOUSE_KEY_WAIT_SECONDS``    how long a duplicate in flight waits before 409 (default 10)
``SKILLHOUSE_KEY_TTL_SECONDS``     how long a finished idempotency key answers duplicates (default 86400)
``SKILLHOUSE_APPROVAL_TTL_SECONDS`` how long an approval stays decidable and usable (default 86400)
``SKILLHOUSE_UPSTREAM_CA``   PEM file of CA certificates upstream TLS is verified against (default: the usual bundle)
``SKILLHOUSE_UPSTREAM_MAX_BYTES``        the largest upstream answer handed on, in bytes (default 8388608)
``SKILLHOUSE_UPSTREAM_DEADLINE_SECONDS`` one upstream call's whole time: connect, send, every read (default 40)
``SKILLHOUSE_TENANT_UPSTREAM_CALLS``     upstream calls one tenant may have in flight per process (default 16)
``SKILLHOUSE_TENANT_SLOT_WAIT_SECONDS``  how long a call waits for a free slot before ``tenant-busy`` (default 2)

Scoped entries. A private host or a name mapping lets requests reach an address the egress rule
otherwise refuses, so it is the deployment's to grant, per tenant where it can be:
``SKILLHOUSE_RESOLVE=acme/db.internal:5000=10.0.0.5`` and ``SKILLHOUSE_PRIVATE_HOSTS=acme/db.internal``
open ``db.internal`` to tenant ``acme`` only; for every other tenant the name does not map and its
private address is refused (``egress-refused``), even if that tenant publishes a skill naming it.
Entries without ``tenant/`` apply to every tenant, as before. A name may not be mapped both for
everyone and for a tenant (which address would win is not something to guess).
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

# one per process, so every Settings built in this process signs and checks console sessions alike
_PROCESS_CONSOLE_SECRET = secrets.token_urlsafe(32)


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "skillhouse"


# a tenant id as registry/tokens.py checks it (settings import nothing of the registry)
_TENANT = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
Names = dict[tuple[str, int], str]
"""Fixed name resolution: ``(host, port)`` to ``address`` or ``address:port``."""


def _scoped(variable: str, item: str, name: str) -> tuple[str | None, str]:
    """Split ``tenant/rest`` into ``(tenant, rest)``; ``(None, name)`` for an entry without a tenant."""
    tenant, slash, rest = name.partition("/")
    if not slash:
        return None, name
    if not _TENANT.match(tenant) or not rest:
        raise ValueError(f"{variable} entry {item!r}: {tenant!r} before '/' must be a tenant id "
                         "(lowercase letters, digits, '-', '_') followed by the entry")
    return tenant, rest


def parse_scoped_resolve(spec: str) -> tuple[Names, dict[str, Names]]:
    """``"hollowbrook.local:8084=127.0.0.1,acme/db.internal:5000=10.0.0.5"`` to the mappings for every
    tenant and those of each tenant: ``({(host, port): address}, {tenant: {(host, port): address}})``."""
    everyone: Names = {}
    tenants: dict[str, Names] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, sep, address = item.partition("=")
        tenant, name = _scoped("SKILLHOUSE_RESOLVE", item, name)
        host, colon, port = name.rpartition(":")
        if not sep or not colon or not port.isdigit() or not host or not address:
            raise ValueError(f"SKILLHOUSE_RESOLVE entry {item!r} must look like [tenant/]host:port=address")
        table = everyone if tenant is None else tenants.setdefault(tenant, {})
        table[(host.lower(), int(port))] = address
    for tenant, table in tenants.items():
        both = sorted(f"{host}:{port}" for host, port in table.keys() & everyone.keys())
        if both:
            raise ValueError(f"SKILLHOUSE_RESOLVE maps {', '.join(both)} both for every tenant and for {tenant!r}; "
                             "keep one of the two entries")
    return everyone, tenants


def parse_resolve(spec: str) -> Names:
    """The mappings for every tenant of ``spec`` (see :func:`parse_scoped_resolve`)."""
    return parse_scoped_resolve(spec)[0]


def parse_private_hosts(spec: str) -> tuple[frozenset[str], dict[str, frozenset[str]]]:
    """``"db.internal,acme/vault.internal:8200"`` to the hosts open to every tenant and those of each."""
    everyone: set[str] = set()
    tenants: dict[str, set[str]] = {}
    for item in filter(None, (part.strip().lower() for part in spec.split(","))):
        tenant, host = _scoped("SKILLHOUSE_PRIVATE_HOSTS", item, item)
        (everyone if tenant is None else tenants.setdefault(tenant, set())).add(host)
    return frozenset(everyone), {tenant: frozenset(hosts) for tenant, hosts in tenants.items()}


def parse_seconds(env: Mapping[str, str], name: str, default: float) -> float:
    """A positive number of seconds from ``env[name]``, or ``default`` when unset."""
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, not {text!r}") from None
    if not 0 < value < float("inf"):
        raise ValueError(f"{name} must be a positive number of seconds, not {text!r}")
    return value


def parse_count(env: Mapping[str, str], name: str, default: int) -> int:
    """A positive whole number from ``env[name]``, or ``default`` when unset."""
    text = env.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{name} must be a positive whole number, not {text!r}")
    return int(text)


@dataclass(frozen=True)
class Settings:
    """Everything configurable, read once."""

    data_dir: Path = field(default_factory=_default_data_dir)
    database_url: str = ""
    guest: str = "wasm"
    guest_cache: Path | None = None
    """Where the built guest is cached; ``None``: ``$SKILLHOUSE_GUEST_CACHE``, else ``<data dir>/guest``."""
    resolve: Names = field(default_factory=dict)
    secret_key: str | None = None
    model: str = "scripted"
    console_secret: str = field(default_factory=lambda: _PROCESS_CONSOLE_SECRET)
    """Signs console session cookies; a per-process random key means sessions end at restart."""
    private_hosts: frozenset[str] = frozenset()
    """Hosts (``host`` or ``host:port``) the gateway may reach although they resolve to private addresses."""
    tenant_resolve: dict[str, Names] = field(default_factory=dict)
    """Fixed name resolution for one tenant's requests only (``tenant/host:port=address``), on top of ``resolve``."""
    tenant_private_hosts: dict[str, frozenset[str]] = field(default_factory=dict)
    """Hosts open to private addresses for one tenant's requests only (``tenant/host``), on top of ``private_hosts``."""
    key_lease_seconds: float = 45.0
    """How long a request holding an idempotency key may take before its outcome counts as unknown."""
    key_wait_seconds: float = 10.0
    """How long a duplicate of a request still in flight waits for its answer before ``409``."""
    key_ttl_seconds: float = 24 * 3600.0
    """How long a finished idempotency key keeps answering duplicates with the stored response."""
    approval_ttl_seconds: float = 24 * 3600.0
    """How long an approval can be decided and, once approved, used."""
    upstream_ca: Path | None = None
    """CA certificates (PEM) upstream TLS is verified against instead of the default bundle."""
    upstream_max_bytes: int = 8 * 1024 * 1024
    """The largest upstream answer handed on; a larger one is withheld and reading stops at this size."""
    upstream_deadline_seconds: float = 40.0
    """One upstream call's whole time (connect, send, every read), however the upstream trickles; keep it
    below ``key_lease_seconds`` so a call ends before a duplicate may judge its key abandoned."""
    tenant_upstream_calls: int = 16
    """Upstream calls one tenant may have in flight at once in one process."""
    tenant_slot_wait_seconds: float = 2.0
    """How long a call waits for one of its tenant's slots before it is refused ``tenant-busy``."""

    def guest_cache_dir(self) -> Path:
        """``guest_cache``, else ``$SKILLHOUSE_GUEST_CACHE`` (settings built in code share the process's cache), else ``<data dir>/guest``."""
        if self.guest_cache is not None:
            return self.guest_cache
        shared = os.environ.get("SKILLHOUSE_GUEST_CACHE")
        return Path(shared) if shared else self.data_dir / "guest"

    def __post_init__(self) -> None:
        if not self.database_url:
            object.__setattr__(self, "database_url", f"sqlite:///{self.data_dir / 'skillhouse.db'}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        data_dir = Path(env["SKILLHOUSE_DATA_DIR"]) if env.get("SKILLHOUSE_DATA_DIR") else _default_data_dir()
        resolve, tenant_resolve = parse_scoped_resolve(env.get("SKILLHOUSE_RESOLVE", ""))
        private_hosts, tenant_private_hosts = parse_private_hosts(env.get("SKILLHOUSE_PRIVATE_HOSTS", ""))
        return cls(
            data_dir=data_dir,
            database_url=env.get("SKILLHOUSE_DATABASE_URL", ""),
            guest=env.get("SKILLHOUSE_GUEST", "wasm"),
            guest_cache=Path(env["SKILLHOUSE_GUEST_CACHE"]) if env.get("SKILLHOUSE_GUEST_CACHE") else data_dir / "guest",
            resolve=resolve,
            tenant_resolve=tenant_resolve,
            secret_key=env.get("SKILLHOUSE_SECRET_KEY") or None,
            model=env.get("SKILLHOUSE_MODEL", "scripted"),
            **({"console_secret": env["SKILLHOUSE_CONSOLE_SECRET"]} if env.get("SKILLHOUSE_CONSOLE_SECRET") else {}),
            private_hosts=private_hosts,
            tenant_private_hosts=tenant_private_hosts,
            key_lease_seconds=parse_seconds(env, "SKILLHOUSE_KEY_LEASE_SECONDS", 45.0),
            key_wait_seconds=parse_seconds(env, "SKILLHOUSE_KEY_WAIT_SECONDS", 10.0),
            key_ttl_seconds=parse_seconds(env, "SKILLHOUSE_KEY_TTL_SECONDS", 24 * 3600.0),
            approval_ttl_seconds=parse_seconds(env, "SKILLHOUSE_APPROVAL_TTL_SECONDS", 24 * 3600.0),
            upstream_ca=Path(env["SKILLHOUSE_UPSTREAM_CA"]) if env.get("SKILLHOUSE_UPSTREAM_CA") else None,
            upstream_max_bytes=parse_count(env, "SKILLHOUSE_UPSTREAM_MAX_BYTES", 8 * 1024 * 1024),
            upstream_deadline_seconds=parse_seconds(env, "SKILLHOUSE_UPSTREAM_DEADLINE_SECONDS", 40.0),
            tenant_upstream_calls=parse_count(env, "SKILLHOUSE_TENANT_UPSTREAM_CALLS", 16),
            tenant_slot_wait_seconds=parse_seconds(env, "SKILLHOUSE_TENANT_SLOT_WAIT_SECONDS", 2.0),
        )
