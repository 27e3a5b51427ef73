"""Prepared statements on the driver's connection behave like the store's own transactions."""

from __future__ import annotations

from typing import cast

import psycopg
import pytest
from sqlalchemy import Table, bindparam, event, func, insert, select

from skillhouse.store import Database
from skillhouse.store.gateway_tables import AllowedHostRow, IdempotencyRow
from skillhouse.store.prepared import Prepared, json_text, json_value, one_statement, read, reading, writing

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


def _terminate_pooled_backends(database: Database) -> None:
    """Fill the pool with two connections, then terminate their server processes from another session."""
    held = [database.engine.raw_connection() for _ in range(2)]
    pids = [connection.driver_connection.info.backend_pid for connection in held]  # type: ignore[union-attr]
    for connection in held:
        connection.close()  # back to the pool, alive as far as the pool knows
    url = database.engine.url.set(drivername="postgresql", query={}).render_as_string(hide_password=False)
    with psycopg.connect(url, autocommit=True) as admin:
        for pid in pids:
            # with a timeout, returns once the process has exited (its socket closed)
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])


@pytest.mark.parametrize("database", ["postgresql"], indirect=True)  # terminating a server backend is PostgreSQL's
def test_reads_and_writes_go_on_after_the_server_terminates_the_pooled_connections(database: Database) -> None:
    with writing(database) as transaction:
        transaction.execute(_add_host(database), {"tenant": "t", "host": "a.example"})
    # the pool now holds connections whose server processes are about to go
    _terminate_pooled_backends(database)
    assert read(database, lambda transaction: transaction.rows(_hosts(database), {"tenant": "t"})) == [("a.example",)]
    _terminate_pooled_backends(database)
    with writing(database) as transaction:
        transaction.execute(_add_host(database), {"tenant": "t", "host": "b.example"})
    with database.reading() as session:
        assert list(session.scalars(select(HOSTS.c.host).order_by(HOSTS.c.host))) == ["a.example", "b.example"]


@pytest.mark.parametrize("database", ["postgresql"], indirect=True)
def test_a_connection_kept_in_autocommit_that_the_server_closed_is_dropped_before_a_write(database: Database) -> None:
    backend = Prepared(database, select(func.pg_backend_pid()))
    [(pid,)] = read(database, lambda transaction: transaction.rows(backend, {}))  # kept for the next statement
    url = database.engine.url.set(drivername="postgresql", query={}).render_as_string(hide_password=False)
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
    # a write is never retried: it runs because the closed connection is found before it is used
    with one_statement(database) as statement:
        statement.execute(_add_host(database), {"tenant": "t", "host": "a.example"})
        [(now,)] = statement.rows(backend, {})
    assert now != pid
    with database.reading() as session:  # the pool's other users still get connections out of autocommit
        assert list(session.scalars(select(HOSTS.c.host))) == ["a.example"]
        assert session.connection().connection.driver_connection.autocommit is False  # type: ignore[union-attr]


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
def test_on_sqlite_reads_and_write_transactions_take_the_connection_kept_from_the_last_one(database: Database) -> None:
    checkouts: list[object] = []
    event.listen(database.engine, "checkout", lambda *_: checkouts.append(_))
    with writing(database) as transaction:
        transaction.execute(_add_host(database), {"tenant": "t", "host": "a.example"})
    for host in ("b.example", "c.example"):
        assert read(database, lambda transaction: transaction.rows(_hosts(database), {"tenant": "t"}))[0] == ("a.example",)
        with writing(database) as transaction:
            transaction.execute(_add_host(database), {"tenant": "t", "host": host})
    assert len(checkouts) == 1  # the pool's queue, events and reset once, not once per transaction


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
def test_on_sqlite_a_connection_handed_back_inside_a_transaction_is_not_kept_holding_the_write_lock(database: Database) -> None:
    connection = database.take_autocommit()
    connection.driver_connection.execute("BEGIN IMMEDIATE")  # type: ignore[union-attr]
    database.give_back_autocommit(connection)
    with writing(database) as transaction:  # would wait for the lock, then fail: the pool rolled it back
        transaction.execute(_add_host(database), {"tenant": "t", "host": "a.example"})
    assert read(database, lambda transaction: transaction.rows(_hosts(database), {"tenant": "t"})) == [("a.example",)]
