"""A migrated database per test, on SQLite and PostgreSQL (tests/real_parts.py says which server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.real_parts import postgres_url
from tests.scratch import scratch_database

from skillhouse.store import Database


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    server = postgres_url() if request.param == "postgresql" else None
    with scratch_database(request.param, tmp_path, server) as db:
        yield db
