"""The database: engine construction per dialect, transactional sessions, and migrations at start.

SQLite (the default, a file in the data directory) and PostgreSQL behave alike for the registry
because every rule that matters (unique versions, immutable releases) is a database constraint.
SQLite needs two adjustments: write transactions take the write lock at ``BEGIN`` (``BEGIN
IMMEDIATE``) so two concurrent publishers queue instead of failing on lock upgrade, and foreign
keys are switched on per connection. Reads that write nothing use :meth:`Database.reading`: a
deferred transaction, which in WAL mode takes no lock and runs beside the writer.

Durability. SQLite runs in WAL mode with ``synchronous=NORMAL``: a commit is in the WAL file (the
operating system's page cache) before ``COMMIT`` returns, so it survives the process being killed at
any point, which is what the gateway's guarantees rest on (a key claimed before a request is sent is
still claimed when a killed gateway's retry looks). What it gives up against ``FULL`` is the fsync per
commit: an operating-system crash or power cut may lose the last commits (never corrupt the file).
``FULL`` costs one fsync per commit, serialised behind SQLite's single writer; deployments that must
survive power loss without a resend run PostgreSQL, where every commit is durable unless the caller
asks for :meth:`Database.transaction` with ``durable=False`` (``synchronous_commit = off`` for that
transaction only, for writes whose loss after an OS crash is safe).

Migrations under replicas. Several ``serve`` replicas started at once against one PostgreSQL database
all call :meth:`Database.migrate`; each takes a transaction-scoped advisory lock (keyed on the schema, so
test schemas on one server do not queue behind each other) before Alembic reads the schema's revision,
so the first runs the migrations and the others wait, then find the schema at head and run none. A
replica whose code is older than the schema (the database names a revision this code does not have)
refuses to start with :class:`SchemaAhead` instead of running against tables it does not know.
"""

from __future__ import annotations

import functools
import select
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from psycopg.pq import TransactionStatus
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import PoolProxiedConnection

from skillhouse.errors import Unavailable

_ASYNC_COMMIT = text("SET LOCAL synchronous_commit = off")
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_SECONDS = 30
_READ_ONLY = "skillhouse_read_only"
# an unreachable server fails start-up in seconds rather than after the operating system's TCP timeout
CONNECT_TIMEOUT_SECONDS = 10
# the first key of the two-key advisory lock migrations take ("skhm"); the second is the schema's hash
MIGRATION_LOCK = 0x736B686D
_TAKE_MIGRATION_LOCK = text("SELECT pg_advisory_xact_lock(:lock, hashtext(current_schema()))")
# PostgreSQL: the connections the pool keeps open; as many again may wait in autocommit (Database.autocommit)
POOL_SIZE = 10


class SchemaAhead(Unavailable):
    """The database's schema is at a revision this code does not have (``schema-ahead``): a newer release
    migrated it. Run that release (or newer) on this replica; this one would misread tables it does not know."""

    code = "schema-ahead"


def _refuse_schema_ahead(connection: Any, scripts: ScriptDirectory) -> None:
    known = {script.revision for script in scripts.walk_revisions()}
    for revision in MigrationContext.configure(connection).get_current_heads():
        if revision not in known:
            raise SchemaAhead(f"the database schema is at revision {revision!r}, newer than this skillhouse knows "
                              f"(its newest is {scripts.get_current_head()!r}); run the release that migrated it, or newer")


def _closed_by_server(dbapi_connection: Any) -> bool:
    """Whether an idle PostgreSQL connection is closed or was closed by the server, without a round trip to ask.

    An idle connection has nothing to read unless the server wrote to it unasked: when a backend is
    terminated or the server shuts down it sends its last error and closes the socket. So one ``poll``
    of the socket replaces a liveness ping (a ``SELECT`` round trip per checkout).
    """
    if dbapi_connection.closed or dbapi_connection.broken:
        return True
    poller = select.poll()
    poller.register(dbapi_connection.fileno(), select.POLLIN)
    return bool(poller.poll(0))


def _refuse_closed_by_server(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    """Drop a pooled PostgreSQL connection the server has closed (:func:`_closed_by_server`): raising
    ``DisconnectionError`` makes the pool discard the connection and check out (or open) another."""
    if _closed_by_server(dbapi_connection):
        raise DisconnectionError("the connection is closed, or the server wrote to it while idle (closed or terminated it)")


def parse_database_url(url: str) -> URL:
    """``url`` as SQLAlchemy takes it: ``postgres://`` (how hosting providers and libpq spell it) and
    ``postgresql://`` both mean PostgreSQL through psycopg 3. Raises ``ArgumentError`` when it does not parse."""
    parsed = make_url(url)
    backend, _, driver = parsed.drivername.partition("+")
    if backend in ("postgres", "postgresql"):
        parsed = parsed.set(drivername=f"postgresql+{driver or 'psycopg'}")
    return parsed


def _engine_for(url: str) -> Engine:
    parsed = parse_database_url(url)
    if parsed.get_backend_name() == "postgresql":
        timeout = {} if "connect_timeout" in parsed.query else {"connect_timeout": CONNECT_TIMEOUT_SECONDS}
        # the pool holds one connection per concurrent transaction; none is held across an upstream call
        engine = create_engine(parsed, pool_size=POOL_SIZE, max_overflow=20, connect_args=timeout)
        event.listen(engine, "checkout", _refuse_closed_by_server)
        return engine
    if parsed.get_backend_name() != "sqlite":
        raise ValueError(f"unsupported database URL {parsed.render_as_string(hide_password=True)!r}: use sqlite or postgresql")
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(parsed, connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_SECONDS})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # take transaction control away from pysqlite so BEGIN IMMEDIATE below is the only BEGIN
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")  # see the module docstring: survives a killed process
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_SECONDS * 1000}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        deferred = connection.get_execution_options().get(_READ_ONLY, False)
        connection.exec_driver_sql("BEGIN" if deferred else "BEGIN IMMEDIATE")

    return engine


