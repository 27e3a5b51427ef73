"""``skillhouse tokens create --scope``, ``list`` and ``revoke`` on the store the settings name (SQLite and
PostgreSQL); the tokens it makes are let through the API exactly as far as their scope goes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tests.real_parts import guest_cache, postgres_url
from tests.scratch import postgres_schema_url
from typer.testing import CliRunner

from skillhouse.api import create_app
from skillhouse.cli import app
from skillhouse.settings import Settings
from skillhouse.store import open_database


@pytest.fixture(params=["sqlite", "postgresql"])
def env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    if request.param == "sqlite":
        yield {"SKILLHOUSE_DATABASE_URL": f"sqlite:///{tmp_path / 'skillhouse.db'}", "SKILLHOUSE_DATA_DIR": str(tmp_path)}
        return
    with postgres_schema_url(postgres_url()) as url:
        yield {"SKILLHOUSE_DATABASE_URL": url, "SKILLHOUSE_DATA_DIR": str(tmp_path)}


def create(runner: CliRunner, env: dict[str, str], *options: str) -> str:
    made = runner.invoke(app, ["tokens", "create", "--tenant", "acme", *options], env=env)
    assert made.exit_code == 0, made.stderr
    return made.stdout.strip()


def test_tokens_are_created_run_unless_asked_and_listed_with_their_scope(env: dict[str, str]) -> None:
    runner = CliRunner()
    plain = create(runner, env, "--label", "agent")
    approver = create(runner, env, "--scope", "approve", "--label", "ops")
    admin = create(runner, env, "--scope", "admin", "--label", "deploy")
    assert len({plain, approver, admin}) == 3
    listed = runner.invoke(app, ["tokens", "list", "--tenant", "acme"], env=env)
    rows = [line.split("\t") for line in listed.stdout.splitlines()]
    assert [(row[3], row[4], row[5]) for row in rows] == [("run", "active", "agent"), ("approve", "active", "ops"),
                                                          ("admin", "active", "deploy")]
    assert all(secret not in listed.stdout for secret in (plain, approver, admin))


def test_an_unknown_scope_is_refused_and_nothing_is_made(env: dict[str, str]) -> None:
    runner = CliRunner()
    refused = runner.invoke(app, ["tokens", "create", "--tenant", "acme", "--scope", "root"], env=env)
    assert refused.exit_code == 2 and "invalid-scope" in refused.stderr and refused.stdout == ""
    assert runner.invoke(app, ["tokens", "list"], env=env).stdout == ""


def test_the_api_lets_each_cli_token_as_far_as_its_scope(env: dict[str, str]) -> None:
    runner = CliRunner()
    tokens = {scope: create(runner, env, "--scope", scope) for scope in ("run", "approve", "admin")}
    database = open_database(env["SKILLHOUSE_DATABASE_URL"])
    try:
        client = TestClient(create_app(Settings(data_dir=Path(env["SKILLHOUSE_DATA_DIR"]),
                                                database_url=env["SKILLHOUSE_DATABASE_URL"], guest_cache=guest_cache()),
                                       database))
        statuses = {scope: (client.get("/v1/skills", headers={"Authorization": f"Bearer {secret}"}).status_code,
                            client.post("/v1/approvals/apr_nope/approve", headers={"Authorization": f"Bearer {secret}"}).status_code,
                            client.get("/v1/tokens", headers={"Authorization": f"Bearer {secret}"}).status_code)
                    for scope, secret in tokens.items()}
    finally:
        database.dispose()
    # 404: let through to a decision on an approval that does not exist; 403: refused for the scope
    assert statuses == {"run": (200, 403, 403), "approve": (200, 404, 403), "admin": (200, 404, 200)}
