"""Migration ``0009_oauth_connections``: the connection tables, the binding kind and the turns' subject come and
go with it; going down forgets the authorization-code bindings, which the older schema cannot hold."""

from __future__ import annotations

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError
from tests.store.test_token_scope_migration import unmigrated, upgrade_to  # noqa: F401 - the fixture

from skillhouse.store.database import MIGRATIONS, Database

TABLES = {"gateway_oauth_connections", "gateway_oauth_pending"}
BINDING = ("INSERT INTO gateway_credentials (tenant_id, host, origin_scheme, port, allow_http, header, scheme, value, "
           "created_at) "
           "VALUES ('acme', 'api.example.com', 'https', 443, false, 'authorization', 'oauth2-authorization-code', 'x', "
           "CURRENT_TIMESTAMP)")


def test_the_connection_tables_the_kind_and_the_subject_come_and_go_with_the_migration(unmigrated: Database) -> None:  # noqa: F811
    upgrade_to(unmigrated, "0008_rate_limits")
    assert TABLES.isdisjoint(inspect(unmigrated.engine).get_table_names())
    with pytest.raises(IntegrityError), unmigrated.engine.begin() as connection:
        connection.execute(text(BINDING))
    unmigrated.migrate()
    assert set(inspect(unmigrated.engine).get_table_names()) >= TABLES
    assert "subject" in {c["name"] for c in inspect(unmigrated.engine).get_columns("gateway_turns")}
    with unmigrated.engine.begin() as connection:
        connection.execute(text(BINDING))
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with unmigrated.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0008_rate_limits")
    assert TABLES.isdisjoint(inspect(unmigrated.engine).get_table_names())
    assert "subject" not in {c["name"] for c in inspect(unmigrated.engine).get_columns("gateway_turns")}
    with unmigrated.engine.begin() as connection:
        assert connection.execute(text("SELECT count(*) FROM gateway_credentials")).scalar() == 0
