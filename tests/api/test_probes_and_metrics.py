"""``/healthz``, ``/readyz`` and ``/metrics``: open without a token, ready only when the database, its
migrations and the guest are, and metrics in Prometheus's text format that its own parser reads (and,
with an OpenTelemetry meter set, the same measurements as OpenTelemetry metrics)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from prometheus_client.parser import text_string_to_metric_families
from tests.real_parts import guest_cache
from tests.scratch import scratch_database

from skillhouse import telemetry
from skillhouse.api import create_app
from skillhouse.host.guest_state import GuestState
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings
from skillhouse.store import Database

Headers = dict[str, str]


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape, parsed by prometheus-client: (name, sorted labels) to value."""
    found: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_healthz_answers_without_a_token(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "alive"}


def test_readyz_is_ready_when_the_database_is_migrated_and_the_guest_built(app: FastAPI) -> None:
    app.state.guest = GuestState("inprocess")
    response = TestClient(app).get("/readyz")
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "ready" and response.json()["failed"] == []


def test_readyz_names_the_migrations_when_the_schema_is_behind(app: FastAPI) -> None:
    app.state.guest = GuestState("inprocess")
    with app.state.database.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = '0001_initial'")
    response = TestClient(app).get("/readyz")
    assert response.status_code == 503
    assert response.json()["failed"] == ["migrations"]


def test_readyz_names_the_database_and_the_guest_when_neither_is_there(tmp_path: Path) -> None:
    def fails(_progress: Callable[[str], None]) -> Any:
        raise OSError("the component is gone")

    guest = GuestState("wasm", tmp_path / "no-guest", load=fails)
    guest.wait(30)
    unreachable = Database("postgresql://nobody@127.0.0.1:9/nothing")  # nothing listens on the discard port
    response = TestClient(create_app(Settings(data_dir=tmp_path), unreachable, guest)).get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["failed"] == ["database", "migrations", "guest"]
    assert "the component is gone" in body["checks"]["guest"]["message"]


@pytest.fixture
def scraped_app(tmp_path: Path) -> Iterator[FastAPI]:
    with scratch_database("sqlite", tmp_path) as database:
        yield create_app(Settings(data_dir=tmp_path, database_url=database.url, guest_cache=guest_cache(),
                                  guest="inprocess"), database)


def test_metrics_count_requests_by_route_template_and_status(app: FastAPI, acme: Headers) -> None:
    client = TestClient(app)
    assert client.get("/v1/skills", headers=acme).status_code == 200
    assert client.get("/v1/skills/nope", headers=acme).status_code == 404
    assert client.get("/v1/skills/other", headers=acme).status_code == 404
    scrape = client.get("/metrics")
    assert scrape.status_code == 200 and scrape.headers["content-type"].startswith("text/plain")
    found = samples(scrape.text)
    assert found[("skillhouse_http_requests_total", (("method", "GET"), ("route", "/v1/skills"), ("status", "200")))] == 1
    assert found[("skillhouse_http_requests_total",
                  (("method", "GET"), ("route", "/v1/skills/{skill}"), ("status", "404")))] == 2
    assert found[("skillhouse_http_request_duration_seconds_count", (("method", "GET"), ("route", "/v1/skills/{skill}")))] == 2
    assert found[("skillhouse_approvals_pending", ())] == 0
    assert found[("skillhouse_idempotency_keys_unresolved", ())] == 0
    assert ("skillhouse_guest_pool_idle", ()) in found


def test_two_apps_in_one_process_count_apart(app: FastAPI, scraped_app: FastAPI) -> None:
    TestClient(app).get("/healthz")
    theirs = samples(TestClient(scraped_app).get("/metrics").text)
    assert ("skillhouse_http_requests_total", (("method", "GET"), ("route", "/healthz"), ("status", "200"))) not in theirs


def test_with_a_meter_the_same_measurements_go_to_opentelemetry(tmp_path: Path, acme_token_in: Callable[..., Any]) -> None:
    reader = InMemoryMetricReader()
    telemetry.use_meter_provider(MeterProvider(metric_readers=[reader]))
    try:
        with scratch_database("sqlite", tmp_path) as database:
            app = create_app(Settings(data_dir=tmp_path, database_url=database.url, guest="inprocess"), database)
            client = TestClient(app)
            assert client.get("/v1/skills", headers=acme_token_in(database)).status_code == 200
            data = reader.get_metrics_data()
    finally:
        telemetry.use_meter_provider(None)
    assert data is not None
    points = {metric.name: list(metric.data.data_points)
              for resource in data.resource_metrics for scope in resource.scope_metrics for metric in scope.metrics}
    (listed,) = [p for p in points["skillhouse.http.requests"] if p.attributes.get("http.route") == "/v1/skills"]
    assert listed.value == 1 and listed.attributes["http.response.status_code"] == 200
    assert [p.value for p in points["skillhouse.approvals.pending"]] == [0]
    assert [p.value for p in points["skillhouse.idempotency_keys.unresolved"]] == [0]
    assert "skillhouse.guest.pool.idle" in points and "skillhouse.http.request.duration" in points


@pytest.fixture
def acme_token_in() -> Callable[..., Any]:
    def make(database: Database) -> dict[str, str]:
        with database.transaction() as session:
            secret, _ = create_token(session, "acme", scope="run")
        return {"Authorization": f"Bearer {secret}"}

    return make
