"""An API app on a migrated database (SQLite and PostgreSQL, see tests/real_parts.py), with an ``admin``
token for tenants ``acme`` and ``globex`` (``token_for`` makes one of any scope) and the Hollowbrook
package's files."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.real_parts import guest_cache, postgres_url
from tests.scratch import scratch_database

from skillhouse.api import create_app
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings

HOLLOWBROOK = Path(__file__).resolve().parents[2] / "examples" / "hollowbrook"
Headers = dict[str, str]


@pytest.fixture(params=["sqlite", "postgresql"])
def app(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FastAPI]:
    server = postgres_url() if request.param == "postgresql" else None
    with scratch_database(request.param, tmp_path, server) as database:
        yield create_app(Settings(data_dir=tmp_path, database_url=database.url, guest_cache=guest_cache()), database)


@pytest.fixture
def client(app: FastAPI) -> TestClient:
    return TestClient(app)


@pytest.fixture
def token_for(app: FastAPI) -> Callable[..., Headers]:
    def make(tenant: str, scope: str = "admin") -> Headers:
        with app.state.database.transaction() as session:
            secret, _ = create_token(session, tenant, scope=scope)
        return {"Authorization": f"Bearer {secret}"}

    return make


@pytest.fixture
def acme(token_for: Callable[..., Headers]) -> Headers:
    return token_for("acme")


@pytest.fixture
def globex(token_for: Callable[..., Headers]) -> Headers:
    return token_for("globex")


@pytest.fixture
def hollowbrook_files() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(HOLLOWBROOK.iterdir()) if p.is_file()}
