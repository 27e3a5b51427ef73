"""Settings, built in one place from the environment.

``SKILLHOUSE_DATA_DIR``      where the SQLite database and the built guest component live
``SKILLHOUSE_DATABASE_URL``  SQLAlchemy URL; default SQLite in the data directory
``SKILLHOUSE_GUEST``         ``wasm`` or ``inprocess``: which guest runner turns use
``SKILLHOUSE_RESOLVE``       ``host:port=address,...``: fixed name resolution (demo and tests)
``SKILLHOUSE_SECRET_KEY``    key that encrypts stored credentials (urlsafe base64, 32 bytes)
``SKILLHOUSE_MODEL``         ``scripted``, ``openai:MODEL`` or ``anthropic:MODEL`` for the agent loop
``SKILLHOUSE_CONSOLE_SECRET`` key that signs web console sessions; default a random key per process
``SKILLHOUSE_PRIVATE_HOSTS`` ``host[:port],...`` the gateway may reach at private addresses
``SKILLHOUSE_KEY_LEASE_SECONDS``   how long a request holding an idempotency key may take (default 45)
``SKILLHOUSE_KEY_WAIT_SECONDS``    how long a duplicate in flight waits before 409 (default 10)
``SKILLHOUSE_KEY_TTL_SECONDS``     how long a finished idempotency key answers duplicates (default 86400)
``SKILLHOUSE_APPROVAL_TTL_SECONDS`` how long an approval stays decidable and usable (default 86400)
``SKILLHOUSE_UPSTREAM_CA``   PEM file of CA certificates upstream TLS is verified against (default: the usual bundle)
``SKILLHOUSE_UPSTREAM_MAX_BYTES``        the largest upstream answer handed on, in bytes (default 8388608)
``SKILLHOUSE_UPSTREAM_DEADLINE_SECONDS`` one upstream call's whole time: connect, send, every read (default 40)
``SKILLHOUSE_TENANT_UPSTREAM_CALLS``     upstream calls one tenant may have in flight per process (default 16)
``SKILLHOUSE_TENANT_SLOT_WAIT_SECONDS``  how long a call waits for a free slot before ``tenant-busy`` (default 2)
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

# one per process, so every Settings built in this process signs and checks console sessions alike
_PROCESS_CONSOLE_SECRET = secrets.token_urlsafe(32)


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "skillhouse"


def parse_resolve(spec: str) -> dict[tuple[str, int], str]:
    """``"hollowbrook.local:8084=127.0.0.1,api.test:443=10.0.0.2"`` to ``{(host, port): address}``."""
    table: dict[tuple[str, int], str] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, sep, address = item.partition("=")
        host, colon, port = name.rpartition(":")
        if not sep or not colon or not port.isdigit() or not host or not address:
            raise ValueError(f"SKILLHOUSE_RESOLVE entry {item!r} must look like host:port=address")
        table[(host.lower(), int(port))] = address
    return table


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
    resolve: dict[tuple[str, int], str] = field(default_factory=dict)
    secret_key: str | None = None
    model: str = "scripted"
    console_secret: str = field(default_factory=lambda: _PROCESS_CONSOLE_SECRET)
    """Signs console session cookies; a per-process random key means sessions end at restart."""
    private_hosts: frozenset[str] = frozenset()
    """Hosts (``host`` or ``host:port``) the gateway may reach although they resolve to private addresses."""
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

    def __post_init__(self) -> None:
        if not self.database_url:
            object.__setattr__(self, "database_url", f"sqlite:///{self.data_dir / 'skillhouse.db'}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        data_dir = Path(env["SKILLHOUSE_DATA_DIR"]) if env.get("SKILLHOUSE_DATA_DIR") else _default_data_dir()
        return cls(
            data_dir=data_dir,
            database_url=env.get("SKILLHOUSE_DATABASE_URL", ""),
            guest=env.get("SKILLHOUSE_GUEST", "wasm"),
            resolve=parse_resolve(env.get("SKILLHOUSE_RESOLVE", "")),
            secret_key=env.get("SKILLHOUSE_SECRET_KEY") or None,
            model=env.get("SKILLHOUSE_MODEL", "scripted"),
            **({"console_secret": env["SKILLHOUSE_CONSOLE_SECRET"]} if env.get("SKILLHOUSE_CONSOLE_SECRET") else {}),
            private_hosts=frozenset(h.strip().lower() for h in env.get("SKILLHOUSE_PRIVATE_HOSTS", "").split(",") if h.strip()),
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
