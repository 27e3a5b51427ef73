"""Idempotency keys in the store: the first request runs, every duplicate agrees with it.

The claim is one ``INSERT ... ON CONFLICT DO NOTHING`` on the (tenant, key) primary key, so of any
number of concurrent identical requests, in any number of processes sharing the database, exactly one
inserts and runs. The others read the row:

- ``completed``: the stored (already redacted) response is replayed;
- ``running`` with a live lease: wait, bounded, for it to finish, then ``idempotency-conflict`` (409);
- ``running`` with an expired lease: its holder died or lost track mid-call, so the request may have
  reached the upstream: the key becomes ``unresolved`` (never resent automatically);
- ``unresolved``: ``upstream-unresolved`` until the key expires or a person clears it;
- a different payload commitment under the same key, in any state: ``idempotency-mismatch`` (422).

Every state change is one conditional statement, so SQLite and PostgreSQL need no Python locks.

The claim commits before the request is sent, with the database's full durability (on PostgreSQL a
synchronous commit; on SQLite one that survives the process, see ``store/database.py``), and opens the
request's audit row in the same commit; the completion stores the response and finishes that row
together (both writes in ``gateway/key_audit.py``, one statement each on PostgreSQL). The completion's
commit is asynchronous: losing it in an OS crash leaves the key ``running``, which becomes
``unresolved`` when its lease runs out, so the request is still never resent.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, select, update

from skillhouse.gateway.errors import IdempotencyConflict, IdempotencyMismatch, UpstreamUnresolved
from skillhouse.gateway.exchange import FetchAnswer, read_answer
from skillhouse.gateway.key_audit import KeyAuditWrites
from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import IdempotencyRow
from skillhouse.store.prepared import DriverTransaction, Prepared, json_text, json_value, read


@dataclass(frozen=True)
class KeyPolicy:
    """How long a holder may take, how long a duplicate waits, how long a finished key lasts."""

    lease_seconds: float = 45.0
    wait_seconds: float = 10.0
    ttl_seconds: float = 24 * 3600.0


@dataclass(frozen=True)
class Claimed:
    """This request holds the key and must run, then :meth:`IdempotencyStore.complete` it."""

    key: str
    audit_row: int
    """The audit row opened with the claim, finished by :meth:`IdempotencyStore.complete`."""


@dataclass(frozen=True)
class Replay:
    """An earlier request with this key completed: answer with its response."""

    response: FetchAnswer


_TABLE = cast(Table, IdempotencyRow.__table__)
_THIS_KEY = (_TABLE.c.tenant_id == bindparam("tenant"), _TABLE.c.key == bindparam("key"))
KEY_COLUMNS = (_TABLE.c.state, _TABLE.c.commitment, _TABLE.c.lease_until, _TABLE.c.expires_at, _TABLE.c.response)
"""What a read of a key's row selects, in the order :func:`key_row` takes."""


@dataclass(frozen=True)
class KeyRow:
    """A key's row as read: who holds it until when, the payload it was first seen with, its answer."""

    state: str
    commitment: str
    lease_until: float
    expires_at: float
    response: FetchAnswer | None
    """The stored answer of a completed key (``None`` while it runs)."""

    def stored(self) -> FetchAnswer:
        """The answer of a completed key; a ``ValueError`` when a completed row holds none (never written so)."""
        if self.response is None:
            raise ValueError("a completed idempotency key holds no answer")
        return self.response


def key_row(found: tuple[Any, ...] | None) -> KeyRow | None:
    """A key's row from the values of :data:`KEY_COLUMNS` as read (None when there is no row)."""
    if found is None:
        return None
    state, commitment, lease_until, expires_at, response = found
    document = json_value(response)
    return KeyRow(state, commitment, float(lease_until), float(expires_at),
                  None if document is None else read_answer(document))


