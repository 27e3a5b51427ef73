"""Migration ``0008_rate_limits``: its tables come and go with it, and a limit row without a rate or a concurrency
is refused by the database itself."""

from __future__ import annotations

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError
from tests.store.test_token_scope_migration import unmigrated, upgrade_to  # noqa: F401 - the fixture

from skillhouse.store.database import MIGRATIONS, Database

TABLES = {"gateway_rate_limits", "gateway_call_leases", "gateway_upstream_waits"}


def test_the_tables_come_and_go_with_the_migration_and_a_limit_must_limit_something(unmigrated: Database) -> None:  # noqa: F811
    upgrade_to(unmigrated, "0007_oauth_tokens")
    assert TABLES.isdisjoint(inspect(unmigrated.engine).get_table_names())
    unmigrated.migrate()
    assert set(inspect(unmigrated.engine).get_table_names()) >= TABLES
    with pytest.raises(IntegrityError), unmigrated.engine.begin() as connection:
        connection.execute(text("INSERT INTO gateway_rate_limits (tenant_id, scope, subject, tat, updated_at) "
                                "VALUES ('acme', 'tenant', '', 0, 0)"))
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with unmigrated.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0007_oauth_tokens")
    assert TABLES.isdisjoint(inspect(unmigrated.engine).get_table_names())
