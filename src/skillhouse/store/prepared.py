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
lock at all); on PostgreSQL a write that is a single statement may run as :func:`one_statement`, its
own transaction, one round trip instead of three. Autocommit statements, and on SQLite (whose connections
are all in autocommit) write transactions too, take a connection kept out of the pool, already in
autocommit (:meth:`~skillhouse.store.database.Database.take_autocommit`). Values are what the drivers take as they are (strings, numbers, None); a JSON column is
written as its text (see :func:`json_text`) and read back with :func:`json_value`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from operator import itemgetter
from typing import Any, TypeVar, cast

from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

from skillhouse.store.database import Database

T = TypeVar("T")
_ASYNC_COMMIT = "SET LOCAL synchronous_commit = off"


class Prepared:
    """One statement's SQL for one dialect, and how to lay out its parameters for the driver."""

    def __init__(self, database: Database, statement: ClauseElement) -> None:
        dialect = database.engine.dialect
        compiled = cast(SQLCompiler, statement.compile(dialect=dialect))
        self.sql = compiled.string
        # values the statement carries itself (``state == 'running'``); named bindparams come per call
        self.fixed = {name: value for name, value in compiled.params.items() if value is not None}
        self.names: tuple[str, ...] | None = None
        self._pick: Callable[[Mapping[str, Any]], tuple[Any, ...]] | None = None
        if dialect.positional:
            self.names = tuple(compiled.positiontup or ())
            # one C call per statement instead of a generator over its names (SQLite runs several per request)
            self._pick = _picker(self.names)

    def parameters(self, values: Mapping[str, Any]) -> tuple[Any, ...] | Mapping[str, Any]:
        merged = {**self.fixed, **values} if self.fixed else values
        if self._pick is None:
            return merged
        return self._pick(merged)


