"""Migration ``0004_token_scopes``: tokens made before scopes become ``admin`` (nothing running breaks),
new rows must name a scope, and the database refuses a scope that is not one of the three."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from tests.real_parts import postgres_url
from tests.scratch import postgres_schema_url

from skillhouse.registry.tokens import authenticate, hash_token
from skillhouse.store.database import MIGRATIONS, Database

OLD_SECRET = "skh_" + "o" * 43


@pytest.fixture(params=["sqlite", "postgresql"])
def unmigrated(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    if request.param == "sqlite":
        database = Database(f"sqlite:///{tmp_path / 'old.db'}")
        yield database
        database.dispose()
        return
    with postgres_schema_url(postgres_url()) as url:
        database = Database(url)
        yield database
        database.dispose()


def upgrade_to(database: Database, revision: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with database.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def test_a_token_from_before_scopes_becomes_admin_and_still_works(unmigrated: Database) -> None:
    upgrade_to(unmigrated, "0002_gateway")
    with unmigrated.engine.begin() as connection:
        connection.execute(text("INSERT INTO tenants (id, created_at) VALUES ('acme', CURRENT_TIMESTAMP)"))
        connection.execute(text("INSERT INTO api_tokens (tenant_id, token_hash, hint, label, created_at) "
                                "VALUES ('acme', :hash, 'skh_oooooo', 'old', CURRENT_TIMESTAMP)"), {"hash": hash_token(OLD_SECRET)})
    unmigrated.migrate()
    with unmigrated.transaction() as session:
        tenant = authenticate(session, OLD_SECRET)
    assert (tenant.id, tenant.scope) == ("acme", "admin")


@pytest.mark.parametrize("scope", [None, "root"])
def test_after_the_migration_a_token_row_needs_one_of_the_three_scopes(unmigrated: Database, scope: str | None) -> None:
    unmigrated.migrate()
    columns, values = ("", "") if scope is None else (", scope", ", :scope")
    with unmigrated.engine.begin() as connection:
        connection.execute(text("INSERT INTO tenants (id, created_at) VALUES ('acme', CURRENT_TIMESTAMP)"))
    with pytest.raises(IntegrityError), unmigrated.engine.begin() as connection:
        connection.execute(text(f"INSERT INTO api_tokens (tenant_id, token_hash, hint, label, created_at{columns}) "
                                f"VALUES ('acme', 'h', 'skh_x', '', CURRENT_TIMESTAMP{values})"), {"scope": scope})
