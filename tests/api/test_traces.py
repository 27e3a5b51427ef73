"""Traces of one call through the API, captured with the OpenTelemetry SDK's in-memory exporter: the
span tree request > tool call > guest > gateway decision > upstream request, attributes that say what
happened (tenant, tool, operation, decision code, status, bytes) and never an argument value or a
credential; the upstream receives the call's W3C ``traceparent`` when propagation is on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tests.api.test_probes_and_metrics import samples
from tests.api.tls_upstream import NAMES, Received, running_tls_upstream
from tests.real_parts import guest_cache
from tests.scratch import scratch_database

from skillhouse import telemetry
from skillhouse.api import create_app
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings

CANARY = "ghp_canary0123456789tracecanary"
OWNER, REPO = "owner-value-9f3a", "repo-value-7c1e"
Headers = dict[str, str]


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.use_tracer_provider(provider, propagate=True)
    try:
        yield exporter
    finally:
        telemetry.use_tracer_provider(None)


@pytest.fixture(params=["wasm", "inprocess"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[TestClient, Headers, Received]]:
    with running_tls_upstream(tmp_path) as (port, ca, received), scratch_database("sqlite", tmp_path) as database:
        settings = Settings(data_dir=tmp_path, database_url=database.url, guest=request.param, upstream_ca=ca,
                            guest_cache=guest_cache(), resolve={(name, 443): f"127.0.0.1:{port}" for name in NAMES},
                            secret_key=Fernet.generate_key().decode())
        app = create_app(settings, database)
        with database.transaction() as session:
            secret, _ = create_token(session, "acme", scope="admin")
        with TestClient(app) as client:
            yield client, {"Authorization": f"Bearer {secret}"}, received
        app.state.gateway.close()


def call_get_issue(client: TestClient, headers: Headers, trace: Headers | None = None) -> None:
    put = client.put("/v1/credentials", json={"host": "api.github.com", "scheme": "bearer", "value": CANARY},
                     headers=headers)
    assert put.status_code == 200, put.text
    body = {"tool_pack": "coding.v1", "manifest_ref": {"integration_id": "github.primary"}, "operation": "get_issue",
            "secrets_ref": "api.github.com/authorization",
            "arguments": {"owner": OWNER, "repo": REPO, "issue_number": 987654321}}
    response = client.post("/api/runtime/tools/execute", json=body, headers={**headers, **(trace or {})})
    assert response.status_code == 200, response.text


def lineage(spans: tuple[ReadableSpan, ...], leaf: ReadableSpan) -> list[ReadableSpan]:
    """``leaf`` and its ancestors among ``spans``, root first."""
    by_id = {span.context.span_id: span for span in spans}
    line = [leaf]
    while line[0].parent is not None and line[0].parent.span_id in by_id:
        line.insert(0, by_id[line[0].parent.span_id])
    return line


def test_one_call_is_one_span_tree_with_what_happened_and_no_secret(
    world: tuple[TestClient, Headers, Received], exporter: InMemorySpanExporter
) -> None:
    client, headers, received = world
    call_get_issue(client, headers)
    spans = exporter.get_finished_spans()
    (upstream,) = [span for span in spans if span.name == "skillhouse.upstream"]
    line = lineage(spans, upstream)
    assert [span.name for span in line] == ["skillhouse.request", "skillhouse.tool_call", "skillhouse.guest",
                                            "skillhouse.gateway", "skillhouse.upstream"]
    assert line[0].parent is None and len({span.context.trace_id for span in line}) == 1
    attributes = {span.name: dict(span.attributes or {}) for span in line}
    assert attributes["skillhouse.request"]["http.route"] == "/api/runtime/tools/execute"
    assert attributes["skillhouse.request"]["http.response.status_code"] == 200
    assert attributes["skillhouse.tool_call"]["skillhouse.tenant"] == "acme"
    assert attributes["skillhouse.tool_call"]["skillhouse.tool"] == "github-coding_get_issue"
    assert attributes["skillhouse.gateway"]["skillhouse.code"] == "allowed"
    assert attributes["skillhouse.gateway"]["skillhouse.replayed"] is False
    assert attributes["skillhouse.upstream"]["http.response.status_code"] == 200
    assert attributes["skillhouse.upstream"]["http.response.body.size"] > 0
    assert attributes["skillhouse.upstream"]["server.address"] == "api.github.com"
    assert attributes["skillhouse.upstream"]["server.port"] == 443
    assert attributes["skillhouse.upstream"]["skillhouse.operation"].endswith("get_issue")
    shown = repr([(span.name, dict(span.attributes or {}), span.events) for span in spans])
    for secret_or_argument in (CANARY, OWNER, REPO, "987654321"):
        assert secret_or_argument not in shown
    # the upstream's request carries the upstream span's trace context
    (request,) = [r for r in received.requests if r["path"].endswith("/issues/987654321")]
    version, trace_id, span_id, _flags = request["headers"]["traceparent"].split("-")
    assert (version, int(trace_id, 16), int(span_id, 16)) == ("00", upstream.context.trace_id, upstream.context.span_id)


def test_with_tracing_off_no_traceparent_leaves_and_the_decision_is_still_counted(
    world: tuple[TestClient, Headers, Received]
) -> None:
    client, headers, received = world
    call_get_issue(client, headers)
    assert all("traceparent" not in request["headers"] for request in received.requests)
    found = samples(client.get("/metrics").text)
    assert found[("skillhouse_gateway_decisions_total", (("code", "allowed"),))] == 1
    assert found[("skillhouse_gateway_decision_duration_seconds_count", (("code", "allowed"),))] == 1


CALLER_TRACE, CALLER_SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


def test_a_request_with_a_traceparent_continues_the_callers_trace_down_to_the_upstream(
    world: tuple[TestClient, Headers, Received], exporter: InMemorySpanExporter
) -> None:
    client, headers, received = world
    call_get_issue(client, headers, {"traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01", "tracestate": "vendor=1"})
    spans = exporter.get_finished_spans()
    (upstream,) = [span for span in spans if span.name == "skillhouse.upstream"]
    line = lineage(spans, upstream)
    assert line[0].name == "skillhouse.request"
    # the caller's span is the parent of skillhouse's first, and every span is in the caller's trace
    assert line[0].parent is not None and line[0].parent.is_remote
    assert (f"{line[0].parent.trace_id:032x}", f"{line[0].parent.span_id:016x}") == (CALLER_TRACE, CALLER_SPAN)
    assert {f"{span.context.trace_id:032x}" for span in line} == {CALLER_TRACE}
    (request,) = [r for r in received.requests if r["path"].endswith("/issues/987654321")]
    assert request["headers"]["traceparent"].split("-")[1] == CALLER_TRACE
    assert request["headers"]["tracestate"] == "vendor=1"


@pytest.mark.parametrize("traceparent", ["00-zz-00f067aa0ba902b7-01", f"00-{'0' * 32}-{CALLER_SPAN}-01", "garbage"])
def test_a_traceparent_that_does_not_parse_starts_a_trace_of_its_own(
    tmp_path: Path, exporter: InMemorySpanExporter, traceparent: str
) -> None:
    with scratch_database("sqlite", tmp_path) as database:
        app = create_app(Settings(data_dir=tmp_path, database_url=database.url, guest="inprocess"), database)
        with TestClient(app) as client:
            assert client.get("/healthz", headers={"traceparent": traceparent}).status_code == 200
    (request,) = [span for span in exporter.get_finished_spans() if span.name == "skillhouse.request"]
    assert request.parent is None and f"{request.context.trace_id:032x}" != CALLER_TRACE
