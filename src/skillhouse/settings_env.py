"""The environment, read: each variable a :class:`~skillhouse.settings.Settings` field names, parsed and
checked into that field's value. The only module in ``src`` that reads the environment.

:func:`read_environment` is what :meth:`Settings.from_env <skillhouse.settings.Settings.from_env>` builds
its ``Settings`` from, and :func:`release_cache` is the one value ``skillhouse import-openapi`` and
``skillhouse tools`` need (:func:`guest_cache_dir` the one a wasm guest's start needs), taken from the same
reading: every variable is read and checked either way, so a malformed one is refused alike, with the same
message, and the two cannot give different values.

Why a module apart from :mod:`skillhouse.settings`: the ``Settings`` dataclass (``dataclasses`` imports
``inspect``, ``typing``) is ~30 ms of a process's start-up, as much again as the bare interpreter, and
``skillhouse tools`` on a kept listing has no other work of that size. This module imports ``os`` only
(``binascii`` when the process's console secret is first made), and :func:`release_cache` none of
``pathlib``, ``re`` or ``base64`` (together a third of that process's start-up): it reads paths as text,
which :func:`read_environment` makes ``Path`` values.
The variables themselves are declared once, in the fields' metadata (``tests/test_settings.py`` holds
what this module reads to what those fields name).
"""

from __future__ import annotations

import os

# Not `from typing import TYPE_CHECKING`: typing is start-up time this module exists to save.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    PROCESS_CONSOLE_SECRET: str
    """One per process, so every Settings built in this process signs and checks console sessions alike."""


def __getattr__(name: str) -> str:
    # PROCESS_CONSOLE_SECRET, made on first use (PEP 562): see _process_console_secret
    if name != "PROCESS_CONSOLE_SECRET":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _process_console_secret()


def _process_console_secret() -> str:
    """:data:`PROCESS_CONSOLE_SECRET`, made once: binascii is a shared library to load, start-up time that
    ``import-openapi`` and ``tools``, which read the release cache only, never need."""
    secret: str | None = globals().get("PROCESS_CONSOLE_SECRET")
    if secret is None:
        import binascii

        # what secrets.token_urlsafe(32) returns (base64.urlsafe_b64encode, spelled out), without importing
        # secrets or base64: start-up time every command that builds its Settings pays
        secret = (
            binascii.b2a_base64(os.urandom(32), newline=False).translate(bytes.maketrans(b"+/", b"-_")).rstrip(b"=")
        ).decode("ascii")
        # setdefault: two threads making it at once both answer with the one stored first
        secret = globals().setdefault("PROCESS_CONSOLE_SECRET", secret)
    return secret


_PATHS = ("data_dir", "guest_cache", "upstream_ca", "release_cache")
"""The fields whose values are paths: read as text, made ``Path`` values by :func:`read_environment`."""

Names = dict[tuple[str, int], str]
"""Fixed name resolution: ``(host, port)`` to ``address`` or ``address:port``."""


def _home() -> str:
    # Path.home(), as text
    home = os.path.expanduser("~")
    if home[:1] == "~":
        raise RuntimeError("Could not determine home directory.")
    return home


def default_data_dir(env: Mapping[str, str]) -> str:
    """``$XDG_DATA_HOME/skillhouse`` (``~/.local/share`` when unset)."""
    return os.path.join(env.get("XDG_DATA_HOME") or os.path.join(_home(), ".local", "share"), "skillhouse")


def default_release_cache(env: Mapping[str, str]) -> str:
    """``$XDG_CACHE_HOME/skillhouse/releases`` (``~/.cache`` when unset)."""
    return os.path.join(
        env.get("XDG_CACHE_HOME") or os.path.join(_home(), ".cache"), "skillhouse", "releases"
    )


# a tenant id as registry/tokens.py checks it (settings import nothing of the registry)
_TENANT = r"^[a-z0-9][a-z0-9_-]{0,63}$"


def _is_tenant(text: str) -> bool:
    import re  # here: start-up time; only a tenant's entry needs it (re caches the compiled pattern)

    return re.match(_TENANT, text) is not None


def _scoped(variable: str, item: str, name: str) -> tuple[str | None, str]:
    """Split ``tenant/rest`` into ``(tenant, rest)``; ``(None, name)`` for an entry without a tenant."""
    tenant, slash, rest = name.partition("/")
    if not slash:
        return None, name
    if not _is_tenant(tenant) or not rest:
        raise ValueError(
            f"{variable} entry {item!r}: {tenant!r} before '/' must be a tenant id "
            "(lowercase letters, digits, '-', '_') followed by the entry"
        )
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
            raise ValueError(
                f"SKILLHOUSE_RESOLVE maps {', '.join(both)} both for every tenant and for {tenant!r}; "
                "keep one of the two entries"
            )
    return everyone, tenants


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


def parse_flag(env: Mapping[str, str], name: str) -> bool:
    """``1``/``true``/``yes`` or ``0``/``false``/``no`` (any case) from ``env[name]``; unset is false."""
    text = env.get(name, "").strip().lower()
    if text in ("1", "true", "yes"):
        return True
    if text in ("", "0", "false", "no"):
        return False
    raise ValueError(f"{name} must be 1, true or yes (or 0, false, no), not {text!r}")


def _path(env: Mapping[str, str], name: str) -> str | None:
    return env[name] if env.get(name) else None


