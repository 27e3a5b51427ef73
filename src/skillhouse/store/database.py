"""The database: engine construction per dialect, transactional sessions, and migrations at start.

SQLite (the default, a file in the data directory) and PostgreSQL behave alike for the registry
because every rule that matters (unique versions, immutable releases) is a database constraint.
SQLite needs two adjustments: write transactions take the write lock at ``BEGIN`` (``BEGIN
IMMEDIATE``) so two concurrent publishers queue instead of failing on lock upgrade, and foreign
keys are switched on per connection.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_SECONDS = 30


def _engine_for(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        if parsed.drivername == "postgresql":
            parsed = parsed.set(drivername="postgresql+psycopg")
        return create_engine(parsed, pool_pre_ping=True, pool_size=10, max_overflow=20)
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
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_SECONDS * 1000}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


class Database:
    """One engine and its session factory; ``transaction()`` is the unit of work."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = _engine_for(url)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def migrate(self) -> None:
        """Apply every Alembic migration up to head (idempotent)."""
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A session whose work commits when the block ends and rolls back if it raises."""
        with self.sessions() as session, session.begin():
            yield session

    def dispose(self) -> None:
        self.engine.dispose()


def open_database(url: str, migrate: bool = True) -> Database:
    """The database at ``url``, migrated to head unless ``migrate`` is false."""
    database = Database(url)
    if migrate:
        database.migrate()
    return database
