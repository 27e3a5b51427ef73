"""The gateway's throughput with tracing and metrics on, as a ratio to off.

The same fresh-key ``create_booking`` path as ``bench_gateway.py`` (its upstream process, client
threads and rounds), on SQLite, measured three ways with rounds interleaved: telemetry off; metrics
only (the Prometheus counters and histograms every app keeps); and spans as well (an SDK
``TracerProvider`` with a ``BatchSpanProcessor``, W3C ``traceparent`` sent upstream) whose exporter
drops what it is handed, so the figure is skillhouse's and the SDK's cost, not a collector's.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from bench_gateway import CLIENTS, REQUESTS, ROUNDS, _booking, _fresh, _round
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from skillhouse import telemetry
from skillhouse.api.metrics import Metrics
from skillhouse.compiler import compile_dir
from skillhouse.gateway import BoundReleases, Gateway, GatewayConfig, TurnContext
from skillhouse.gateway.exchange import FetchRequest, FetchResponse
from skillhouse.store.database import open_database

ROOT = Path(__file__).resolve().parents[1]


class _Dropped(SpanExporter):
    """Takes every batch and keeps nothing."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS


def _measure(database_url: str, port: int, release: dict[str, Any]) -> tuple[dict[str, float], int]:
    database = open_database(database_url)
    gateway = Gateway(database, GatewayConfig(resolve={("hollowbrook.local", 8084): f"127.0.0.1:{port}"}))
    turn = TurnContext("bench", None, BoundReleases([release]))
    metrics = Metrics(lambda: [])
    exporter = _Dropped()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    headers = {"Content-Type": "application/json"}

    def send(n: int) -> None:
        request = FetchRequest("POST", "http://hollowbrook.local:8084/bookings", tuple(headers.items()), _booking(n))
        answer = gateway.fetch(turn, request)
        assert isinstance(answer, FetchResponse) and answer.status == 201, answer

    def off() -> None:
        gateway.observers.clear()
        telemetry.use_tracer_provider(None)

    def metrics_only() -> None:
        gateway.observers[:] = [metrics.observe_decision]
        telemetry.use_tracer_provider(None)

    def traced() -> None:
        gateway.observers[:] = [metrics.observe_decision]
        telemetry.use_tracer_provider(provider, propagate=True)

    modes: dict[str, Callable[[], None]] = {"off": off, "metrics": metrics_only, "traced": traced}
    seen: dict[str, list[float]] = {name: [] for name in modes}
    try:
        with ThreadPoolExecutor(CLIENTS) as pool:
            for index, switch in enumerate(modes.values()):
                switch()
                list(pool.map(send, (_fresh(-1 - index, n) for n in range(4 * CLIENTS))))  # warm up
            for round_ in range(ROUNDS):
                for index, (name, switch) in enumerate(modes.items()):
                    switch()
                    rate, _cpu = _round(pool, send, partial(_fresh, 10 * round_ + index + 100))
                    seen[name].append(rate)
    finally:
        off()
        provider.shutdown()
        gateway.close()
        database.dispose()
    return {name: statistics.median(rates) for name, rates in seen.items()}, exporter.spans


def run() -> str:
    compiled, errors = compile_dir(ROOT / "examples" / "hollowbrook")
    assert compiled is not None, errors
    upstream = subprocess.Popen([sys.executable, str(Path(__file__).with_name("bench_gateway.py")), "--serve"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert upstream.stdout is not None and upstream.stdin is not None
    try:
        port = int(upstream.stdout.readline())
        with tempfile.TemporaryDirectory() as tmp:
            rates, spans = _measure(f"sqlite:///{tmp}/bench.db", port, compiled.document)
    finally:
        upstream.stdin.close()
        upstream.wait(10)
    off = rates["off"]
    return "\n".join([
        "## Telemetry: the gateway's throughput with metrics and tracing on, against off",
        "",
        f"Fresh-key `create_booking` requests through `Gateway.fetch` on SQLite, {CLIENTS} client threads, "
        f"{REQUESTS:,} requests per round, median of {ROUNDS} rounds, the three modes interleaved. *Metrics*: "
        "the Prometheus decision counter and histogram. *Traced*: metrics plus a `skillhouse.gateway` and a "
        "`skillhouse.upstream` span per request (SDK `BatchSpanProcessor`, an exporter that drops the spans) "
        f"and `traceparent` sent upstream ({spans:,} spans exported in all).",
        "",
        "| mode | req/s | ratio to off |",
        "|---|---|---|",
        *(f"| {name} | {rate:,.0f} | **{rate / off:.2f}** |" for name, rate in rates.items()),
        "",
    ]) + "\n"


if __name__ == "__main__":
    print(run())
