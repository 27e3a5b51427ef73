"""A migrated database per test, on SQLite and (when SKILLHOUSE_TEST_POSTGRES_URL is set) PostgreSQL."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillhouse.store import Database
from skillhouse.store.scratch import scratch_database

POSTGRES_URL = os.environ.get("SKILLHOUSE_TEST_POSTGRES_URL")


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    if request.param == "postgresql" and not POSTGRES_URL:
        pytest.skip("SKILLHOUSE_TEST_POSTGRES_URL is not set")
    with scratch_database(request.param, tmp_path, POSTGRES_URL) as db:
        yield db
