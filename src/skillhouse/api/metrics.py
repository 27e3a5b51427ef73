"""The app's Prometheus metrics (``GET /metrics``) and the middleware that times every request.

Each app has its own :class:`prometheus_client.CollectorRegistry` (never the process-wide one), so
two apps in one process (tests, benchmarks) count apart. Names follow the client's conventions:
counters end ``_total``, durations are histograms in seconds.

- ``skillhouse_http_requests_total{method, route, status}`` and
  ``skillhouse_http_request_duration_seconds{method, route}``: ``route`` is the route's template
  (``/v1/turns/{turn_id}/calls``), never the path a client sent, so the label set stays small.
- ``skillhouse_gateway_decisions_total{code}`` and ``skillhouse_gateway_decision_duration_seconds{code}``:
  every request a guest makes, by outcome: ``allowed``, ``replayed`` or the refusal's code
  (``egress-refused``, ``approval-required``, ``rate-limited``...).
- Gauges computed when scraped: ``skillhouse_approvals_pending``, ``skillhouse_idempotency_keys_unresolved``
  (over every tenant; left out of a scrape while the database does not answer) and
  ``skillhouse_guest_pool_idle`` (warm guests waiting for a call in this process).

No label names a tenant, a path a client sent, an argument or a key.

When telemetry has an OpenTelemetry meter (``SKILLHOUSE_TELEMETRY=otlp``), the same measurements also go
out over OTLP under OpenTelemetry's names: ``skillhouse.http.requests``, ``skillhouse.http.request.duration``,
``skillhouse.gateway.decisions``, ``skillhouse.gateway.decision.duration`` and the gauges with dots.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Receive, Scope, Send

from skillhouse.telemetry import annotate, continuing, meter, span, tracing

if TYPE_CHECKING:
    from opentelemetry.metrics import Meter

log = logging.getLogger("skillhouse.api")
requests_log = logging.getLogger("skillhouse.requests")

Gauges = Callable[[], Iterable[tuple[str, str, float]]]
"""What to report at a scrape: ``(name, help, value)`` for each gauge."""


class _ScrapedGauges(Collector):
    def __init__(self, gauges: Gauges) -> None:
        self.gauges = gauges

    def collect(self) -> Iterator[Metric]:
        try:
            values = list(self.gauges())
        except Exception as exc:  # a scrape never fails because the database is down: /readyz says so
            log.warning("metrics: gauges left out of this scrape (%s)", type(exc).__name__)
            return
        for name, help_text, value in values:
            yield GaugeMetricFamily(name, help_text, value=value)


class _OtlpInstruments:
    """The same measurements as OpenTelemetry instruments, for OTLP export."""

    def __init__(self, found: Meter, gauges: Gauges) -> None:
        from opentelemetry.metrics import CallbackOptions, Observation

        self.requests = found.create_counter("skillhouse.http.requests", unit="{request}",
                                             description="API requests answered.")
        self.request_seconds = found.create_histogram("skillhouse.http.request.duration", unit="s",
                                                      description="Time to answer an API request.")
        self.decisions = found.create_counter("skillhouse.gateway.decisions", unit="{request}",
                                              description="Requests the gateway decided, by outcome code.")
        self.decision_seconds = found.create_histogram("skillhouse.gateway.decision.duration", unit="s",
                                                       description="Time to decide (and send) one request.")

        def observe(prometheus_name: str) -> Callable[[CallbackOptions], Iterable[Observation]]:
            def callback(_options: CallbackOptions) -> Iterable[Observation]:
                try:
                    return [Observation(value) for name, _, value in gauges() if name == prometheus_name]
                except Exception:  # the database is down: nothing to report this time
                    return []
            return callback

        for prometheus_name, name in GAUGE_NAMES.items():
            found.create_observable_gauge(name, callbacks=[observe(prometheus_name)])


GAUGE_NAMES = {"skillhouse_approvals_pending": "skillhouse.approvals.pending",
               "skillhouse_idempotency_keys_unresolved": "skillhouse.idempotency_keys.unresolved",
               "skillhouse_guest_pool_idle": "skillhouse.guest.pool.idle"}
"""The gauges an app's :data:`Gauges` report (api/app.py): Prometheus's name to OpenTelemetry's."""


