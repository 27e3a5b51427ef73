"""Settings: every environment variable skillhouse reads, declared here and nowhere else.

:meth:`Settings.from_env` reads the environment once; every other module takes its values from a
:class:`Settings` it is handed. Each field names the variable that sets it in its metadata (a
:class:`Variable`), and ``docs/configuration.md`` is generated from the fields: variable, type, default
and the field's docstring (``docs/hooks/configuration.py``). The reading itself, each variable parsed and
checked into its field's value, is :mod:`skillhouse.settings_env`'s, so that the commands that need one
value (``tools`` and ``import-openapi``: the release cache) read it without the ~30 ms of start-up this
dataclass costs. ``tests/test_settings.py`` holds the variables read and the fields' metadata to each
other, the light reading to ``from_env``, and fails on an environment read anywhere else in ``src``.

A ``Settings`` built in code (tests, benchmarks) holds the defaults below and reads nothing from the
environment: what it needs, it is given.

Scoped entries. A private host or a name mapping lets requests reach an address the egress rule
otherwise refuses, so it is the deployment's to grant, per tenant where it can be:
``SKILLHOUSE_RESOLVE=acme/db.internal:5000=10.0.0.5`` and ``SKILLHOUSE_PRIVATE_HOSTS=acme/db.internal``
open ``db.internal`` to tenant ``acme`` only; for every other tenant the name does not map and its
private address is refused (``egress-refused``), even if that tenant publishes a skill naming it.
Entries without ``tenant/`` apply to every tenant. A name may not be mapped both for everyone and for
a tenant (which address would win is not something to guess).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

# Names: field annotations name it, and the configuration page resolves them (typing.get_type_hints) here
from skillhouse.settings_env import (
    PROCESS_CONSOLE_SECRET,
    Names,
    default_data_dir,
    default_release_cache,
    read_environment,
)


def sqlite_url(data_dir: Path) -> str:
    """The database URL when none is set: SQLite in ``data_dir``."""
    return f"sqlite:///{data_dir / 'skillhouse.db'}"


Section = Literal["serve", "model", "cli"]
"""The table of ``docs/configuration.md`` a variable is listed in: ``serve``, the model, the command line."""

VARIABLE = "skillhouse.variable"
"""The key of a :class:`Settings` field's metadata that holds its :class:`Variable`."""


@dataclass(frozen=True)
class Variable:
    """The environment variable that sets a :class:`Settings` field, as the configuration page shows it.

    The page (``docs/hooks/configuration.py``) takes the rest from the field itself: its type, its
    default and its docstring."""

    name: str
    section: Section
    default: str = ""
    """The default in words, for a field whose default is computed where it runs (a home directory, a
    random key); empty: the field's own default is shown."""
    also: tuple[str, ...] = ()
    """Other variables that default is computed from (``XDG_DATA_HOME``)."""


def _env(
    name: str, section: Section = "serve", default: str = "", also: tuple[str, ...] = ()
) -> dict[str, Variable]:
    """A field's metadata: the variable ``from_env`` sets it from."""
    return {VARIABLE: Variable(name, section, default, also)}


