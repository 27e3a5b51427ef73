"""Migration 0003 on SQLite and PostgreSQL: host-only credential rows become https origins (port 443
unless given), none becomes plain http, a collision keeps the row written with its port, and down
and up again round-trips."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import text
from tests.real_parts import postgres_url
from tests.scratch import postgres_schema_url

from skillhouse.store.database import MIGRATIONS, Database, open_database

LEGACY = [  # (host as written before origins, header, value)
    ("api.example.com", "authorization", "bare"),
    ("files.example.com:8443", "x-key", "with-port"),
    ("dup.example.com", "authorization", "dup-bare"),
    ("dup.example.com:443", "authorization", "dup-with-port"),
    ("[::1]:8080", "authorization", "v6"),
]


@pytest.fixture(params=["sqlite", "postgresql"])
def unmigrated(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    if request.param == "sqlite":
        database = open_database(f"sqlite:///{tmp_path / 'legacy.db'}", migrate=False)
        yield database
        database.dispose()
        return
    with postgres_schema_url(postgres_url()) as url:
        database = open_database(url, migrate=False)
        yield database
        database.dispose()


def _to(database: Database, revision: str, down: bool = False) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with database.engine.begin() as connection:
        config.attributes["connection"] = connection
        (command.downgrade if down else command.upgrade)(config, revision)


def _rows(database: Database, columns: str) -> set[tuple[object, ...]]:
    with database.engine.connect() as connection:
        return {tuple(row) for row in connection.execute(text(f"SELECT {columns} FROM gateway_credentials"))}


def test_legacy_rows_become_https_origins_and_come_back_down(unmigrated: Database) -> None:
    _to(unmigrated, "0002_gateway")
    now = dt.datetime.now(dt.UTC)
    with unmigrated.engine.begin() as connection:
        for host, header, value in LEGACY:
            connection.execute(
                text("INSERT INTO gateway_credentials (tenant_id, host, header, scheme, value, created_at) "
                     "VALUES ('t', :host, :header, 'bearer', :value, :now)"),
                {"host": host, "header": header, "value": value, "now": now},
            )  # fmt: skip
    _to(unmigrated, "head")
    assert _rows(unmigrated, "host, origin_scheme, port, allow_http, header, value") == {
        ("api.example.com", "https", 443, False, "authorization", "bare"),
        ("files.example.com", "https", 8443, False, "x-key", "with-port"),
        ("dup.example.com", "https", 443, False, "authorization", "dup-with-port"),
        ("::1", "https", 8080, False, "authorization", "v6"),
    }
    _to(unmigrated, "0002_gateway", down=True)
    assert _rows(unmigrated, "host, header, value") == {
        ("api.example.com", "authorization", "bare"),
        ("files.example.com:8443", "x-key", "with-port"),
        ("dup.example.com", "authorization", "dup-with-port"),
        ("[::1]:8080", "authorization", "v6"),
    }
    _to(unmigrated, "head")
    assert len(_rows(unmigrated, "host, origin_scheme, port")) == 4
