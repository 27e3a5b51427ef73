"""The gateway a deployment runs: :func:`make_gateway` maps :class:`~skillhouse.settings.Settings` to it.

One place decides how the environment shapes the gateway (fixed resolution and hosts open to private
addresses, each for every tenant or for one tenant, the credential key, idempotency lease/wait/expiry,
approval expiry, the CA upstream TLS is verified against, the upstream answer cap and call deadline,
and the per-tenant call limit), so the API, the MCP command and the CLI build the same gateway from the same
settings.
"""

from __future__ import annotations

import ssl

from skillhouse.gateway.errors import GatewayUnavailable
from skillhouse.gateway.idempotency import KeyPolicy
from skillhouse.gateway.pipeline import Gateway, GatewayConfig
from skillhouse.gateway.upstream import PinnedTransport, TransportFactory, UpstreamClient
from skillhouse.settings import Settings
from skillhouse.store.database import Database


def gateway_config(settings: Settings) -> GatewayConfig:
    """The gateway's configuration for ``settings``."""
    keys = KeyPolicy(
        lease_seconds=settings.key_lease_seconds,
        wait_seconds=settings.key_wait_seconds,
        ttl_seconds=settings.key_ttl_seconds,
    )
    return GatewayConfig(
        resolve=dict(settings.resolve),
        private_hosts=settings.private_hosts,
        tenant_resolve={tenant: dict(names) for tenant, names in settings.tenant_resolve.items()},
        tenant_private_hosts=dict(settings.tenant_private_hosts),
        keys=keys,
        approval_ttl_seconds=settings.approval_ttl_seconds,
        tenant_calls=settings.tenant_upstream_calls,
        tenant_wait_seconds=settings.tenant_slot_wait_seconds,
    )


def upstream_transport(settings: Settings) -> TransportFactory | None:
    """The transport for every connection the gateway makes (upstream calls and OAuth 2.0 token, refresh and
    revocation requests alike): pinned to the checked address, verifying TLS against ``upstream_ca`` when set
    (``None``: the default, verifying against the system's CAs)."""
    if settings.upstream_ca is None:
        return None
    try:
        context = ssl.create_default_context(cafile=str(settings.upstream_ca))
    except (OSError, ssl.SSLError) as exc:
        raise GatewayUnavailable(f"SKILLHOUSE_UPSTREAM_CA {settings.upstream_ca} is not a readable PEM file of CA certificates "
                           f"({exc})", code="upstream-ca-invalid") from None
    return lambda decision: PinnedTransport(decision.address, decision.port, ssl_context=context)


def make_gateway(settings: Settings, database: Database) -> Gateway:
    """A gateway over ``database`` configured by ``settings`` (the caller closes it). A token endpoint is
    reached as an upstream is: a private CA that verifies the APIs verifies their authorization servers too."""
    transport = upstream_transport(settings)
    upstream = UpstreamClient(transport, max_response_bytes=settings.upstream_max_bytes,
                              deadline_seconds=settings.upstream_deadline_seconds)
    return Gateway(database, gateway_config(settings), secret_key=settings.secret_key, upstream=upstream,
                   token_transport=transport)
