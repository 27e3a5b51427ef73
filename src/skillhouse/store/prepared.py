"""Statements compiled once and run on the driver's own connection: the gateway's per-request SQL.

The gateway runs a handful of small statements on every request. Through an ORM session each costs
about 150 µs of Python on SQLite (statement construction, session and connection events, compiled-cache
lookup, result processing) against about 10 µs for the driver itself, and the process is CPU-bound long
before the database is (bench/bench_gateway.py). So these statements are built with SQLAlchemy from the
table definitions, compiled once by the engine's own dialect (the SQL text SQLAlchemy would send, with
PostgreSQL's bind casts), and executed on a pooled DBAPI connection.

Transactions follow ``store/database.py``: a write takes SQLite's write lock at ``BEGIN IMMEDIATE`` and
is durable as configured there (``durable=False`` is ``synchronous_commit = off`` on PostgreSQL for that
transaction only); reads run in autocommit (each statement its own snapshot; on SQLite in WAL mode no
lock at all). Values are what the drivers take as they are (strings, numbers, None); a JSON column is
written as its text (see :func:`json_text`) and read back with :func:`json_value`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

from skillhouse.store.database import Database


class Prepared:
    """One statement's SQL for one dialect, and how to lay out its parameters for the driver."""

    def __init__(self, database: Database, statement: ClauseElement) -> None:
        dialect = database.engine.dialect
        compiled = cast(SQLCompiler, statement.compile(dialect=dialect))
        self.sql = compiled.string
        # values the statement carries itself (``state == 'running'``); named bindparams come per call
        self.fixed = {name: value for name, value in compiled.params.items() if value is not None}
        self.names: tuple[str, ...] | None = None
        if dialect.positional:
            self.names = tuple(compiled.positiontup or ())

    def parameters(self, values: Mapping[str, Any]) -> tuple[Any, ...] | Mapping[str, Any]:
        merged = {**self.fixed, **values} if self.fixed else values
        if self.names is None:
            return merged
        return tuple(merged[name] for name in self.names)


class DriverTransaction:
    """Statements on one checked-out DBAPI connection, inside :func:`writing` or :func:`reading`."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def execute(self, statement: Prepared, values: Mapping[str, Any]) -> int:
        """Run a statement; the number of rows it changed."""
        self._cursor.execute(statement.sql, statement.parameters(values))
        return int(self._cursor.rowcount)

    def rows(self, statement: Prepared, values: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        self._cursor.execute(statement.sql, statement.parameters(values))
        return list(self._cursor.fetchall())

    def first(self, statement: Prepared, values: Mapping[str, Any]) -> tuple[Any, ...] | None:
        self._cursor.execute(statement.sql, statement.parameters(values))
        row = self._cursor.fetchone()
        return None if row is None else tuple(row)


@contextmanager
def writing(database: Database, durable: bool = True) -> Iterator[DriverTransaction]:
    """One write transaction: committed when the block ends, rolled back if it raises."""
    connection = database.engine.raw_connection()
    sqlite = database.dialect == "sqlite"
    try:
        cursor = connection.cursor()
        if sqlite:
            cursor.execute("BEGIN IMMEDIATE")
        elif not durable:
            cursor.execute("SET LOCAL synchronous_commit = off")
        try:
            yield DriverTransaction(cursor)
        except BaseException:
            cursor.execute("ROLLBACK") if sqlite else connection.rollback()
            raise
        cursor.execute("COMMIT") if sqlite else connection.commit()
        cursor.close()
    finally:
        connection.close()  # back to the pool


@contextmanager
def reading(database: Database) -> Iterator[DriverTransaction]:
    """Reads in autocommit: no ``BEGIN``/``COMMIT`` round trips, no lock taken."""
    connection = database.engine.raw_connection()
    driver = connection.driver_connection
    postgres = database.dialect == "postgresql"
    try:
        if postgres:
            driver.autocommit = True  # type: ignore[union-attr]
        cursor = connection.cursor()
        yield DriverTransaction(cursor)
        cursor.close()
    finally:
        if postgres and not driver.closed:  # type: ignore[union-attr]
            driver.autocommit = False  # type: ignore[union-attr]
        connection.close()


def json_text(value: Any) -> str | None:
    """A JSON column's value as the text both drivers store (``None`` stays SQL NULL)."""
    return None if value is None else json.dumps(value, separators=(",", ":"))


def json_value(stored: Any) -> Any:
    """A JSON column as read: psycopg has already parsed it, sqlite3 gives its text."""
    return json.loads(stored) if isinstance(stored, str | bytes) else stored
