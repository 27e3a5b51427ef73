"""The egress gateway: every request a turn makes passes through :class:`Gateway.fetch`."""

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