class IdempotencyStore:
    def __init__(self, database: Database, policy: KeyPolicy | None = None, clock: Callable[[], float] = time.time) -> None:
        self.database = database
        self.policy = policy or KeyPolicy()
        self.clock = clock
        self._writes = KeyAuditWrites(database)
        self._read = Prepared(database, select(*KEY_COLUMNS).where(*_THIS_KEY))

    def read_later(self, transaction: DriverTransaction, tenant: str, key: str) -> Callable[[], KeyRow | None]:
        """Send the read of the key's row in the caller's transaction; call the result to have the row.

        Sending first lets the caller's other reads share the round trip (see ``store/prepared.py``).
        """
        pending = transaction.send(self._read, {"tenant": tenant, "key": key})
        return lambda: key_row(pending.first())

    def _row(self, tenant: str, key: str) -> KeyRow | None:
        return read(self.database, lambda transaction: self.read_later(transaction, tenant, key)())

    def _update(self, tenant: str, key: str, where: Any, **values: Any) -> bool:
        statement = (
            update(_TABLE).where(_TABLE.c.tenant_id == tenant, _TABLE.c.key == key, where).values(**values)
        )
        with self.database.transaction() as session:
            return bool(getattr(session.execute(statement), "rowcount", 0))

    def replay_of(self, row: KeyRow | None, key: str, commitment: str) -> Replay | None:
        """The completed, unexpired answer ``row`` (read by the caller) holds for this key and payload,
        without claiming anything."""
        if row is None or row.state != "completed" or row.expires_at <= self.clock():
            return None
        if row.commitment != commitment:
            raise IdempotencyMismatch(f"key {key} was first used with a different request", idempotency_key=key)
        return Replay(row.stored())

    def claim(self, tenant: str, key: str, operation: str, commitment: str, audit: Mapping[str, Any]) -> Claimed | Replay:
        """Hold ``key`` for this request, or answer as the request that holds or held it.

        ``audit`` is the request's audit row (``AuditLog.opening``), written in the claim's own commit
        only if this request takes the key.
        """
        deadline = self.clock() + self.policy.wait_seconds
        pause = 0.005
        while True:
            now = self.clock()
            audit_row = self._writes.claim(self.new_row(tenant, key, operation, commitment, now), audit)
            if audit_row is not None:
                return Claimed(key, audit_row)
            row = self._row(tenant, key)
            if row is None:
                continue  # expired and removed between our insert and read: try again
            if row.state != "running" and row.expires_at <= now:
                self._drop_expired(tenant, key, now)
                continue
            if row.commitment != commitment:
                raise IdempotencyMismatch(f"key {key} was first used with a different request", idempotency_key=key)
            if row.state == "completed":
                return Replay(row.stored())
            if row.state == "unresolved":
                raise self._unresolved(key)
            if row.lease_until <= now:
                # the holder cannot still be sending: it died or timed out after the request may have left
                self._update(tenant, key, _TABLE.c.state == "running", state="unresolved")
                raise self._unresolved(key)
            if now >= deadline:
                raise IdempotencyConflict(f"a request with key {key} is still in flight; retry later", idempotency_key=key)
            time.sleep(min(pause, max(0.0, deadline - now)))
            pause = min(pause * 2, 0.1)

    def new_row(self, tenant: str, key: str, operation: str, commitment: str, now: float | None = None) -> dict[str, Any]:
        """The values of the key's row as a claim at ``now`` (default: the clock) inserts it: ``running``, leased."""
        now = self.clock() if now is None else now
        return {
            "tenant_id": tenant, "key": key, "operation": operation, "commitment": commitment,
            "state": "running", "lease_until": now + self.policy.lease_seconds,
            "expires_at": now + self.policy.lease_seconds + self.policy.ttl_seconds, "response": None,
            "created_at": now,
        }  # fmt: skip

    def _drop_expired(self, tenant: str, key: str, now: float) -> None:
        with self.database.transaction() as session:
            session.execute(
                delete(IdempotencyRow).where(
                    IdempotencyRow.tenant_id == tenant,
                    IdempotencyRow.key == key,
                    IdempotencyRow.state != "running",
                    IdempotencyRow.expires_at <= now,
                )
            )

    @staticmethod
    def _unresolved(key: str) -> UpstreamUnresolved:
        return UpstreamUnresolved(
            f"a request with key {key} may have reached the upstream but its outcome is unknown; "
            "it is not resent automatically: check the upstream, then retry after the key expires",
            idempotency_key=key,
        )

    def complete(self, claimed: Claimed, tenant: str, response: FetchAnswer, audit: Mapping[str, Any]) -> None:
        """Store the answer, duplicates now replay it; and finish the claim's audit row (``AuditLog.finishing``)."""
        values = {"tenant": tenant, "key": claimed.key, "response": json_text(response.document()),
                  "expires_at": self.clock() + self.policy.ttl_seconds}  # fmt: skip
        self._writes.complete(values, claimed.audit_row, audit)

    def unresolved(self, tenant: str, key: str) -> None:
        self._update(tenant, key, _TABLE.c.state == "running", state="unresolved", expires_at=self.clock() + self.policy.ttl_seconds)

    def release(self, tenant: str, key: str) -> None:
        """Nothing was sent: let the next request with this key run."""
        with self.database.transaction() as session:
            session.execute(
                delete(IdempotencyRow).where(
                    IdempotencyRow.tenant_id == tenant, IdempotencyRow.key == key, IdempotencyRow.state == "running"
                )
            )

    def state(self, tenant: str, key: str) -> str | None:
        row = self._row(tenant, key)
        return None if row is None else row.state
