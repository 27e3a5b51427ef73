"""The telemetry base module: spans carry only allow-listed attributes, nothing at all while tracing is
off, and JSON log lines are one object each, with the current trace's ids and never an exception's message."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from skillhouse import telemetry
from skillhouse.settings import Settings


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.use_tracer_provider(provider)
    try:
        yield exporter
    finally:
        telemetry.use_tracer_provider(None)


def test_an_attribute_off_the_allow_list_never_reaches_the_span(exporter: InMemorySpanExporter) -> None:
    with telemetry.span("skillhouse.test", tenant="acme", argument="secret-value", authorization="Bearer x") as current:
        telemetry.annotate(current, code="allowed", body="secret-body", http__response__status_code=200)
    (span,) = exporter.get_finished_spans()
    assert dict(span.attributes or {}) == {"skillhouse.tenant": "acme", "skillhouse.code": "allowed",
                                           "http.response.status_code": 200}


def test_a_failing_block_marks_its_span_failed_without_the_message(exporter: InMemorySpanExporter) -> None:
    with pytest.raises(ValueError), telemetry.span("skillhouse.test"):
        raise ValueError("argument value 1234-5678")
    (span,) = exporter.get_finished_spans()
    assert not span.status.is_ok and span.events == ()
    assert "1234-5678" not in repr((span.attributes, span.events, span.status.description))


def test_with_tracing_off_a_span_is_nothing_and_no_traceparent_is_added() -> None:
    assert not telemetry.tracing()
    with telemetry.span("skillhouse.test", tenant="acme") as current:
        assert current is None
        headers: dict[str, str] = {}
        telemetry.inject_traceparent(headers)
        assert headers == {} and telemetry.current_ids() is None


def test_a_json_log_line_is_one_object_with_the_trace_ids_and_the_extra_values(exporter: InMemorySpanExporter) -> None:
    record = logging.makeLogRecord({"name": "skillhouse.requests", "levelno": logging.INFO, "levelname": "INFO",
                                    "msg": "GET %s %d", "args": ("/v1/skills", 200), "request_id": "abc"})
    with telemetry.span("skillhouse.test"):
        line = telemetry.JsonLines().format(record)
        trace_id, span_id = telemetry.current_ids() or ("", "")
    assert "\n" not in line
    assert json.loads(line) | {"time": "t"} == {"time": "t", "level": "info", "logger": "skillhouse.requests",
                                                "message": "GET /v1/skills 200", "request_id": "abc",
                                                "trace_id": trace_id, "span_id": span_id}


def test_a_json_log_line_names_an_exception_by_its_type_only() -> None:
    try:
        raise RuntimeError("password=hunter2")
    except RuntimeError:
        record = logging.LogRecord("skillhouse", logging.ERROR, __file__, 1, "failed", (), exc_info=True)
        record.exc_info = sys.exc_info()
    line = json.loads(telemetry.JsonLines().format(record))
    assert line["error"] == "RuntimeError" and "hunter2" not in json.dumps(line)


@pytest.mark.parametrize("variable", ["SKILLHOUSE_TELEMETRY", "SKILLHOUSE_LOG_FORMAT"])
def test_an_unknown_tracing_or_log_format_is_refused_naming_its_variable(variable: str) -> None:
    with pytest.raises(ValueError, match=variable):
        Settings.from_env({variable: "loud"})
