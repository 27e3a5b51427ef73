"""Replicas started together against one PostgreSQL schema run each migration once (an advisory lock), and a
replica whose code is older than the schema refuses to start, saying so on one line."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import text
from tests.real_parts import postgres_url
from tests.scratch import postgres_schema_url, scratch_database

from skillhouse.cli.serve import BadConfiguration, open_store
from skillhouse.settings import Settings
from skillhouse.store.database import MIGRATIONS, Database, SchemaAhead, open_database

REPLICAS = 3


# one replica's start-up: open (and so migrate) the store, printing Alembic's "Running upgrade A -> B" lines
REPLICA = """
import logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
from skillhouse.store import open_database
open_database(sys.argv[1]).dispose()
"""


def test_three_replicas_starting_together_run_each_migration_once() -> None:
    shipped = sorted(path.stem for path in (MIGRATIONS / "versions").glob("0*.py"))
    with postgres_schema_url(postgres_url()) as url:
        replicas = [subprocess.Popen([sys.executable, "-c", REPLICA, url], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True) for _ in range(REPLICAS)]
        outputs = [replica.communicate(timeout=120) for replica in replicas]
        database = Database(url)
        with database.engine.connect() as connection:
            version = connection.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
        database.dispose()
    assert [replica.returncode for replica in replicas] == [0] * REPLICAS, [err for _, err in outputs]
    ran = [line.split("->")[1].split(",")[0].strip()
           for out, _ in outputs for line in out.splitlines() if line.startswith("Running upgrade")]
    assert Counter(ran) == Counter(shipped)
    assert version == shipped[-1]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_replica_older_than_the_schema_refuses_to_start(kind: str, tmp_path: Path) -> None:
    server = postgres_url() if kind == "postgresql" else None
    with scratch_database(kind, tmp_path, server) as database:
        with database.engine.begin() as connection:
            connection.execute(text("UPDATE alembic_version SET version_num = '9999_from_the_future'"))
        with pytest.raises(SchemaAhead) as refused:
            open_database(database.url)
        assert refused.value.code == "schema-ahead"
        with pytest.raises(BadConfiguration) as at_start:
            open_store(Settings(data_dir=tmp_path, database_url=database.url))
        assert at_start.value.code == "schema-ahead"
        assert "\n" not in at_start.value.message and "9999_from_the_future" in at_start.value.message
