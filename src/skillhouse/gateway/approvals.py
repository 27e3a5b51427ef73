"""Approvals: a held request, bound by its commitment, approved or denied by a person, used once.

Lifecycle: ``pending`` → ``approved`` | ``denied`` | ``expired``; ``approved`` → ``used`` (the one run)
or ``expired``. Every transition is one conditional ``UPDATE ... WHERE state = <expected>``, so two
identical requests racing on one approval cannot both run it, in one process or many. A request that
differs in anything has a different commitment and so needs an approval of its own; a used approval
is never used again (the identical request asks for a new approval). A denied request stays refused
(``approval-denied``, with the reason the person gave, if any) until its approval expires: retrying it
does not open a new question.

A person's decision commits together with its own audit row (decision ``approved`` or ``denied``, the
decider as ``actor``), so the audit trail holds every decision beside the gateway's rows.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import insert, select, update

from skillhouse.gateway.errors import ApprovalError, InvalidRequest
from skillhouse.json_types import JsonObject
from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import ApprovalRow, AuditRow
from skillhouse.wire.approvals import NOTE_LIMIT

DEFAULT_TTL_SECONDS = 24 * 3600.0


@dataclass(frozen=True)
class Approval:
    id: str
    tenant_id: str
    turn_id: str | None
    operation: str | None
    reason: str
    canonical: JsonObject
    commitment: str
    state: str
    created_at: float
    expires_at: float
    decided_by: str | None
    decided_at: float | None = None
    note: str | None = None
    """What the person who decided said; a denial's reason reaches the model that asks again."""

    def document(self) -> JsonObject:
        return {
            "id": self.id, "turn_id": self.turn_id, "operation": self.operation, "reason": self.reason,
            "request": self.canonical, "commitment": self.commitment, "state": self.state,
            "created_at": self.created_at, "expires_at": self.expires_at, "decided_by": self.decided_by,
            "decided_at": self.decided_at, "note": self.note,
        }  # fmt: skip


def _approval(row: ApprovalRow) -> Approval:
    return Approval(
        row.id, row.tenant_id, row.turn_id, row.operation, row.reason, dict(row.canonical), row.commitment,
        row.state, row.created_at, row.expires_at, row.decided_by, row.decided_at, row.decision_note,
    )  # fmt: skip


def as_seen(row: ApprovalRow, now: float) -> Approval:
    """The approval of ``row`` as a person sees it at ``now``: one past its expiry reads ``expired``."""
    approval = _approval(row)
    if approval.state in ("pending", "approved") and approval.expires_at <= now:
        return Approval(**{**approval.__dict__, "state": "expired"})
    return approval


def _decision_row(row: ApprovalRow, state: str, by: str, at: float) -> dict[str, Any]:
    """The audit row of a person's decision on ``row``: where the held request goes, never its query or body."""
    url = urlsplit(str(row.canonical.get("url", "")))
    return {
        "at": at, "tenant_id": row.tenant_id, "turn_id": row.turn_id, "method": str(row.canonical.get("method", "-")),
        "host": url.netloc.rpartition("@")[2], "path": url.path or "/", "operation": row.operation,
        "decision": state, "approval_id": row.id, "actor": by,
    }  # fmt: skip


