"""``skillhouse keys list|clear|clearings`` on the store the settings name (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from tests.gateway.conftest import drop_postgres_database, fresh_postgres_database
from tests.gateway.hostile_upstream import Hostile
from tests.gateway.wire import fetch_json
from typer.testing import CliRunner

from skillhouse.cli import app
from skillhouse.compiler import compile_dir
from skillhouse.gateway import BoundReleases, Gateway, GatewayConfig, TurnContext
from skillhouse.store import open_database

HOLLOWBROOK = Path(__file__).resolve().parents[2] / "examples" / "hollowbrook"
BOOKING = {"method": "POST", "url": "http://hollowbrook.local:8084/bookings", "headers": {"Content-Type": "application/json"},
           "body": json.dumps({"arrival": "2030-05-01", "departure": "2030-05-03", "guest_name": "Ada", "room_id": 2})}


@pytest.fixture(params=["sqlite", "postgresql"])
def env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    base = {"SKILLHOUSE_DATA_DIR": str(tmp_path), "SKILLHOUSE_SECRET_KEY": Fernet.generate_key().decode()}
    if request.param == "sqlite":
        yield {**base, "SKILLHOUSE_DATABASE_URL": f"sqlite:///{tmp_path / 'skillhouse.db'}"}
        return
    url, name = fresh_postgres_database()
    try:
        yield {**base, "SKILLHOUSE_DATABASE_URL": url}
    finally:
        drop_postgres_database(name)


def book(env: dict[str, str], hostile: Hostile) -> dict[str, object]:
    compiled, _ = compile_dir(HOLLOWBROOK)
    assert compiled is not None
    database = open_database(env["SKILLHOUSE_DATABASE_URL"])
    gateway = Gateway(database, GatewayConfig(resolve={("hollowbrook.local", 8084): f"127.0.0.1:{hostile.port}"}))
    try:
        answer: dict[str, object] = fetch_json(gateway, TurnContext("acme", "turn-cli", BoundReleases([compiled.document])), BOOKING)
        return answer
    finally:
        gateway.close()
        database.dispose()


def test_an_unresolved_key_is_listed_and_cleared_once_by_a_named_person(env: dict[str, str]) -> None:
    runner = CliRunner()
    with Hostile("close") as hostile:
        error = book(env, hostile)["error"]
        assert isinstance(error, dict) and error["code"] == "upstream-unresolved"
        key = error["idempotency_key"]
        listed = runner.invoke(app, ["keys", "list", "--tenant", "acme", "--state", "unresolved"], env=env)
        assert listed.exit_code == 0 and listed.stdout.startswith(f"{key}\tunresolved\thollowbrook.create_booking\t")
        other = runner.invoke(app, ["keys", "clear", key, "--tenant", "globex"], env=env)
        assert other.exit_code == 1 and "idempotency-key-not-found" in other.stderr
        cleared = runner.invoke(app, ["keys", "clear", key, "--tenant", "acme", "--by", "alice"], env=env)
        assert cleared.exit_code == 0, cleared.stderr
        assert runner.invoke(app, ["keys", "list", "--tenant", "acme", "--state", "unresolved"], env=env).stdout == ""
        audit = runner.invoke(app, ["keys", "clearings", "--tenant", "acme"], env=env).stdout
        assert audit.startswith(f"{key}\thollowbrook.create_booking\tcli: alice\t")
        hostile.mode = "ok"
        assert book(env, hostile)["status"] == 201  # cleared: the same request runs again
        assert len(hostile.requests) == 2 and len(hostile.bookings) == 1
        done = runner.invoke(app, ["keys", "clear", key, "--tenant", "acme"], env=env)
        assert done.exit_code == 1 and "idempotency-key-not-unresolved" in done.stderr
    assert runner.invoke(app, ["keys", "list", "--tenant", "acme", "--state", "lost"], env=env).exit_code == 1
