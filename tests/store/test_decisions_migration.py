"""Migration ``0006_decisions_on_record``: approvals and audit rows from before it keep every value and read
as decided by nobody in particular (no reason, no actor); the migration also goes back down."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from sqlalchemy import text
from tests.store.test_token_scope_migration import unmigrated, upgrade_to  # noqa: F401 - the fixture

from skillhouse.gateway import ApprovalStore
from skillhouse.gateway.audit_queries import AuditFilter, audit_rows
from skillhouse.store.database import MIGRATIONS, Database


def test_rows_from_before_keep_their_values_and_the_migration_goes_down(unmigrated: Database) -> None:  # noqa: F811
    upgrade_to(unmigrated, "0005_key_clearings")
    with unmigrated.engine.begin() as connection:
        connection.execute(text(
            "INSERT INTO gateway_approvals (id, tenant_id, turn_id, operation, reason, canonical, commitment, state, "
            "created_at, expires_at, decided_at, decided_by) VALUES ('apr_old', 'acme', 't1', 'shop.buy', '', "
            "'{\"method\": \"POST\", \"url\": \"https://shop.example/buy\", \"headers\": {}, \"body\": null}', "
            "'sha256:00', 'denied', 1, 9999999999, 2, 'api, token #1')"))
        connection.execute(text("INSERT INTO gateway_audit (at, tenant_id, turn_id, method, host, path, decision, approval_id) "
                                "VALUES (1, 'acme', 't1', 'POST', 'shop.example', '/buy', 'held', 'apr_old')"))
    unmigrated.migrate()
    approval = ApprovalStore(unmigrated).get("acme", "apr_old")
    assert (approval.state, approval.decided_by, approval.decided_at, approval.note) == ("denied", "api, token #1", 2.0, None)
    [row] = audit_rows(unmigrated, "acme", AuditFilter(approval="apr_old"))
    assert (row.decision, row.actor) == ("held", None)

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with unmigrated.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0005_key_clearings")
        assert connection.execute(text("SELECT decided_by FROM gateway_approvals")).scalar_one() == "api, token #1"
