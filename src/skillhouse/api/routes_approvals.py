"""``/v1/approvals``: the held requests of the calling tenant, and a person's decision on each.

An approval shows the canonical request it holds (method, URL, the guest's headers, body; never a
credential, which the gateway injects only after a decision lets the request leave), its commitment
(SHA-256 of that request's RFC 8785 form), its state and its expiry. Deciding is one conditional
update in the gateway's :class:`~skillhouse.gateway.ApprovalStore`, so a decision counts once: a
second decision, or one after expiry, answers 409. Another tenant's approval answers 404. Any token
may read approvals; deciding needs an ``approve`` (or ``admin``) token, recorded as the decider by id.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from skillhouse.api.deps import ApproveDep, RunDep
from skillhouse.api.gateway_deps import GatewayDep, gateway_responses
from skillhouse.gateway import Approval
from skillhouse.registry.tokens import Tenant
from skillhouse.wire.approvals import ApprovalList, ApprovalOut, DenyIn, State

router = APIRouter(prefix="/v1/approvals", tags=["approvals"])

ApprovalId = Annotated[str, Path(pattern=r"^apr_[A-Za-z0-9_-]{1,40}$", description="The approval's id (`apr_...`).")]


def _out(approval: Approval) -> ApprovalOut:
    return ApprovalOut.model_validate(approval.document())


@router.get("", responses=gateway_responses())
def list_approvals(
    tenant: RunDep,
    gateway: GatewayDep,
    state: Annotated[State | None, Query(description="Only approvals in this state.")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> ApprovalList:
    """The calling tenant's approvals, newest first."""
    return ApprovalList(data=[_out(a) for a in gateway.approvals.list(tenant.id, state, limit)])


@router.get("/{approval_id}", responses=gateway_responses(404))
def get_approval(approval_id: ApprovalId, tenant: RunDep, gateway: GatewayDep) -> ApprovalOut:
    """One approval: the exact request it holds, its commitment, state and expiry."""
    return _out(gateway.approvals.get(tenant.id, approval_id))


def _decide(gateway: GatewayDep, tenant: Tenant, approval_id: str, approve: bool, note: str | None = None) -> ApprovalOut:
    return _out(gateway.approvals.decide(tenant.id, approval_id, approve, by=f"api, token #{tenant.token_id}", note=note))


@router.post("/{approval_id}/approve", responses=gateway_responses(404, 409))
def approve(approval_id: ApprovalId, tenant: ApproveDep, gateway: GatewayDep) -> ApprovalOut:
    """Approve a pending request: the identical request then runs once (409 unless pending)."""
    return _decide(gateway, tenant, approval_id, approve=True)


@router.post("/{approval_id}/deny", responses=gateway_responses(404, 409))
def deny(approval_id: ApprovalId, tenant: ApproveDep, gateway: GatewayDep, body: DenyIn | None = None) -> ApprovalOut:
    """Deny a pending request: it never runs, and retrying it answers ``approval-denied`` with the reason given."""
    return _decide(gateway, tenant, approval_id, approve=False, note=body.reason if body else None)
