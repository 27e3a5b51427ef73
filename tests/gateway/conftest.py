"""Gateway fixtures: a recording upstream on loopback, a migrated database (SQLite, or a fresh
PostgreSQL database, see tests/real_parts.py), the Hollowbrook release, a gateway."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from cryptography.fernet import Fernet
from sqlalchemy.engine import make_url
from tests.gateway.upstream_server import Upstream
from tests.real_parts import postgres_url
from tests.scratch import migrated_sqlite_file

from skillhouse.compiler import compile_dir
from skillhouse.gateway import BoundReleases, Gateway, GatewayConfig, TurnContext
from skillhouse.store.database import Database, open_database

HOLLOWBROOK = Path(__file__).resolve().parents[2] / "examples" / "hollowbrook"
SECRET_KEY = Fernet.generate_key().decode()


def fresh_postgres_database(template: str | None = None) -> tuple[str, str]:
    """Create a database on the test server, empty or a copy of ``template``; returns (its SQLAlchemy URL, its name)."""
    server = postgres_url()
    name = f"skh_gw_{uuid.uuid4().hex[:12]}"
    admin = make_url(server).set(drivername="postgresql")
    with psycopg.connect(admin.render_as_string(hide_password=False), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    return make_url(server).set(database=name).render_as_string(hide_password=False), name


def drop_postgres_database(name: str) -> None:
    admin = make_url(postgres_url()).set(drivername="postgresql")
    with psycopg.connect(admin.render_as_string(hide_password=False), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def migrated_postgres_template() -> Iterator[str]:
    """A database migrated to head once per run, which the ``database`` fixture's databases are copied from
    (``CREATE DATABASE ... TEMPLATE``) instead of each running every migration; its name."""
    url, name = fresh_postgres_database()
    open_database(url).dispose()  # no connection left to it: a database being copied must have none
    yield name
    drop_postgres_database(name)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'skillhouse.db'}"
        return
    # empty unless the test opens it through ``database`` below, which would migrate it to head anyway
    template = request.getfixturevalue("migrated_postgres_template") if "database" in request.fixturenames else None
    url, name = fresh_postgres_database(template)
    try:
        yield url
    finally:
        drop_postgres_database(name)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'skillhouse.db'}"


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    if database_url.startswith("sqlite:///"):
        migrated_sqlite_file(Path(database_url.removeprefix("sqlite:///")))  # see tests/scratch.py
    db = open_database(database_url)
    yield db
    db.dispose()


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture(scope="session")
def hollowbrook_release() -> dict[str, Any]:
    compiled, errors = compile_dir(HOLLOWBROOK)
    assert compiled is not None, errors
    return compiled.document


def gateway_for(database: Database, upstream: Upstream, **config: Any) -> Gateway:
    resolve = {("hollowbrook.local", 8084): f"127.0.0.1:{upstream.port}"}
    return Gateway(database, GatewayConfig(resolve=resolve, **config), secret_key=SECRET_KEY)


@pytest.fixture
def gateway(database: Database, upstream: Upstream) -> Iterator[Gateway]:
    gw = gateway_for(database, upstream)
    yield gw
    gw.close()


@pytest.fixture
def turn(hollowbrook_release: dict[str, Any]) -> TurnContext:
    return TurnContext("tenant-a", "turn-1", BoundReleases([hollowbrook_release]))


def booking_request(guest: str = "Ada", note: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"arrival": "2030-05-01", "departure": "2030-05-03", "guest_name": guest, "room_id": 2}
    if note is not None:
        body["note"] = note
    return {
        "method": "POST",
        "url": "http://hollowbrook.local:8084/bookings",
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body, sort_keys=True),
    }
