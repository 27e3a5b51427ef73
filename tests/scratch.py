"""Throwaway databases for tests and benchmarks: a migrated SQLite file or a fresh PostgreSQL schema.

It opens the store the way serve does (:func:`skillhouse.store.open_database`); nothing in ``src`` uses it.

A PostgreSQL run gets its own schema (dropped afterwards) so concurrent test runs on one server
never see each other's rows.

A SQLite file starts as a copy of one this process migrated from empty the first time it needed one
(:func:`migrated_sqlite_file`), then is opened as above (which finds it at head): the migrations,
a few dozen DDL statements each committed to the disk, ran for every test's file and were most of
its setup. Tests of the migrations themselves start from their own empty or old files.
"""

from __future__ import annotations

import atexit
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import create_engine, text

from skillhouse.store.database import Database, open_database, parse_database_url


def _psycopg(url: str) -> str:
    return parse_database_url(url).render_as_string(hide_password=False)


@contextmanager
def postgres_schema_url(base_url: str) -> Iterator[str]:
    """A URL on ``base_url``'s database whose search path is a new, empty schema; dropped at exit."""
    schema = "skh_" + secrets.token_hex(6)
    admin = create_engine(_psycopg(base_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    separator = "&" if "?" in base_url else "?"
    try:
        yield _psycopg(base_url) + f"{separator}options={quote(f'-csearch_path={schema}')}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


_template: Path | None = None


def migrated_sqlite_file(target: Path) -> None:
    """Write at ``target`` a SQLite database migrated to head (a copy of this process's migrated template)."""
    global _template
    if _template is None:
        folder = Path(tempfile.mkdtemp(prefix="skillhouse-sqlite-template-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        open_database(f"sqlite:///{folder / 'template.db'}").dispose()
        # closing the last connection checkpointed the write-ahead log into the file: the file is the database
        assert not (folder / "template.db-wal").exists(), "the template's write-ahead log outlived its engine"
        _template = folder / "template.db"
    shutil.copyfile(_template, target)


@contextmanager
def scratch_database(kind: str, directory: Path, postgres_url: str | None = None) -> Iterator[Database]:
    """A migrated database: ``kind`` is ``sqlite`` (a file in ``directory``) or ``postgresql``."""
    if kind == "sqlite":
        migrated_sqlite_file(directory / "scratch.db")
        database = open_database(f"sqlite:///{directory / 'scratch.db'}")
        try:
            yield database
        finally:
            database.dispose()
        return
    if not postgres_url:
        raise ValueError("a postgresql scratch database needs a server URL")
    with postgres_schema_url(postgres_url) as url:
        database = open_database(url)
        try:
            yield database
        finally:
            database.dispose()