class Metrics:
    """One app's counters, histograms and scraped gauges (and their OpenTelemetry twins when a meter is set)."""

    def __init__(self, gauges: Gauges) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.requests = Counter("skillhouse_http_requests", "API requests answered, by method, route template and status.",
                                ["method", "route", "status"], registry=self.registry)
        self.request_seconds = Histogram("skillhouse_http_request_duration_seconds",
                                         "Time to answer an API request, by method and route template.",
                                         ["method", "route"], registry=self.registry)
        self.decisions = Counter("skillhouse_gateway_decisions", "Requests the gateway decided, by outcome code.",
                                 ["code"], registry=self.registry)
        self.decision_seconds = Histogram("skillhouse_gateway_decision_duration_seconds",
                                          "Time to decide (and send) one request, by outcome code.",
                                          ["code"], registry=self.registry)
        self.registry.register(_ScrapedGauges(gauges))
        found = meter()
        self.otlp = None if found is None else _OtlpInstruments(found, gauges)

    def observe_decision(self, code: str, seconds: float) -> None:
        self.decisions.labels(code).inc()
        self.decision_seconds.labels(code).observe(seconds)
        if self.otlp is not None:
            self.otlp.decisions.add(1, {"skillhouse.code": code})
            self.otlp.decision_seconds.record(seconds, {"skillhouse.code": code})

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests.labels(method, route, str(status)).inc()
        self.request_seconds.labels(method, route).observe(seconds)
        if self.otlp is not None:
            attributes: dict[str, str | int] = {"http.request.method": method, "http.route": route, "http.response.status_code": status}
            self.otlp.requests.add(1, attributes)
            self.otlp.request_seconds.record(seconds, attributes)

    def exposition(self) -> bytes:
        """The registry in Prometheus's text format."""
        return generate_latest(self.registry)


def _trace_headers(scope: Scope) -> dict[str, str]:
    """The caller's W3C trace context headers (``traceparent``, ``tracestate``), when it sent them."""
    if not tracing():
        return {}
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in scope.get("headers", ())
            if name in (b"traceparent", b"tracestate")}


def _route_of(scope: Scope) -> str:
    """The template of the route that answered: FastAPI's routes say it in the scope; Starlette's own
    (``/openapi.json``, ``/docs``) are found by their endpoint; a path nothing matched is ``unmatched``."""
    path = getattr(scope.get("route"), "path", None)
    if isinstance(path, str):
        return path
    endpoint, app = scope.get("endpoint"), scope.get("app")
    if endpoint is not None:
        for route in getattr(app, "routes", ()):
            if getattr(route, "endpoint", None) is endpoint and isinstance(getattr(route, "path", None), str):
                return str(route.path)
    return "unmatched"


class Observed:
    """ASGI middleware: a ``skillhouse.request`` span, the request metrics and one log line per request,
    carrying a request id (``X-Request-Id`` on the answer)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = uuid.uuid4().hex
        method: str = scope["method"]
        status = 500
        started = time.perf_counter()

        async def send_noting_status(message: MutableMapping[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message["headers"] = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
            await send(message)

        with continuing(_trace_headers(scope)), span(
            "skillhouse.request", http__request__method=method, request_id=request_id
        ) as current:
            try:
                await self.app(scope, receive, send_noting_status)
            except asyncio.CancelledError:
                # the server's graceful shutdown ran out of time: say which request did not finish (a call's
                # idempotency key, if it had one, turns unresolved rather than being resent)
                log.warning("request %s %s %s did not finish before shutdown", request_id, method, _route_of(scope),
                            extra={"request_id": request_id, "route": _route_of(scope)})
                raise
            finally:
                route = _route_of(scope)
                seconds = time.perf_counter() - started
                annotate(current, http__route=route, http__response__status_code=status)
                self.metrics.observe_request(method, route, status, seconds)
                requests_log.info("%s %s %d", method, route, status, extra={
                    "request_id": request_id, "method": method, "route": route, "status": status,
                    "duration_ms": round(seconds * 1000, 1)})
