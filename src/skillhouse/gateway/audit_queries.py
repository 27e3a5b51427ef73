"""Read-only queries over the audit trail, approvals and turns, for a person looking (the web console).

The audit trail filtered by turn, skill, operation, decision, approval and time range, and the
tenant's approvals by state, each a page at a time: a :class:`Page` holds at most ``size`` rows, the
number of rows matching in all, and cursors to the newer and older neighbouring pages (keyset
pagination on the newest-first order, so a page stays put while new rows arrive). Also a turn's record
(:class:`TurnRecord`: its profile and the releases it bound).
Each query is scoped to one tenant: another tenant's rows are never returned.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from sqlalchemy import Select, and_, func, or_, select

from skillhouse.gateway.approvals import Approval, as_seen
from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import ApprovalRow, AuditRow, TurnRow

PAGE_SIZE = 50
Row = TypeVar("Row")
Direction = Literal["older", "newer"]


@dataclass(frozen=True)
class AuditFilter:
    """Which audit rows to show; an empty field does not filter. ``since`` and ``until`` are epoch seconds."""

    turn: str = ""
    skill: str = ""
    operation: str = ""
    decision: str = ""
    approval: str = ""
    since: float | None = None
    until: float | None = None


@dataclass(frozen=True)
class AuditRecord:
    """One row of the audit trail as a person reads it: an egress decision of the gateway, or a person's
    decision on an approval (``approved``/``denied``, with ``actor``). Never a header, a body or a query string."""

    id: int
    at: float
    """When, in epoch seconds."""
    tenant_id: str
    turn_id: str | None
    method: str
    host: str
    path: str
    operation: str | None
    decision: str
    code: str | None
    status: int | None
    address: str | None
    idempotency_key: str | None
    approval_id: str | None
    actor: str | None
    """Who decided when a person did (the deciding token); ``None`` for the gateway's own rows."""


def _record(row: AuditRow) -> AuditRecord:
    return AuditRecord(
        id=row.id, at=row.at, tenant_id=row.tenant_id, turn_id=row.turn_id, method=row.method, host=row.host,
        path=row.path, operation=row.operation, decision=row.decision, code=row.code, status=row.status,
        address=row.address, idempotency_key=row.idempotency_key, approval_id=row.approval_id, actor=row.actor,
    )


@dataclass(frozen=True)
class Page(Generic[Row]):
    """One page of rows, newest first: how many match in all, and the cursors of the pages beside it."""

    rows: list[Row]
    total: int
    newer: str | None
    """Cursor of the page of newer rows (``None`` on the first page)."""
    older: str | None
    """Cursor of the page of older rows (``None`` on the last page)."""


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _audit_query(tenant: str, where: AuditFilter) -> Select[AuditRow]:
    query = select(AuditRow).where(AuditRow.tenant_id == tenant)
    if where.turn:
        query = query.where(AuditRow.turn_id == where.turn)
    if where.skill:
        # operations are recorded qualified, ``<skill>.<operation>``; escape LIKE's wildcards in the name
        query = query.where(AuditRow.operation.like(f"{_like_escaped(where.skill)}.%", escape="\\"))
    if where.operation:
        query = query.where(AuditRow.operation.like(f"%{_like_escaped(where.operation)}%", escape="\\"))
    if where.decision:
        query = query.where(AuditRow.decision == where.decision)
    if where.approval:
        query = query.where(AuditRow.approval_id == where.approval)
    if where.since is not None:
        query = query.where(AuditRow.at >= where.since)
    if where.until is not None:
        query = query.where(AuditRow.at < where.until)
    return query


def audit_rows(database: Database, tenant: str, where: AuditFilter) -> list[AuditRecord]:
    """Every one of the tenant's audit rows matching ``where``, newest first (for a narrow filter, such as one approval's)."""
    with database.sessions() as session:
        return [_record(row) for row in session.scalars(_audit_query(tenant, where).order_by(AuditRow.id.desc()))]


def _cursor_id(cursor: str) -> int | None:
    return int(cursor) if cursor.isdigit() and len(cursor) < 19 else None


def audit_page(database: Database, tenant: str, where: AuditFilter, cursor: str = "", direction: Direction = "older",
               size: int = PAGE_SIZE) -> Page[AuditRecord]:
    """A page of the tenant's audit rows matching ``where``: the ``size`` rows just older (or newer) than ``cursor``
    (a row id; empty for the newest page)."""
    query = _audit_query(tenant, where)
    anchor = _cursor_id(cursor)
    with database.sessions() as session:
        total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
        if anchor is not None and direction == "newer":
            found = list(session.scalars(query.where(AuditRow.id > anchor).order_by(AuditRow.id.asc()).limit(size + 1)))
            more_newer, rows = len(found) > size, found[:size][::-1]
            more_older = True
        else:
            paged = query.where(AuditRow.id < anchor) if anchor is not None else query
            found = list(session.scalars(paged.order_by(AuditRow.id.desc()).limit(size + 1)))
            more_older, rows = len(found) > size, found[:size]
            more_newer = anchor is not None
        shown = [_record(row) for row in rows]
    if not shown:
        return Page([], int(total), None, None)
    return Page(shown, int(total), str(shown[0].id) if more_newer else None, str(shown[-1].id) if more_older else None)


