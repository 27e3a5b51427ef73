"""The egress gateway: every request a turn makes passes through :class:`Gateway.fetch`.

The names below load on first use (:pep:`562`), so importing a light module of the package
(``skillhouse.gateway.exchange``, the host's typed requests and answers, or ``skillhouse.gateway.errors``)
does not load the store and SQLAlchemy: a guest's host starts in a new process without them
(start-up time; ``make bench``'s warm wasm start).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillhouse.gateway.approvals import Approval, ApprovalStore
    from skillhouse.gateway.audit import AuditLog
    from skillhouse.gateway.credentials import Binding, CredentialStore
    from skillhouse.gateway.deployment import gateway_config, make_gateway
    from skillhouse.gateway.egress import EgressDecision, EgressPolicy, Resolver, decide_egress, parse_target
    from skillhouse.gateway.errors import GatewayError
    from skillhouse.gateway.idempotency import IdempotencyStore, KeyPolicy
    from skillhouse.gateway.matching import BoundReleases, Gate
    from skillhouse.gateway.pipeline import Gateway, GatewayConfig, TurnContext
    from skillhouse.gateway.upstream import PinnedTransport, UpstreamClient

_WHERE = {
    "Approval": "approvals", "ApprovalStore": "approvals", "AuditLog": "audit", "Binding": "credentials",
    "CredentialStore": "credentials", "gateway_config": "deployment", "make_gateway": "deployment",
    "EgressDecision": "egress", "EgressPolicy": "egress", "Resolver": "egress", "decide_egress": "egress",
    "parse_target": "egress", "GatewayError": "errors", "IdempotencyStore": "idempotency",
    "KeyPolicy": "idempotency", "BoundReleases": "matching", "Gate": "matching", "Gateway": "pipeline",
    "GatewayConfig": "pipeline", "TurnContext": "pipeline", "PinnedTransport": "upstream",
    "UpstreamClient": "upstream",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "Approval",
    "ApprovalStore",
    "AuditLog",
    "Binding",
    "BoundReleases",
    "CredentialStore",
    "EgressDecision",
    "EgressPolicy",
    "Gate",
    "Gateway",
    "GatewayConfig",
    "GatewayError",
    "IdempotencyStore",
    "KeyPolicy",
    "PinnedTransport",
    "Resolver",
    "TurnContext",
    "UpstreamClient",
    "decide_egress",
    "gateway_config",
    "make_gateway",
    "parse_target",
]
