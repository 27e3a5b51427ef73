"""The claim, the completion and the stored-state read: one statement each on PostgreSQL, the same results as SQLite;
and on PostgreSQL the read that also claims."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from sqlalchemy import func, select
from tests.gateway.conftest import SECRET_KEY
from tests.store.held_batch import WAIT_SECONDS, batch_held_open

from skillhouse.gateway.audit import AuditEntry, finishing, opening
from skillhouse.gateway.credentials import CredentialStore
from skillhouse.gateway.egress import parse_target
from skillhouse.gateway.idempotency import IdempotencyStore
from skillhouse.gateway.key_audit import KeyAuditWrites, claim_binds
from skillhouse.gateway.matching import Gate
from skillhouse.gateway.stored_state import StoredStateReader
from skillhouse.store import Database
from skillhouse.store.gateway_tables import AllowedHostRow, AuditRow, IdempotencyRow, TenantGateRow
from skillhouse.store.group_commit import group_commit
from skillhouse.store.limit_tables import RateLimitRow, UpstreamWaitRow
from skillhouse.store.prepared import Prepared, json_value, one_statement


def _key(name: str = "k1", tenant: str = "t") -> dict[str, Any]:
    now = time.time()
    return {"tenant_id": tenant, "key": name, "operation": "hollowbrook.create_booking", "commitment": "c1",
            "state": "running", "lease_until": now + 45, "expires_at": now + 90, "response": None, "created_at": now}  # fmt: skip


def _entry(decision: str = "allowed", status: int | None = None) -> AuditEntry:
    return AuditEntry("t", "turn-1", "POST", "hollowbrook.local:8084", "/bookings", decision, status=status, idempotency_key="k1")


def _completion(name: str = "k1") -> dict[str, Any]:
    return {"tenant": "t", "key": name, "response": json.dumps({"status": 201}), "expires_at": time.time() + 3600}


def _keys(database: Database) -> list[tuple[str, str, Any]]:
    with database.reading() as session:
        return [tuple(row) for row in session.execute(select(IdempotencyRow.key, IdempotencyRow.state, IdempotencyRow.response))]


def _audit(database: Database) -> list[tuple[int, str, int | None]]:
    with database.reading() as session:
        return [tuple(row) for row in session.execute(select(AuditRow.id, AuditRow.decision, AuditRow.status).order_by(AuditRow.id))]


def test_the_claim_that_wins_writes_the_key_and_its_audit_row_and_a_second_writes_neither(database: Database) -> None:
    writes = KeyAuditWrites(database)
    row = writes.claim(_key(), opening(_entry()))
    assert row is not None
    assert writes.claim(_key(), opening(_entry())) is None
    assert _keys(database) == [("k1", "running", None)]
    assert _audit(database) == [(row, "allowed", None)]


def test_the_completion_stores_the_response_and_finishes_the_audit_row(database: Database) -> None:
    writes = KeyAuditWrites(database)
    row = writes.claim(_key(), opening(_entry()))
    assert row is not None
    writes.complete(_completion(), row, finishing(_entry(status=201)))
    [(key, state, response)] = _keys(database)
    assert (key, state) == ("k1", "completed")
    assert json_value(response) == {"status": 201}
    assert _audit(database) == [(row, "allowed", 201)]


def test_a_completion_for_a_key_no_longer_running_leaves_the_key_and_still_finishes_the_audit_row(database: Database) -> None:
    writes, keys = KeyAuditWrites(database), IdempotencyStore(database)
    row = writes.claim(_key(), opening(_entry()))
    assert row is not None
    keys.release("t", "k1")  # nothing was sent: the key is gone
    writes.complete(_completion(), row, finishing(_entry(status=201)))
    assert _keys(database) == []
    assert _audit(database) == [(row, "allowed", 201)]


def test_a_completion_whose_audit_row_is_missing_still_stores_the_response(database: Database) -> None:
    writes = KeyAuditWrites(database)
    row = writes.claim(_key(), opening(_entry()))
    assert row is not None
    writes.complete(_completion(), row + 1000, finishing(_entry(status=201)))
    assert [state for _, state, _ in _keys(database)] == ["completed"]
    assert _audit(database) == [(row, "allowed", None)]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # SQLite's writes are committed together
def test_claims_of_one_key_committed_together_let_exactly_one_win(database: Database) -> None:
    writes = KeyAuditWrites(database)
    with batch_held_open(group_commit(database)) as hand_in:
        claims = [hand_in(lambda: writes.claim(_key(), opening(_entry()))) for _ in range(4)]
    rows = [claim.result(WAIT_SECONDS) for claim in claims]
    assert rows[0] is not None and rows[1:] == [None, None, None]
    assert _keys(database) == [("k1", "running", None)]
    assert _audit(database) == [(rows[0], "allowed", None)]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_completion_committed_with_a_later_claim_of_its_key_is_seen_by_it(database: Database) -> None:
    writes = KeyAuditWrites(database)
    row = writes.claim(_key(), opening(_entry()))
    assert row is not None
    with batch_held_open(group_commit(database)) as hand_in:
        completed = hand_in(lambda: writes.complete(_completion(), row, finishing(_entry(status=201))))
        again = hand_in(lambda: writes.claim(_key(), opening(_entry())))
    completed.result(WAIT_SECONDS)
    assert again.result(WAIT_SECONDS) is None
    assert [state for _, state, _ in _keys(database)] == ["completed"]
    assert _audit(database) == [(row, "allowed", 201)]


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)  # synchronous_commit is PostgreSQL's
def test_the_completions_asynchronous_commit_does_not_outlive_its_statement(database: Database) -> None:
    assert database.dialect == "postgresql"
    writes = KeyAuditWrites(database)
    row = writes.claim(_key(), opening(_entry()))
    assert row is not None
    backend = _backend_and_setting(database)[0]
    writes.complete(_completion(), row, finishing(_entry(status=201)))
    # the pool hands back the connection the completion ran on (this test's only one)
    assert _backend_and_setting(database) == (backend, "on")


def _backend_and_setting(database: Database) -> tuple[int, str]:
    with one_statement(database) as statement:
        found = statement.first(Prepared(database, select(func.pg_backend_pid(), func.current_setting("synchronous_commit"))), {})
        assert found is not None
        return int(found[0]), str(found[1])


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # the refusal is SQLite's
def test_one_statement_writes_are_refused_on_sqlite(database: Database) -> None:
    assert database.dialect == "sqlite"
    with pytest.raises(ValueError), one_statement(database):
        pass


def test_the_stored_state_read_returns_the_tenants_hosts_gates_credentials_and_key(database: Database) -> None:
    credentials = CredentialStore(database, SECRET_KEY)
    with database.transaction() as session:
        session.add_all([AllowedHostRow(tenant_id="t", host="a.example"), AllowedHostRow(tenant_id="other", host="b.example"),
                         TenantGateRow(tenant_id="t", matches="DELETE /bookings/{id}", reason="cancels")])  # fmt: skip
    credentials.put("t", "http://hollowbrook.local:8084", "bearer", "s3cret", allow_http=True)
    credentials.put("t", "hollowbrook.local", "header", "https-only", header="X-Key")  # https:443: redacted, not injected
    credentials.put("t", "elsewhere.example", "bearer", "other")
    KeyAuditWrites(database).claim(_key(), opening(_entry()))
    reader = StoredStateReader(database, credentials)
    target = parse_target("http://hollowbrook.local:8084/bookings")

    state = reader.read("t", target, "k1")
    assert state.allow_list == ["a.example"]
    assert state.tenant_gates == [Gate("DELETE", "/bookings/{id}", reason="cancels")]
    assert [(i.header, i.value) for i in state.injections] == [("authorization", "Bearer s3cret")]
    assert set(state.secrets) == {"s3cret", "Bearer s3cret", "https-only"}
    assert state.seen is not None and (state.seen.state, state.seen.commitment, state.seen.response) == ("running", "c1", None)
    assert reader.read("t", target, None).seen is None
    assert reader.read("t", target, "k2").seen is None
    other = reader.read("other", target, "k1")
    assert (other.allow_list, other.tenant_gates, list(other.injections), other.seen) == (["b.example"], [], [], None)


_PG_ONLY = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)  # the read claims on PostgreSQL only


def _read_and_claim(database: Database, names: tuple[str, ...] = ("content-type",), key: str = "k1") -> tuple[int | None, Any]:
    reader = StoredStateReader(database, CredentialStore(database, SECRET_KEY))
    target = parse_target("http://hollowbrook.local:8084/bookings")
    found = reader.read_and_claim("t", target, names, claim_binds(_key(key), opening(_entry())))
    return found.audit_row, found.state()


@_PG_ONLY
def test_the_read_claims_a_free_key_when_nothing_stored_may_hold_the_request(database: Database) -> None:
    row, state = _read_and_claim(database)
    assert row is not None and state.seen is None
    assert _keys(database) == [("k1", "running", None)]
    assert _audit(database) == [(row, "allowed", None)]


@_PG_ONLY
def test_the_read_claims_nothing_for_a_key_already_held_and_reads_its_row(database: Database) -> None:
    first, _ = _read_and_claim(database)
    second, state = _read_and_claim(database)
    assert first is not None and second is None
    assert state.seen is not None and (state.seen.state, state.seen.commitment) == ("running", "c1")
    assert _audit(database) == [(first, "allowed", None)]


@_PG_ONLY
@pytest.mark.parametrize("holds", ["tenant gate", "rate limit", "upstream wait", "credential in a header it carries"])
def test_the_read_claims_nothing_where_a_stored_rule_may_hold_the_request_or_change_its_commitment(database: Database, holds: str) -> None:
    credentials = CredentialStore(database, SECRET_KEY)
    with database.transaction() as session:
        if holds == "tenant gate":
            session.add(TenantGateRow(tenant_id="t", matches="DELETE /elsewhere", reason="any gate of the tenant's"))
        elif holds == "rate limit":
            session.add(RateLimitRow(tenant_id="t", scope="tenant", subject="", requests=100, window_seconds=60.0,
                                     updated_at=time.time()))
        elif holds == "upstream wait":
            session.add(UpstreamWaitRow(tenant_id="t", host="hollowbrook.local", until=time.time() + 60, status=429))
    if holds == "credential in a header it carries":
        credentials.put("t", "http://hollowbrook.local:8084", "header", "s3cret", header="X-Api-Key", allow_http=True)
    row, state = _read_and_claim(database, names=("content-type", "x-api-key"))
    assert row is None
    assert (_keys(database), _audit(database), state.seen) == ([], [], None)
    # the state was read all the same: the pipeline goes on as after a plain read
    assert state.tenant_gates or state.may_be_limited or state.injections


@_PG_ONLY
def test_the_read_claims_when_the_hosts_credentials_go_in_headers_the_request_does_not_carry(database: Database) -> None:
    CredentialStore(database, SECRET_KEY).put("t", "http://hollowbrook.local:8084", "bearer", "s3cret", allow_http=True)
    row, state = _read_and_claim(database, names=("content-type", "x-authorization"))
    assert row is not None
    assert [(i.header, i.value) for i in state.injections] == [("authorization", "Bearer s3cret")]


@_PG_ONLY
def test_the_read_that_claims_stays_short_enough_for_psycopg_to_cache_its_conversion(database: Database) -> None:
    reader = StoredStateReader(database, CredentialStore(database, SECRET_KEY))
    # psycopg parses a statement's placeholders once per text up to 4,096 characters, on every call past that
    assert reader.claiming_read is not None and len(reader.claiming_read.sql) <= 4096
