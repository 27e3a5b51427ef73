"""Telemetry: the spans every layer opens, and the JSON log lines a deployment may ask for.

Tracing is off until :func:`use_tracer_provider` hands over an OpenTelemetry ``TracerProvider``
(``skillhouse serve`` does with ``SKILLHOUSE_TELEMETRY=otlp``, exporting as the standard ``OTEL_*``
variables say; tests hand one with an in-memory exporter). While it is off, :func:`span` is a context
manager that does nothing and OpenTelemetry is never imported, so the offline commands stay fast.

Attributes are an allow-list (:data:`ATTRIBUTES`): tenant, skill, version, operation, tool, decision
code, status, bytes, replay, route. An attribute not on it is dropped, so no argument value,
header or credential can reach an exporter by a slip at a call site.

Span tree of one API call: ``skillhouse.request`` > ``skillhouse.tool_call`` > ``skillhouse.guest``
> ``skillhouse.gateway`` > ``skillhouse.upstream``; an agent turn is ``skillhouse.turn``; an MCP request
(``tools/list``, ``tools/call``) is ``skillhouse.mcp``, the parent of its tool call. A request that arrives with a
W3C ``traceparent`` (an HTTP header, or an MCP request's ``_meta``) continues the caller's trace
(:func:`continuing`): the caller's span is the parent of skillhouse's first.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.metrics import Meter, MeterProvider
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer

Attribute = str | int | float | bool

ATTRIBUTES = frozenset({
    "skillhouse.tenant", "skillhouse.skill", "skillhouse.version", "skillhouse.operation", "skillhouse.tool",
    "skillhouse.turn_id", "skillhouse.guest", "skillhouse.decision", "skillhouse.code", "skillhouse.replayed",
    "http.request.method", "http.route", "http.response.status_code", "http.response.body.size",
    "server.address", "server.port", "skillhouse.request_id", "mcp.method.name",
})
"""The only attribute names a span may carry; none of them holds an argument, a header or a secret."""

_state: dict[str, Any] = {"tracer": None, "propagate": False, "meter": None}


def use_tracer_provider(provider: TracerProvider | None, propagate: bool = False) -> None:
    """Trace into ``provider`` from now on (``None``: tracing off); ``propagate``: send W3C
    ``traceparent`` to upstreams (:func:`inject_traceparent`)."""
    _state["tracer"] = None if provider is None else provider.get_tracer("skillhouse")
    _state["propagate"] = propagate and provider is not None


def use_meter_provider(provider: MeterProvider | None) -> None:
    """Record metrics into ``provider`` too (``None``: ``/metrics`` only); apps made from now on use it."""
    _state["meter"] = None if provider is None else provider.get_meter("skillhouse")


def meter() -> Meter | None:
    """The OpenTelemetry meter metrics go to besides ``/metrics``, if any."""
    found: Meter | None = _state["meter"]
    return found


def tracing() -> bool:
    """Whether spans are recorded."""
    return _state["tracer"] is not None


def _safe(attributes: dict[str, Attribute | None]) -> dict[str, Attribute]:
    return {name: value for name, value in attributes.items() if value is not None and name in ATTRIBUTES}


@contextmanager
def span(name: str, **attributes: Attribute | None) -> Iterator[Span | None]:
    """A span named ``name`` around the block, child of the current one; ``None`` while tracing is off.

    Keyword names are attribute names with ``skillhouse.`` for ``_`` at the front and ``.`` for
    ``__``: ``span("x", tenant="acme", http__route="/v1")``; ``None`` values are left out."""
    tracer: Tracer | None = _state["tracer"]
    if tracer is None:
        yield None
        return
    # an exception's message may quote a value: the span records that it failed and the type, never the message
    with tracer.start_as_current_span(name, attributes=_safe(_named(attributes)), record_exception=False,
                                      set_status_on_exception=False) as current:
        try:
            yield current
        except BaseException as exc:
            from opentelemetry.trace import Status, StatusCode

            current.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            raise


def annotate(current: Span | None, **attributes: Attribute | None) -> None:
    """Add allow-listed attributes to ``current`` (a :func:`span`'s value; nothing while tracing is off)."""
    if current is not None:
        current.set_attributes(_safe(_named(attributes)))


def _named(attributes: dict[str, Attribute | None]) -> dict[str, Attribute | None]:
    named: dict[str, Attribute | None] = {}
    for key, value in attributes.items():
        name = key.replace("__", ".")
        named[name if "." in name else f"skillhouse.{name}"] = value
    return named


def inject_traceparent(headers: MutableMapping[str, str]) -> None:
    """Add the current span's W3C ``traceparent`` to ``headers`` when propagation is configured."""
    if not _state["propagate"]:
        return
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    TraceContextTextMapPropagator().inject(headers)


@contextmanager
def continuing(carrier: Mapping[str, str]) -> Iterator[None]:
    """Spans opened in the block continue the trace of the W3C ``traceparent`` (and ``tracestate``) in ``carrier``.

    Nothing happens while tracing is off or without a ``traceparent``; one that does not parse is ignored, so
    the block's spans start a trace of their own, as they would without it."""
    if _state["tracer"] is None or "traceparent" not in carrier:
        yield
        return
    from opentelemetry import context
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    token = context.attach(TraceContextTextMapPropagator().extract(carrier))
    try:
        yield
    finally:
        context.detach(token)


def current_ids() -> tuple[str, str] | None:
    """``(trace id, span id)`` of the current span in hex, or ``None`` (tracing off, or no span)."""
    if _state["tracer"] is None:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


def otlp_meter_provider() -> MeterProvider:
    """A meter provider exporting over OTLP/HTTP every ``OTEL_METRIC_EXPORT_INTERVAL`` milliseconds (the SDK
    reads that and the ``OTEL_EXPORTER_OTLP_*`` variables itself)."""
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    return MeterProvider(metric_readers=[PeriodicExportingMetricReader(OTLPMetricExporter())], resource=_resource())


def _resource() -> Any:
    from opentelemetry.sdk.resources import Resource

    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource.create({"service.name": "skillhouse"}))
    return resource


def otlp_provider() -> TracerProvider:
    """A provider exporting over OTLP/HTTP in batches, configured by the standard ``OTEL_*`` variables
    (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_SERVICE_NAME``...) that the
    OpenTelemetry SDK reads itself."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=_resource())
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


_RECORD_FIELDS = frozenset(vars(logging.makeLogRecord({})))


class JsonLines(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the current trace and span ids, and the
    ``extra`` values the call site passed (request id, route, status). Messages are the call sites'
    own, which name codes and types, never secrets."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        ids = current_ids()
        if ids is not None:
            line["trace_id"], line["span_id"] = ids
        line.update({k: v for k, v in vars(record).items() if k not in _RECORD_FIELDS and not k.startswith("_")
                     and k not in ("message", "color_message")})
        if record.exc_info and record.exc_info[0] is not None:
            line["error"] = record.exc_info[0].__name__  # the type only: a message may quote values
        return json.dumps(line, ensure_ascii=False, default=str)