def read_environment(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Every ``Settings`` field's value as ``env`` (default: this process's environment) sets it, by field
    name; ``ValueError`` naming the variable when one is malformed."""
    from pathlib import Path  # here: start-up time (see the module's docstring)

    values = _read(env)
    for name in _PATHS:
        values[name] = None if values[name] is None else Path(values[name])
    # not in _read: the process's own secret is made on first use, and release_cache() needs none
    values["console_secret"] = (
        os.environ if env is None else env
    ).get("SKILLHOUSE_CONSOLE_SECRET") or _process_console_secret()
    return values


def release_cache(env: Mapping[str, str] | None = None) -> str | None:
    """``Settings.from_env(env).release_cache`` as text, without building the ``Settings``: the same reading,
    every variable checked (``ValueError`` naming a malformed one), for the commands that need only this."""
    cache: str | None = _read(env)["release_cache"]
    return cache


def guest_cache_dir(env: Mapping[str, str] | None = None) -> str:
    """``Settings.from_env(env).guest_cache_dir()`` as text, without building the ``Settings`` (as
    :func:`release_cache`): a new process's warm wasm start reads only this, and the dataclass was a
    twentieth of that start."""
    values = _read(env)
    cache: str | None = values["guest_cache"]
    return os.path.join(values["data_dir"], "guest") if cache is None else cache


def _read(env: Mapping[str, str] | None) -> dict[str, Any]:
    """What :func:`read_environment` gives, paths as text."""
    env = os.environ if env is None else env
    resolve, tenant_resolve = parse_scoped_resolve(env.get("SKILLHOUSE_RESOLVE", ""))
    private_hosts, tenant_private_hosts = parse_private_hosts(env.get("SKILLHOUSE_PRIVATE_HOSTS", ""))
    release_cache = env.get("SKILLHOUSE_RELEASE_CACHE", "")
    telemetry = env.get("SKILLHOUSE_TELEMETRY", "").strip().lower() or "off"
    if telemetry not in ("off", "otlp"):
        raise ValueError(f"SKILLHOUSE_TELEMETRY must be otlp or off, not {telemetry!r}")
    log_format = env.get("SKILLHOUSE_LOG_FORMAT", "").strip().lower() or "text"
    if log_format not in ("text", "json"):
        raise ValueError(f"SKILLHOUSE_LOG_FORMAT must be text or json, not {log_format!r}")
    return {
        "data_dir": _path(env, "SKILLHOUSE_DATA_DIR") or default_data_dir(env),
        "database_url": env.get("SKILLHOUSE_DATABASE_URL", ""),
        "guest": env.get("SKILLHOUSE_GUEST", "wasm"),
        "guest_cache": _path(env, "SKILLHOUSE_GUEST_CACHE"),
        "resolve": resolve,
        "tenant_resolve": tenant_resolve,
        "secret_key": env.get("SKILLHOUSE_SECRET_KEY") or None,
        "private_hosts": private_hosts,
        "tenant_private_hosts": tenant_private_hosts,
        "key_lease_seconds": parse_seconds(env, "SKILLHOUSE_KEY_LEASE_SECONDS", 45.0),
        "key_wait_seconds": parse_seconds(env, "SKILLHOUSE_KEY_WAIT_SECONDS", 10.0),
        "key_ttl_seconds": parse_seconds(env, "SKILLHOUSE_KEY_TTL_SECONDS", 24 * 3600.0),
        "approval_ttl_seconds": parse_seconds(env, "SKILLHOUSE_APPROVAL_TTL_SECONDS", 24 * 3600.0),
        "upstream_ca": _path(env, "SKILLHOUSE_UPSTREAM_CA"),
        "upstream_max_bytes": parse_count(env, "SKILLHOUSE_UPSTREAM_MAX_BYTES", 8 * 1024 * 1024),
        "upstream_deadline_seconds": parse_seconds(env, "SKILLHOUSE_UPSTREAM_DEADLINE_SECONDS", 40.0),
        "tenant_upstream_calls": parse_count(env, "SKILLHOUSE_TENANT_UPSTREAM_CALLS", 16),
        "tenant_slot_wait_seconds": parse_seconds(env, "SKILLHOUSE_TENANT_SLOT_WAIT_SECONDS", 2.0),
        "model": env.get("SKILLHOUSE_MODEL", "").strip(),
        "model_timeout_seconds": parse_seconds(env, "SKILLHOUSE_MODEL_TIMEOUT", 120.0),
        "openai_base_url": env.get("OPENAI_BASE_URL", ""),
        "openai_api_key": env.get("OPENAI_API_KEY") or None,
        "anthropic_base_url": env.get("ANTHROPIC_BASE_URL", ""),
        "anthropic_api_key": env.get("ANTHROPIC_API_KEY") or None,
        "deferred": parse_flag(env, "SKILLHOUSE_DEFERRED"),
        "token": env.get("SKILLHOUSE_TOKEN") or None,
        "release_cache": (None if release_cache == "off"
                          else release_cache if release_cache else default_release_cache(env)),
        "telemetry": telemetry,
        "trace_upstreams": parse_flag(env, "SKILLHOUSE_TRACE_UPSTREAMS"),
        "log_format": log_format,
        "shutdown_seconds": parse_seconds(env, "SKILLHOUSE_SHUTDOWN_SECONDS", 30.0),
    }  # fmt: skip
