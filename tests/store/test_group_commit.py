"""Writes handed in together share one transaction, and each caller still sees only its own write's outcome."""

from __future__ import annotations

import gc
import sqlite3
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest
from sqlalchemy import Table, bindparam, insert, select, text
from tests.store.held_batch import WAIT_SECONDS, batch_held_open

from skillhouse.store import Database
from skillhouse.store.gateway_tables import AllowedHostRow
from skillhouse.store.group_commit import GroupCommit, group_commit
from skillhouse.store.prepared import DriverTransaction, Prepared, reading

HOSTS = cast(Table, AllowedHostRow.__table__)


def _adding(database: Database, host: str, seen: list[DriverTransaction] | None = None) -> Callable[[DriverTransaction], str]:
    statement = Prepared(database, insert(HOSTS).values(tenant_id=bindparam("tenant"), host=bindparam("host")))

    def add(transaction: DriverTransaction) -> str:
        if seen is not None:
            seen.append(transaction)
        transaction.execute(statement, {"tenant": "t", "host": host})
        return host

    return add


def _hosts(database: Database) -> list[str]:
    statement = Prepared(database, select(HOSTS.c.host).where(HOSTS.c.tenant_id == bindparam("tenant")).order_by(HOSTS.c.host))
    with reading(database) as transaction:
        return [str(host) for (host,) in transaction.rows(statement, {"tenant": "t"})]


def test_writes_handed_in_while_a_batch_commits_share_the_next_transaction(database: Database) -> None:
    group = GroupCommit(database)
    seen: list[DriverTransaction] = []
    with batch_held_open(group) as hand_in:
        handed = [hand_in(lambda n=n: group.write(_adding(database, f"{n}.example", seen))) for n in range(4)]
    assert [future.result(WAIT_SECONDS) for future in handed] == ["0.example", "1.example", "2.example", "3.example"]
    assert len({id(transaction) for transaction in seen}) == 1
    assert _hosts(database) == ["0.example", "1.example", "2.example", "3.example"]


def test_a_write_that_raises_leaves_nothing_and_the_others_of_its_batch_commit(database: Database) -> None:
    group = GroupCommit(database)
    failing = _adding(database, "b.example")

    def fail(transaction: DriverTransaction) -> str:
        failing(transaction)
        raise RuntimeError("after the insert")

    with batch_held_open(group) as hand_in:
        handed = [hand_in(lambda: group.write(_adding(database, "a.example"))), hand_in(lambda: group.write(fail)),
                  hand_in(lambda: group.write(_adding(database, "c.example")))]
    assert handed[0].result(WAIT_SECONDS) == "a.example"
    with pytest.raises(RuntimeError):
        handed[1].result(WAIT_SECONDS)
    assert handed[2].result(WAIT_SECONDS) == "c.example"
    assert _hosts(database) == ["a.example", "c.example"]


def test_a_write_alone_that_raises_leaves_nothing(database: Database) -> None:
    adding = _adding(database, "a.example")

    def fail(transaction: DriverTransaction) -> str:
        adding(transaction)
        raise RuntimeError("after the insert")

    with pytest.raises(RuntimeError):
        GroupCommit(database).write(fail)
    assert _hosts(database) == []


def test_every_writer_of_a_database_shares_one_group(database: Database) -> None:
    assert group_commit(database) is group_commit(database)


def test_a_database_no_longer_used_is_not_kept_alive_by_its_group(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path}/gone.db")
    group_commit(database)
    gone = weakref.ref(database)
    database.dispose()
    del database
    gc.collect()
    assert gone() is None


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)  # a constraint checked only at COMMIT: SQLite's defer_foreign_keys
def test_a_write_the_batchs_commit_refuses_raises_and_the_others_of_its_batch_commit_alone(database: Database) -> None:
    group = GroupCommit(database)
    defer = Prepared(database, text("PRAGMA defer_foreign_keys = ON"))
    # a session of a token that does not exist: refused by the COMMIT, not by the INSERT
    orphan = Prepared(database, text("INSERT INTO console_sessions (id, token_id, csrf, created_at, expires_at) "
                                     "VALUES ('s', 404, 'c', '2030-01-01 00:00:00', '2030-01-02 00:00:00')"))  # fmt: skip

    def add_orphan(transaction: DriverTransaction) -> str:
        transaction.execute(defer, {})
        transaction.execute(orphan, {})
        return "orphan"

    with batch_held_open(group) as hand_in:
        handed = [hand_in(lambda: group.write(_adding(database, "a.example"))), hand_in(lambda: group.write(add_orphan))]
    assert handed[0].result(WAIT_SECONDS) == "a.example"
    with pytest.raises(sqlite3.IntegrityError):
        handed[1].result(WAIT_SECONDS)
    assert group.write(_adding(database, "b.example")) == "b.example"  # no transaction was left open
    assert _hosts(database) == ["a.example", "b.example"]