class Database:
    """One engine and its session factory; ``transaction()`` is the unit of work."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = _engine_for(url)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._readers = sessionmaker(self.engine.execution_options(**{_READ_ONLY: True}), expire_on_commit=False)
        self._postgres = self.dialect == "postgresql"
        self._autocommit_idle: list[PoolProxiedConnection] = []
        """Connections checked out of the pool and left in autocommit between statements (LIFO)."""

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def migrate(self) -> None:
        """Apply every Alembic migration up to head (idempotent; once across replicas starting together).

        Raises :class:`SchemaAhead` when the database is at a revision newer than this code's.
        """
        config = _alembic_config()
        with self.engine.begin() as connection:
            if self.dialect == "postgresql":
                # held until this transaction (which runs every migration) commits or rolls back
                connection.execute(_TAKE_MIGRATION_LOCK, {"lock": MIGRATION_LOCK})
            _refuse_schema_ahead(connection, ScriptDirectory.from_config(config))
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    @contextmanager
    def transaction(self, durable: bool = True) -> Iterator[Session]:
        """A session whose work commits when the block ends and rolls back if it raises.

        ``durable=False`` lets PostgreSQL acknowledge the commit before its WAL reaches the disk: the
        write survives a killed process but may be lost in an OS crash. Only for writes whose loss
        then is safe; on SQLite every commit already has that durability (see the module docstring).
        """
        with self.sessions() as session, session.begin():
            if not durable and self.dialect == "postgresql":
                session.execute(_ASYNC_COMMIT)
            yield session

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """A session for reads only: on SQLite a deferred transaction that waits for no writer."""
        with self._readers() as session, session.begin():
            yield session

    def schema_is_current(self) -> bool:
        """Whether the database answers and carries every migration this code knows (``/readyz``); raises
        the driver's error when the database does not answer."""
        with self.engine.connect() as connection:
            current = set(MigrationContext.configure(connection).get_current_heads())
        return current == _head_revisions()

    def take_autocommit(self) -> PoolProxiedConnection:
        """A pooled connection (SQLAlchemy's ``PoolProxiedConnection``) in autocommit, for statements that
        each commit by themselves; hand it back with :meth:`give_back_autocommit`. On SQLite every connection
        is (the driver's own transaction handling is off: a transaction is an explicit ``BEGIN IMMEDIATE``),
        so a write transaction takes one too.

        The per-request statements of the gateway run so (``store/prepared.py``). Checking a connection
        out of the pool and back costs more of the process's CPU than the driver spends running one of
        them (the pool's queue and locks, its events, its reset, and switching autocommit on and off),
        so connections handed back stay checked out, in autocommit, up to :data:`POOL_SIZE` of them,
        and the next statement takes the last one handed back. They still count against the pool's
        limit, so the database sees no more connections than before; a PostgreSQL one the server closed
        while it waited is found as the pool finds it (:func:`_closed_by_server`) and dropped (a SQLite one
        has no server to close it).
        """
        idle = self._autocommit_idle
        while idle:
            try:
                connection = idle.pop()
            except IndexError:  # another thread took the last one
                break
            driver = connection.driver_connection
            if driver is not None and not (self._postgres and _closed_by_server(driver)):
                return connection
            connection.invalidate()
            connection.close()
        connection = self.engine.raw_connection()
        if connection.driver_connection is None:  # only once invalidated, and this one was just checked out
            raise RuntimeError("a connection just checked out of the pool has no driver connection")
        if self._postgres:
            connection.driver_connection.autocommit = True
        return connection

    def give_back_autocommit(self, connection: PoolProxiedConnection) -> None:
        """Keep ``connection`` (from :meth:`take_autocommit`) for the next statement, or return it to the pool
        (out of autocommit, as the pool's other users expect it) when enough wait already; one invalidated
        or left in a transaction goes back to the pool, which discards or resets it."""
        if len(self._autocommit_idle) < POOL_SIZE and self._between_transactions(connection.driver_connection):
            self._autocommit_idle.append(connection)
        else:
            _to_pool(connection, self._postgres)

    def _between_transactions(self, driver: Any) -> bool:
        """Whether a driver connection is open and in no transaction (``None``: it was invalidated)."""
        if driver is None:
            return False
        if self._postgres:
            return not driver.closed and driver.info.transaction_status == TransactionStatus.IDLE
        return not driver.in_transaction

    def dispose(self) -> None:
        while self._autocommit_idle:
            _to_pool(self._autocommit_idle.pop(), self._postgres)
        self.engine.dispose()


def _to_pool(connection: PoolProxiedConnection, postgres: bool) -> None:
    """Return a connection of :meth:`Database.take_autocommit` to the pool, a PostgreSQL one out of autocommit."""
    driver = connection.driver_connection
    if postgres and driver is not None and not driver.closed:
        driver.autocommit = False
    connection.close()


def _alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


@functools.cache
def _head_revisions() -> frozenset[str]:
    return frozenset(ScriptDirectory.from_config(_alembic_config()).get_heads())


def open_database(url: str, migrate: bool = True) -> Database:
    """The database at ``url``, migrated to head unless ``migrate`` is false."""
    database = Database(url)
    if migrate:
        database.migrate()
    return database