def approval_page(database: Database, tenant: str, waiting: bool, cursor: str = "", direction: Direction = "older",
                  size: int = PAGE_SIZE, clock: float | None = None) -> Page[Approval]:
    """A page of the tenant's approvals, newest first: those still waiting for a person (pending and not
    expired), or all the others (a lapsed one reads ``expired``). The cursor is an approval id."""
    now = time.time() if clock is None else clock
    live = and_(ApprovalRow.state == "pending", ApprovalRow.expires_at > now)
    query = select(ApprovalRow).where(ApprovalRow.tenant_id == tenant, live if waiting else ~live)
    newest_first = (ApprovalRow.created_at.desc(), ApprovalRow.id.desc())
    with database.sessions() as session:
        total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
        anchor = session.get(ApprovalRow, cursor) if cursor else None
        if anchor is not None and anchor.tenant_id != tenant:
            anchor = None
        if anchor is not None:
            at, key = anchor.created_at, anchor.id
            older = or_(ApprovalRow.created_at < at, and_(ApprovalRow.created_at == at, ApprovalRow.id < key))
            newer = or_(ApprovalRow.created_at > at, and_(ApprovalRow.created_at == at, ApprovalRow.id > key))
        if anchor is not None and direction == "newer":
            found = list(session.scalars(query.where(newer).order_by(ApprovalRow.created_at.asc(), ApprovalRow.id.asc())
                                         .limit(size + 1)))
            more_newer, rows, more_older = len(found) > size, found[:size][::-1], True
        else:
            paged = query.where(older) if anchor is not None else query
            found = list(session.scalars(paged.order_by(*newest_first).limit(size + 1)))
            more_older, rows, more_newer = len(found) > size, found[:size], anchor is not None
        approvals = [as_seen(row, now) for row in rows]
    if not approvals:
        return Page([], int(total), None, None)
    return Page(approvals, int(total), approvals[0].id if more_newer else None, approvals[-1].id if more_older else None)


def audit_choices(database: Database, tenant: str) -> tuple[list[str], list[str]]:
    """The turns and skills seen in the tenant's audit trail, for the filter form's suggestions."""
    with database.sessions() as session:
        turns = session.scalars(select(AuditRow.turn_id).where(AuditRow.tenant_id == tenant, AuditRow.turn_id.is_not(None))
                                .distinct()).all()
        operations = session.scalars(select(AuditRow.operation).where(AuditRow.tenant_id == tenant,
                                                                      AuditRow.operation.is_not(None)).distinct()).all()
    skills = {str(operation).partition(".")[0] for operation in operations}
    return sorted(str(turn) for turn in turns), sorted(skills)


def approval_states(database: Database, tenant: str, approval_ids: Iterable[str]) -> dict[str, str]:
    """The current state of each of the tenant's approvals named (a lapsed one reads ``expired``)."""
    wanted = sorted(set(approval_ids))
    if not wanted:
        return {}
    now = time.time()
    with database.sessions() as session:
        rows = session.execute(select(ApprovalRow.id, ApprovalRow.state, ApprovalRow.expires_at)
                               .where(ApprovalRow.tenant_id == tenant, ApprovalRow.id.in_(wanted)))
        return {str(id_): "expired" if state in ("pending", "approved") and expires_at <= now else str(state)
                for id_, state, expires_at in rows}


@dataclass(frozen=True)
class BoundRelease:
    """A release a turn bound, as the turn's row names it."""

    skill: str
    version: str
    digest: str


@dataclass(frozen=True)
class TurnRecord:
    """A recorded turn as a person reads it: the provider profile it offers tools for and the releases it bound."""

    id: str
    profile: str
    releases: tuple[BoundRelease, ...]
    created_at: float
    """When, in epoch seconds."""

    def bound(self, skill: str) -> BoundRelease | None:
        """The release of ``skill`` the turn bound, if it bound one."""
        return next((release for release in self.releases if release.skill == skill), None)


def turn_record(database: Database, tenant: str, turn_id: str) -> TurnRecord | None:
    """The turn's profile and bound releases, when the turn was recorded for this tenant."""
    with database.sessions() as session:
        row = session.get(TurnRow, turn_id)
        if row is None or row.tenant_id != tenant:
            return None
        releases = tuple(BoundRelease(str(r["skill"]), str(r["version"]), str(r.get("digest", ""))) for r in row.releases)
        return TurnRecord(row.id, row.profile, releases, row.created_at)
