"""What a person sees of a tenant's idempotency keys, and clearing an unresolved one.

A key is ``unresolved`` when its request may have reached the upstream but the gateway never learned
the outcome (the connection was lost, the deadline passed, the holder died): the gateway never
resends it. A person checks the upstream (did the booking happen?) and then either leaves the key to
expire or clears it, which lets the identical request run again. Clearing deletes the key row and
records who cleared which key and when in ``gateway_key_clearings``, in one transaction; it is one
conditional ``DELETE ... WHERE state = 'unresolved'``, so a key that completed meanwhile (a slow
holder finishing) is never cleared, and two people clearing at once clear it once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from sqlalchemy import delete, insert, select

from skillhouse.errors import ConflictError, NotFoundError
from skillhouse.gateway.errors import GatewayError
from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import IdempotencyRow, KeyClearingRow


class KeyNotFound(GatewayError, NotFoundError):
    """No such idempotency key for this tenant."""

    code = "idempotency-key-not-found"


class KeyNotUnresolved(GatewayError, ConflictError):
    """The key is not unresolved (running, done or cleared meanwhile), so there is nothing to clear."""

    code = "idempotency-key-not-unresolved"


@dataclass(frozen=True)
class KeyState:
    """A key as listed: never its stored response (it may hold personal data)."""

    key: str
    operation: str
    state: str
    created_at: float
    expires_at: float


@dataclass(frozen=True)
class Clearing:
    """A person cleared ``key``: who (``cleared_by``) and when (epoch seconds)."""

    key: str
    operation: str
    commitment: str
    key_created_at: float
    cleared_by: str
    cleared_at: float


class KeyReview:
    def __init__(self, database: Database, clock: Callable[[], float] = time.time) -> None:
        self.database = database
        self.clock = clock

    def clearings(self, tenant: str, limit: int = 100) -> list[Clearing]:
        """The tenant's clearings, newest first."""
        query = (
            select(KeyClearingRow).where(KeyClearingRow.tenant_id == tenant).order_by(KeyClearingRow.id.desc()).limit(limit)
        )
        with self.database.reading() as session:
            return [
                Clearing(r.key, r.operation, r.commitment, r.key_created_at, r.cleared_by, r.cleared_at)
                for r in session.scalars(query)
            ]

    def list(self, tenant: str, state: str | None = None, limit: int = 100) -> list[KeyState]:
        """The tenant's keys (in ``state`` when given), newest first."""
        query = select(IdempotencyRow).where(IdempotencyRow.tenant_id == tenant)
        if state is not None:
            query = query.where(IdempotencyRow.state == state)
        with self.database.reading() as session:
            rows = session.scalars(query.order_by(IdempotencyRow.created_at.desc()).limit(limit))
            return [KeyState(r.key, r.operation, r.state, r.created_at, r.expires_at) for r in rows]

    def clear(self, tenant: str, key: str, by: str) -> Clearing:
        """Clear an unresolved key and record it; :class:`KeyNotFound` or :class:`KeyNotUnresolved` otherwise."""
        removed = (
            delete(IdempotencyRow)
            .where(IdempotencyRow.tenant_id == tenant, IdempotencyRow.key == key, IdempotencyRow.state == "unresolved")
            .returning(IdempotencyRow.operation, IdempotencyRow.commitment, IdempotencyRow.created_at)
        )
        with self.database.transaction() as session:
            found = session.execute(removed).first()
            if found is None:
                state = session.scalar(
                    select(IdempotencyRow.state).where(IdempotencyRow.tenant_id == tenant, IdempotencyRow.key == key)
                )
                if state is None:
                    raise KeyNotFound(f"no idempotency key {key} for tenant {tenant}", idempotency_key=key)
                raise KeyNotUnresolved(
                    f"key {key} is {state}, not unresolved: only a key whose outcome is unknown can be cleared",
                    idempotency_key=key, state=state,
                )  # fmt: skip
            operation, commitment, created_at = found
            clearing = Clearing(key, operation, commitment, float(created_at), by[:200], self.clock())
            values = asdict(clearing)
            session.execute(insert(KeyClearingRow).values(tenant_id=tenant, **values))
        return clearing