class ApprovalStore:
    def __init__(self, database: Database, ttl_seconds: float = DEFAULT_TTL_SECONDS, clock: Callable[[], float] = time.time) -> None:
        self.database = database
        self.ttl_seconds = ttl_seconds
        self.clock = clock

    def _transition(self, tenant: str, approval_id: str, expected: str, **values: Any) -> bool:
        statement = (
            update(ApprovalRow)
            .where(
                ApprovalRow.id == approval_id,
                ApprovalRow.tenant_id == tenant,
                ApprovalRow.state == expected,
                ApprovalRow.expires_at > self.clock(),
            )
            .values(**values)
        )
        with self.database.transaction() as session:
            return bool(getattr(session.execute(statement), "rowcount", 0))

    def use_or_hold(
        self, tenant: str, turn_id: str | None, operation: str | None, reason: str, canonical: Mapping[str, Any], commitment: str
    ) -> tuple[bool, str]:
        """``(True, id)`` when an approval for exactly this request was used now; else ``(False, id)`` held.

        A denied, unexpired approval of exactly this request refuses it (``approval-denied``).
        """
        now = self.clock()
        with self.database.transaction() as session:
            rows = list(
                session.scalars(
                    select(ApprovalRow).where(
                        ApprovalRow.tenant_id == tenant,
                        ApprovalRow.commitment == commitment,
                        ApprovalRow.state.in_(("approved", "pending", "denied")),
                        ApprovalRow.expires_at > now,
                    ).order_by(ApprovalRow.created_at)
                )
            )
        denied = next((row for row in rows if row.state == "denied"), None)
        if denied is not None:
            # a person said no to exactly this request: asking again must not reopen the question
            said = f" with the reason: {denied.decision_note}" if denied.decision_note else ""
            raise ApprovalError(
                f"approval {denied.id} was denied{said}; this exact request is refused until it expires",
                code="approval-denied", approval_id=denied.id, **({"reason": denied.decision_note} if denied.decision_note else {}),
            )
        for row in rows:
            if row.state == "approved" and self._transition(tenant, row.id, "approved", state="used", used_at=now):
                return True, row.id
        for row in rows:
            if row.state == "pending":
                return False, row.id
        approval_id = "apr_" + secrets.token_urlsafe(18)
        with self.database.transaction() as session:
            session.add(
                ApprovalRow(
                    id=approval_id, tenant_id=tenant, turn_id=turn_id, operation=operation, reason=reason,
                    canonical=dict(canonical), commitment=commitment, state="pending",
                    created_at=now, expires_at=now + self.ttl_seconds,
                )
            )  # fmt: skip
        return False, approval_id

    def give_back(self, tenant: str, approval_id: str) -> None:
        """The approved request could not be sent at all: its approval may be used again."""
        self._transition(tenant, approval_id, "used", state="approved", used_at=None)

    def get(self, tenant: str, approval_id: str) -> Approval:
        with self.database.transaction() as session:
            row = session.get(ApprovalRow, approval_id)
            if row is None or row.tenant_id != tenant:
                raise ApprovalError(f"no approval {approval_id!r} for this tenant", code="approval-not-found")
            approval = _approval(row)
        if approval.state in ("pending", "approved") and approval.expires_at <= self.clock():
            return Approval(**{**approval.__dict__, "state": "expired"})
        return approval

    def list(self, tenant: str, state: str | None = None, limit: int = 100) -> list[Approval]:
        with self.database.transaction() as session:
            query = select(ApprovalRow).where(ApprovalRow.tenant_id == tenant)
            rows = session.scalars(query.order_by(ApprovalRow.created_at.desc()).limit(limit))
            found = [_approval(row) for row in rows]
        now = self.clock()
        found = [
            Approval(**{**a.__dict__, "state": "expired"}) if a.state in ("pending", "approved") and a.expires_at <= now else a
            for a in found
        ]
        return [a for a in found if state is None or a.state == state]

    def decide(self, tenant: str, approval_id: str, approve: bool, by: str, note: str | None = None) -> Approval:
        """Approve or deny a pending approval, with its audit row in the same commit; anything else is
        refused with its reason. ``note`` (a denial's reason, at most :data:`NOTE_LIMIT` characters, else
        ``invalid-request`` with ``field: reason``) is what the model is told when it asks again."""
        new_state = "approved" if approve else "denied"
        now = self.clock()
        note = (note or "").strip() or None
        if note is not None and len(note) > NOTE_LIMIT:
            raise InvalidRequest(f"the reason has {len(note)} characters; at most {NOTE_LIMIT}", field="reason")
        statement = (
            update(ApprovalRow)
            .where(ApprovalRow.id == approval_id, ApprovalRow.tenant_id == tenant, ApprovalRow.state == "pending",
                   ApprovalRow.expires_at > now)
            .values(state=new_state, decided_at=now, decided_by=by, decision_note=note)
        )  # fmt: skip
        with self.database.transaction() as session:
            decided = bool(getattr(session.execute(statement), "rowcount", 0))
            row = session.get(ApprovalRow, approval_id) if decided else None
            if row is not None:
                session.execute(insert(AuditRow).values(_decision_row(row, new_state, by, now)))
        if not decided:
            current = self.get(tenant, approval_id)
            if current.state == "expired":
                raise ApprovalError(f"approval {approval_id} has expired; the request must be made again", code="approval-expired")
            raise ApprovalError(f"approval {approval_id} is {current.state}, not pending", code="approval-not-pending")
        return self.get(tenant, approval_id)
