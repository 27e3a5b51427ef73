"""Prepared statements on the driver's connection behave like the store's own transactions."""

from __future__ import annotations

from typing import cast

import pytest
from sqlalchemy import Table, bindparam, insert, select

from skillhouse.store import Database
from skillhouse.store.gateway_tables import AllowedHostRow, IdempotencyRow
from skillhouse.store.prepared import Prepared, json_text, json_value, reading, writing

HOSTS = cast(Table, AllowedHostRow.__table__)
KEYS = cast(Table, IdempotencyRow.__table__)


def _add_host(database: Database) -> Prepared:
    return Prepared(database, insert(HOSTS).values(tenant_id=bindparam("tenant"), host=bindparam("host")))


def _hosts(database: Database) -> Prepared:
    return Prepared(database, select(HOSTS.c.host).where(HOSTS.c.tenant_id == bindparam("tenant")).order_by(HOSTS.c.host))


def test_a_write_commits_and_a_read_sees_it(database: Database) -> None:
    with writing(database) as transaction:
        assert transaction.execute(_add_host(database), {"tenant": "t", "host": "a.example"}) == 1
    with reading(database) as transaction:
        assert transaction.rows(_hosts(database), {"tenant": "t"}) == [("a.example",)]
    with database.reading() as session:
        assert list(session.scalars(select(HOSTS.c.host))) == ["a.example"]


@pytest.mark.parametrize("durable", [True, False])
def test_a_write_that_raises_leaves_nothing(database: Database, durable: bool) -> None:
    with pytest.raises(RuntimeError), writing(database, durable) as transaction:
        transaction.execute(_add_host(database), {"tenant": "t", "host": "a.example"})
        raise RuntimeError("after the insert")
    with reading(database) as transaction:
        assert transaction.first(_hosts(database), {"tenant": "t"}) is None


def test_values_the_statement_carries_itself_are_bound_with_the_callers(database: Database) -> None:
    with writing(database) as transaction:
        transaction.execute(_add_host(database), {"tenant": "t", "host": "a.example"})
        transaction.execute(_add_host(database), {"tenant": "t", "host": "b.example"})
    fixed = Prepared(database, select(HOSTS.c.host).where(HOSTS.c.tenant_id == bindparam("tenant"), HOSTS.c.host == "b.example"))
    with reading(database) as transaction:
        assert transaction.rows(fixed, {"tenant": "t"}) == [("b.example",)]


def test_a_json_column_written_as_text_reads_back_through_both_paths(database: Database) -> None:
    response = {"status": 201, "headers": {"x": "ü"}, "body": "{\"id\": 1}"}
    values = {"tenant_id": "t", "key": "k", "operation": "o", "commitment": "c", "state": "completed",
              "lease_until": 1.0, "expires_at": 2.0, "response": json_text(response), "created_at": 0.5}  # fmt: skip
    with writing(database) as transaction:
        transaction.execute(Prepared(database, insert(KEYS).values({n: bindparam(n) for n in values})), values)
    with reading(database) as transaction:
        row = transaction.first(Prepared(database, select(KEYS.c.response)), {})
    assert row is not None and json_value(row[0]) == response
    with database.reading() as session:
        assert session.get(IdempotencyRow, ("t", "k")).response == response  # type: ignore[union-attr]
