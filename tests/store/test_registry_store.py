"""The registry's rules held by the database itself, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from skillhouse.store import Database
from skillhouse.store.registry_tables import ReleaseRow, SkillVersionRow, TenantRow


def _seed(database: Database) -> None:
    with database.transaction() as session:
        session.add(TenantRow(id="acme"))
        session.flush()
        session.add(SkillVersionRow(tenant_id="acme", skill="shop", version="1", state="published", source="package",
                                    files={"SKILL.md": "x"}, content_digest="sha256:aa", report={"ok": True, "errors": []}))
        session.add(ReleaseRow(tenant_id="acme", skill="shop", version="1", digest="sha256:aa", document="{}",
                               files={"SKILL.md": "x"}))


def test_a_release_row_cannot_be_updated(database: Database) -> None:
    _seed(database)
    with pytest.raises(IntegrityError), database.transaction() as session:
        session.execute(text("UPDATE releases SET document = '{\"changed\": true}'"))


def test_a_release_row_cannot_be_deleted(database: Database) -> None:
    _seed(database)
    with pytest.raises(IntegrityError), database.transaction() as session:
        session.execute(text("DELETE FROM releases"))


def test_a_second_release_of_one_version_is_refused(database: Database) -> None:
    _seed(database)
    with pytest.raises(IntegrityError), database.transaction() as session:
        session.add(ReleaseRow(tenant_id="acme", skill="shop", version="1", digest="sha256:bb", document="{}", files={}))


def test_one_digest_is_one_release_per_tenant(database: Database) -> None:
    _seed(database)
    with pytest.raises(IntegrityError), database.transaction() as session:
        session.add(ReleaseRow(tenant_id="acme", skill="shop", version="2", digest="sha256:aa", document="{}", files={}))


def test_a_published_version_keeps_its_content_and_cannot_go_back_to_draft(database: Database) -> None:
    _seed(database)
    with pytest.raises(IntegrityError), database.transaction() as session:
        session.execute(text("UPDATE skill_versions SET content_digest = 'sha256:cc'"))
    with pytest.raises(IntegrityError), database.transaction() as session:
        session.execute(text("UPDATE skill_versions SET state = 'draft'"))
    with database.transaction() as session:
        session.execute(text("UPDATE skill_versions SET state = 'deprecated'"))
        assert session.execute(text("SELECT state FROM skill_versions")).scalar_one() == "deprecated"


def test_a_state_outside_the_four_is_refused(database: Database) -> None:
    _seed(database)
    with pytest.raises(IntegrityError), database.transaction() as session:
        session.add(SkillVersionRow(tenant_id="acme", skill="shop", version="2", state="live", source="package",
                                    files={}, content_digest="sha256:dd", report={}))


def test_migrating_twice_changes_nothing(database: Database) -> None:
    _seed(database)
    database.migrate()
    with database.transaction() as session:
        assert session.execute(text("SELECT count(*) FROM releases")).scalar_one() == 1