def _picker(names: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """The values of ``names`` in order, as a tuple (``itemgetter`` gives a bare value for one name)."""
    if not names:
        return lambda _: ()
    if len(names) == 1:
        (name,) = names
        return lambda values: (values[name],)
    return cast(Callable[[Mapping[str, Any]], tuple[Any, ...]], itemgetter(*names))


class Pending:
    """A statement's result, read when the caller wants it (its rows are fetched when it has run)."""

    __slots__ = ("_rows", "count")

    def __init__(self, cursor: Any, returned_rows: bool) -> None:
        # read now: on SQLite a statement still being stepped would hold up the COMMIT
        self._rows = [tuple(row) for row in cursor.fetchall()] if returned_rows else []
        self.count = int(cursor.rowcount)
        """The number of rows the statement changed."""

    def rows(self) -> list[tuple[Any, ...]]:
        return self._rows

    def first(self) -> tuple[Any, ...] | None:
        return self._rows[0] if self._rows else None


class DriverTransaction:
    """Statements on one checked-out DBAPI connection, inside :func:`writing` or :func:`read`."""

    def __init__(self, connection: Any, postgres: bool) -> None:
        self._connection = connection
        self._postgres = postgres

    def send(self, statement: Prepared, values: Mapping[str, Any]) -> Pending:
        cursor = self._connection.cursor()
        cursor.execute(statement.sql, statement.parameters(values))
        # psycopg builds a Column object per column for ``description``: ``rownumber`` says as much for less
        returned_rows = cursor.rownumber is not None if self._postgres else cursor.description is not None
        return Pending(cursor, returned_rows)

    def execute(self, statement: Prepared, values: Mapping[str, Any]) -> int:
        """Run a statement; the number of rows it changed."""
        return self.send(statement, values).count

    def rows(self, statement: Prepared, values: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        return self.send(statement, values).rows()

    def first(self, statement: Prepared, values: Mapping[str, Any]) -> tuple[Any, ...] | None:
        return self.send(statement, values).first()


def _driver_of(connection: Any) -> Any:
    """The DBAPI connection (sqlite3 or psycopg) under a pooled one; SQLAlchemy types it ``Any | None``, and
    ``None`` only once the pooled connection was invalidated, which these functions do last."""
    driver = connection.driver_connection
    if driver is None:
        raise RuntimeError("the pooled connection has no driver connection (it was invalidated)")
    return driver


def _forget_if_lost(database: Database, connection: Any, error: BaseException) -> bool:
    """Whether ``error`` means the server connection is gone; if so it is dropped, not pooled again."""
    driver = connection.driver_connection
    dialect = database.engine.dialect
    if isinstance(error, dialect.loaded_dbapi.Error) and dialect.is_disconnect(error, driver, None):
        connection.invalidate(error)
        return True
    return False


@contextmanager
def writing(database: Database, durable: bool = True) -> Iterator[DriverTransaction]:
    """One write transaction: committed when the block ends, rolled back if it raises.

    A connection found lost is dropped from the pool and the error raised: a write is never retried
    here, since whether its ``COMMIT`` reached the server is unknown. On SQLite the connection is one kept
    in autocommit (:meth:`~skillhouse.store.database.Database.take_autocommit`), its transaction an explicit
    ``BEGIN IMMEDIATE``; on PostgreSQL one of the pool's, in the driver's own transaction.
    """
    sqlite = database.dialect == "sqlite"
    connection = database.take_autocommit() if sqlite else database.engine.raw_connection()
    driver = _driver_of(connection)
    try:
        cursor = driver.cursor()
        if sqlite:
            cursor.execute("BEGIN IMMEDIATE")
        elif not durable:
            cursor.execute(_ASYNC_COMMIT)
        try:
            yield DriverTransaction(driver, not sqlite)
        except BaseException as error:
            if not _forget_if_lost(database, connection, error):
                cursor.execute("ROLLBACK") if sqlite else driver.rollback()
            raise
        try:
            cursor.execute("COMMIT") if sqlite else driver.commit()
        except BaseException as error:
            _forget_if_lost(database, connection, error)
            raise
    finally:
        # kept for the next statement, or back to the pool (a dropped one is discarded)
        database.give_back_autocommit(connection) if sqlite else connection.close()


@contextmanager
def _autocommit(database: Database) -> Iterator[DriverTransaction]:
    """A connection whose statements each commit by themselves (no ``BEGIN``): one kept in autocommit
    between statements (:meth:`~skillhouse.store.database.Database.take_autocommit`)."""
    connection = database.take_autocommit()
    try:
        yield DriverTransaction(_driver_of(connection), postgres=database.dialect == "postgresql")
    except BaseException as error:
        _forget_if_lost(database, connection, error)
        raise
    finally:
        database.give_back_autocommit(connection)


@contextmanager
def reading(database: Database) -> Iterator[DriverTransaction]:
    """Reads in autocommit: no ``BEGIN``/``COMMIT`` round trips, no lock taken.

    Prefer :func:`read`, which also survives a connection the server closed.
    """
    with _autocommit(database) as transaction:
        yield transaction


@contextmanager
def one_statement(database: Database) -> Iterator[DriverTransaction]:
    """PostgreSQL only: a write that is one statement, its own transaction, committed when it returns.

    One round trip instead of ``BEGIN``, the statement and ``COMMIT``; the commit is synchronous unless
    the statement itself says otherwise. Like :func:`writing`, never retried: a lost connection is
    dropped from the pool and the error raised.
    """
    if database.dialect != "postgresql":
        raise ValueError("one_statement needs PostgreSQL: on SQLite a write takes its lock with BEGIN IMMEDIATE")
    with _autocommit(database) as transaction:
        yield transaction


def read(database: Database, work: Callable[[DriverTransaction], T]) -> T:
    """``work``'s reads on one pooled connection; once more on a new one after an operational error.

    Reads change nothing, so running them again is always safe. A connection the server closed while
    it sat in the pool is caught before use (see ``store/database.py``); this covers one closed between
    that check and the read (the lost connection has been dropped from the pool by then).
    """
    try:
        with reading(database) as transaction:
            return work(transaction)
    except database.engine.dialect.loaded_dbapi.OperationalError:
        pass
    with reading(database) as transaction:
        return work(transaction)


def json_text(value: Any) -> str | None:
    """A JSON column's value as the text both drivers store (``None`` stays SQL NULL)."""
    return None if value is None else json.dumps(value, separators=(",", ":"))


def json_value(stored: Any) -> Any:
    """A JSON column as read: psycopg has already parsed it, sqlite3 gives its text."""
    return json.loads(stored) if isinstance(stored, str | bytes) else stored