@dataclass(frozen=True)
class Settings:
    """Everything configurable, read once; each field names its variable in its metadata
    (:data:`VARIABLE`), and ``docs/configuration.md`` lists them from there."""

    data_dir: Path = field(
        default_factory=lambda: Path(default_data_dir({})),
        metadata=_env(
            "SKILLHOUSE_DATA_DIR",
            default="`$XDG_DATA_HOME/skillhouse` (`XDG_DATA_HOME` unset: `~/.local/share`)",
            also=("XDG_DATA_HOME",),
        ),
    )
    """Where the SQLite database and (unless ``guest_cache``) the built guest live."""
    database_url: str = field(default="", metadata=_env("SKILLHOUSE_DATABASE_URL"))
    """SQLAlchemy URL of the store: ``sqlite:///PATH``, or ``postgresql://`` / ``postgres://USER@HOST/DB``;
    empty: SQLite in ``data_dir`` (``<data_dir>/skillhouse.db``)."""
    guest: str = field(default="wasm", metadata=_env("SKILLHOUSE_GUEST"))
    """The guest runner turns use: ``wasm`` (the sandboxed component) or ``inprocess`` (no sandbox, only
    when asked for)."""
    guest_cache: Path | None = field(default=None, metadata=_env("SKILLHOUSE_GUEST_CACHE"))
    """Where the built guest component and its compiled code are cached; ``None``: ``<data_dir>/guest``."""
    resolve: Names = field(default_factory=dict, metadata=_env("SKILLHOUSE_RESOLVE"))
    """Fixed name resolution for every tenant's requests: the entries ``host:port=address`` of the
    comma-separated list."""
    secret_key: str | None = field(default=None, repr=False, metadata=_env("SKILLHOUSE_SECRET_KEY"))
    """Key that encrypts stored credentials (a Fernet key: urlsafe base64 of 32 bytes); ``None``: credentials
    are disabled, and storing or injecting one answers ``503 secret-key-missing``."""
    console_secret: str = field(
        default_factory=lambda: PROCESS_CONSOLE_SECRET,
        repr=False,
        metadata=_env("SKILLHOUSE_CONSOLE_SECRET", default="a random key per process"),
    )
    """Signs console session cookies; a per-process random key means sessions end at restart."""
    private_hosts: frozenset[str] = field(default=frozenset(), metadata=_env("SKILLHOUSE_PRIVATE_HOSTS"))
    """Hosts (``host`` or ``host:port``) the gateway may reach although they resolve to private addresses:
    the entries without ``tenant/`` of the comma-separated list."""
    tenant_resolve: dict[str, Names] = field(default_factory=dict, metadata=_env("SKILLHOUSE_RESOLVE"))
    """Fixed name resolution for one tenant's requests only: the entries ``tenant/host:port=address``, on
    top of ``resolve``."""
    tenant_private_hosts: dict[str, frozenset[str]] = field(
        default_factory=dict, metadata=_env("SKILLHOUSE_PRIVATE_HOSTS")
    )
    """Hosts open to private addresses for one tenant's requests only: the entries ``tenant/host[:port]``,
    on top of ``private_hosts``."""
    key_lease_seconds: float = field(default=45.0, metadata=_env("SKILLHOUSE_KEY_LEASE_SECONDS"))
    """How long a request holding an idempotency key may take before its outcome counts as unknown."""
    key_wait_seconds: float = field(default=10.0, metadata=_env("SKILLHOUSE_KEY_WAIT_SECONDS"))
    """How long a duplicate of a request still in flight waits for its answer before ``409``."""
    key_ttl_seconds: float = field(default=24 * 3600.0, metadata=_env("SKILLHOUSE_KEY_TTL_SECONDS"))
    """How long a finished idempotency key keeps answering duplicates with the stored response."""
    approval_ttl_seconds: float = field(default=24 * 3600.0, metadata=_env("SKILLHOUSE_APPROVAL_TTL_SECONDS"))
    """How long an approval can be decided and, once approved, used."""
    upstream_ca: Path | None = field(default=None, metadata=_env("SKILLHOUSE_UPSTREAM_CA"))
    """CA certificates (a PEM file) upstream TLS is verified against instead of the default bundle."""
    upstream_max_bytes: int = field(default=8 * 1024 * 1024, metadata=_env("SKILLHOUSE_UPSTREAM_MAX_BYTES"))
    """The largest upstream answer handed on; a larger one is withheld and reading stops at this size."""
    upstream_deadline_seconds: float = field(
        default=40.0, metadata=_env("SKILLHOUSE_UPSTREAM_DEADLINE_SECONDS")
    )
    """One upstream call's whole time (connect, send, every read), however the upstream trickles; keep it
    below ``key_lease_seconds`` so a call ends before a duplicate may judge its key abandoned."""
    tenant_upstream_calls: int = field(default=16, metadata=_env("SKILLHOUSE_TENANT_UPSTREAM_CALLS"))
    """Upstream calls one tenant may have in flight at once in one process."""
    tenant_slot_wait_seconds: float = field(default=2.0, metadata=_env("SKILLHOUSE_TENANT_SLOT_WAIT_SECONDS"))
    """How long a call waits for one of its tenant's slots before it is refused ``tenant-busy``."""
    model: str = field(default="", metadata=_env("SKILLHOUSE_MODEL", "model"))
    """The model ``POST /v1/turns/{id}/run`` uses: ``openai:MODEL``, ``anthropic:MODEL`` or
    ``scripted[:PLAN]`` (a scripted plan on the Hollowbrook skill, for the demo and tests: ``demo``, the
    default, ``load-operations``, ``fetch-skill-file``, ``resent-booking``); empty: none, and the route
    answers ``503 model-not-configured``."""
    model_timeout_seconds: float = field(default=120.0, metadata=_env("SKILLHOUSE_MODEL_TIMEOUT", "model"))
    """The longest one provider call may take, in seconds."""
    openai_base_url: str = field(default="", metadata=_env("OPENAI_BASE_URL", "model"))
    """Where the Chat Completions API is (a local server such as Ollama or vLLM, a proxy); empty:
    OpenAI's, ``https://api.openai.com/v1``."""
    openai_api_key: str | None = field(default=None, repr=False, metadata=_env("OPENAI_API_KEY", "model"))
    """The key sent with ``openai:MODEL`` to ``openai_base_url``; local servers need none."""
    anthropic_base_url: str = field(default="", metadata=_env("ANTHROPIC_BASE_URL", "model"))
    """Where the Messages API is (a proxy); empty: Anthropic's, ``https://api.anthropic.com``."""
    anthropic_api_key: str | None = field(
        default=None, repr=False, metadata=_env("ANTHROPIC_API_KEY", "model")
    )
    """The key sent with ``anthropic:MODEL``; needed unless ``anthropic_base_url`` names a proxy."""
    deferred: bool = field(default=False, metadata=_env("SKILLHOUSE_DEFERRED", "model"))
    """With ``anthropic:MODEL``, offer the operations no call has loaded as deferred tools (the provider's
    tool search)."""
    token: str | None = field(default=None, repr=False, metadata=_env("SKILLHOUSE_TOKEN", "cli"))
    """The API token of the CLI's commands that act for a tenant: ``publish`` (an admin one), and the tenant
    of ``mcp``, ``approvals``, ``credentials`` and ``keys`` when ``--tenant`` is not given."""
    release_cache: Path | None = field(
        default_factory=lambda: Path(default_release_cache({})),
        metadata=_env(
            "SKILLHOUSE_RELEASE_CACHE",
            "cli",
            default="`$XDG_CACHE_HOME/skillhouse/releases` (`XDG_CACHE_HOME` unset: `~/.cache`)",
            also=("XDG_CACHE_HOME",),
        ),
    )
    """Where ``import-openapi`` and ``tools`` keep compiled releases and their tool listings, so ``tools`` on an
    imported package compiles and encodes nothing; ``None`` (the variable set to ``off``): no cache."""
    telemetry: str = field(default="off", metadata=_env("SKILLHOUSE_TELEMETRY"))
    """``otlp``: ``serve`` and ``mcp`` record OpenTelemetry spans and metrics and exports them over OTLP/HTTP as the
    standard ``OTEL_*`` variables say (the SDK reads those itself); ``off``: no spans, metrics at ``/metrics`` only."""
    trace_upstreams: bool = field(default=False, metadata=_env("SKILLHOUSE_TRACE_UPSTREAMS"))
    """With tracing on, send the W3C ``traceparent`` header to upstreams, so their spans join the call's trace."""
    log_format: str = field(default="text", metadata=_env("SKILLHOUSE_LOG_FORMAT"))
    """serve's log lines: ``text`` for people, ``json`` for collectors (one object per line: time, level,
    logger, message, request id, trace and span ids)."""
    shutdown_seconds: float = field(default=30.0, metadata=_env("SKILLHOUSE_SHUTDOWN_SECONDS"))
    """On SIGTERM, how long serve lets calls in flight finish after it stops accepting new ones."""

    def guest_cache_dir(self) -> Path:
        """``guest_cache``, else ``<data dir>/guest``."""
        return self.data_dir / "guest" if self.guest_cache is None else self.guest_cache

    def __post_init__(self) -> None:
        if not self.database_url:
            object.__setattr__(self, "database_url", sqlite_url(self.data_dir))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The settings ``env`` (default: this process's environment) names; ``ValueError`` naming the
        variable when one is malformed. The reading is :func:`skillhouse.settings_env.read_environment`'s."""
        return cls(**read_environment(env))
