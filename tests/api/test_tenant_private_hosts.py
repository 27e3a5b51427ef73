"""Through the HTTP API: a deployment maps the house's name for tenant ``acme`` only, so ``acme``'s turns
reach it and ``globex``, publishing the very same skill, is refused at the gateway (``egress-refused``).

Publishing takes ``admin`` tokens; binding and calling take ``run`` tokens, as an agent's would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.hollowbrook import running_hollowbrook
from tests.real_parts import postgres_url
from tests.scratch import scratch_database

from skillhouse.api import create_app
from skillhouse.examples.hollowbrook_server import HollowbrookHTTPServer
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings

Headers = dict[str, str]


@pytest.fixture
def house() -> Iterator[HollowbrookHTTPServer]:
    with running_hollowbrook() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def client(request: pytest.FixtureRequest, tmp_path: Path, house: HollowbrookHTTPServer) -> Iterator[TestClient]:
    server = postgres_url() if request.param == "postgresql" else None
    with scratch_database(request.param, tmp_path, server) as database:
        settings = Settings.from_env({"SKILLHOUSE_DATABASE_URL": database.url, "SKILLHOUSE_DATA_DIR": str(tmp_path),
                                      "SKILLHOUSE_GUEST": "inprocess",
                                      "SKILLHOUSE_RESOLVE": f"acme/hollowbrook.local:8084=127.0.0.1:{house.port}"})
        app = create_app(settings, database)
        with TestClient(app) as test_client:
            yield test_client
        if hasattr(app.state, "gateway"):
            app.state.gateway.close()


@pytest.fixture
def token_for(client: TestClient) -> Callable[[str, str], Headers]:
    def make(tenant: str, scope: str) -> Headers:
        with client.app.state.database.transaction() as session:  # type: ignore[attr-defined]
            secret, _ = create_token(session, tenant, scope=scope)
        return {"Authorization": f"Bearer {secret}"}

    return make


def publish_and_list_rooms(client: TestClient, token_for: Callable[[str, str], Headers], tenant: str,
                           files: dict[str, str]) -> dict[str, Any]:
    admin, runner = token_for(tenant, "admin"), token_for(tenant, "run")
    base = "/v1/skills/hollowbrook/versions/1.0.0"
    assert client.put(base, json={"files": files}, headers=admin).status_code == 200
    assert client.post(f"{base}/validate", headers=admin).status_code == 200
    assert client.post(f"{base}/publish", headers=runner).json()["error"]["code"] == "insufficient-scope"
    assert client.post(f"{base}/publish", headers=admin).status_code == 201
    turn = client.post("/v1/turns", json={"skills": [{"name": "hollowbrook", "version": "1.0.0"}]}, headers=runner)
    assert turn.status_code == 201, turn.text
    called = client.post(f"/v1/turns/{turn.json()['id']}/calls", json={"tool": "hollowbrook_list_rooms", "arguments": {}},
                         headers=runner)
    assert called.status_code == 200, called.text
    answer: dict[str, Any] = called.json()
    return answer


def test_only_the_tenant_the_name_is_mapped_for_reaches_the_private_house(
        client: TestClient, token_for: Callable[[str, str], Headers], hollowbrook_files: dict[str, str]) -> None:
    reached = publish_and_list_rooms(client, token_for, "acme", hollowbrook_files)
    assert reached["status"] == 200, reached
    refused = publish_and_list_rooms(client, token_for, "globex", hollowbrook_files)
    assert refused["error"]["code"] == "egress-refused", refused
