"""The gateway's throughput with tracing, metrics and rate limits on, as a ratio to off; and what one
rate-limit admission costs.

The same fresh-key ``create_booking`` path as ``bench_gateway.py`` (its upstream process, client
threads and rounds), on SQLite, measured five ways with rounds interleaved: everything off; metrics
only (the Prometheus counters and histograms every app keeps); spans as well (an SDK
``TracerProvider`` with a ``BatchSpanProcessor``, W3C ``traceparent`` sent upstream) whose exporter
drops what it is handed, so the figure is skillhouse's and the SDK's cost, not a collector's; metrics
and a tenant-wide rate limit high enough never to refuse, so every call pays its admission; and all of
them at once.

The admission itself (``RateLimits.admit`` then ``release``, one thread, no upstream) is timed alone on
SQLite and PostgreSQL (when ``SKILLHOUSE_TEST_POSTGRES_URL`` or ``SKILLHOUSE_BENCH_POSTGRES_URL`` is set):
under a rate limit, and under a rate and a concurrent-call limit (a lease taken and given back).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from bench_gateway import CLIENTS, REQUESTS, ROUNDS, _booking, _cpu, _fresh, _postgres, _round
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from skillhouse import telemetry
from skillhouse.api.metrics import Metrics
from skillhouse.compiler import compile_dir
from skillhouse.gateway import BoundReleases, Gateway, GatewayConfig, TurnContext
from skillhouse.gateway.exchange import FetchRequest, FetchResponse
from skillhouse.gateway.limits import RateLimits
from skillhouse.store.database import open_database

ROOT = Path(__file__).resolve().parents[1]
NEVER_REFUSES = (1_000_000, 1.0)
"""A tenant-wide limit of a million requests a second: every call is admitted, and pays for it."""
ADMISSIONS = 1500
PG_MODES = ("off", "limited", "traced + limited")


class _Dropped(SpanExporter):
    """Takes every batch and keeps nothing."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS


def _measure(database_url: str, port: int, release: dict[str, Any],
             only: tuple[str, ...] | None = None) -> tuple[dict[str, tuple[float, float]], int]:
    """Requests per second and CPU µs per request of each mode (medians), and the spans exported."""
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

    limited = [False]

    def limits(on: bool) -> None:
        if on and not limited[0]:
            gateway.limits.set("bench", "tenant", "", *NEVER_REFUSES)
        elif not on and limited[0]:
            gateway.limits.delete("bench", "tenant", "")
        limited[0] = on

    def mode(metrics_on: bool, traced: bool, limits_on: bool) -> Callable[[], None]:
        def apply() -> None:
            gateway.observers[:] = [metrics.observe_decision] if metrics_on else []
            telemetry.use_tracer_provider(provider if traced else None, propagate=traced)
            limits(limits_on)
        return apply

    off = mode(False, False, False)
    modes: dict[str, Callable[[], None]] = {
        "off": off, "metrics": mode(True, False, False), "traced": mode(True, True, False),
        "limited": mode(True, False, True), "traced + limited": mode(True, True, True),
    }
    modes = {name: apply for name, apply in modes.items() if only is None or name in only}
    seen: dict[str, list[tuple[float, float]]] = {name: [] for name in modes}
    try:
        with ThreadPoolExecutor(CLIENTS) as pool:
            for index, switch in enumerate(modes.values()):
                switch()
                list(pool.map(send, (_fresh(-1 - index, n) for n in range(4 * CLIENTS))))  # warm up
            for round_ in range(ROUNDS):
                for index, (name, switch) in enumerate(modes.items()):
                    switch()
                    seen[name].append(_round(pool, send, partial(_fresh, 10 * round_ + index + 100)))
    finally:
        off()
        provider.shutdown()
        gateway.close()
        database.dispose()
    medians = {name: (statistics.median(r for r, _ in found), statistics.median(c for _, c in found))
               for name, found in seen.items()}
    return medians, exporter.spans


def _admissions(database_url: str) -> dict[str, tuple[float, float]]:
    """CPU and wall µs per admission (admit, then release), one thread: under a rate limit; under a rate and a
    concurrent-call limit."""
    database = open_database(database_url)
    limits = RateLimits(database)
    limits.set("bench", "tenant", "", *NEVER_REFUSES)
    limits.set("bench", "host", "leased.example", *NEVER_REFUSES, concurrent=1000)
    found: dict[str, tuple[float, float]] = {}
    try:
        for name, host in (("rate limit", "hollowbrook.local"), ("rate + concurrent-call limit", "leased.example")):
            for _ in range(100):
                limits.release(limits.admit("bench", "hollowbrook.create_booking", host))
            seen: list[tuple[float, float]] = []
            for _ in range(ROUNDS):
                cpu, wall = _cpu(), time.perf_counter()
                for _ in range(ADMISSIONS):
                    limits.release(limits.admit("bench", "hollowbrook.create_booking", host))
                seen.append(((_cpu() - cpu) / ADMISSIONS * 1e6, (time.perf_counter() - wall) / ADMISSIONS * 1e6))
            found[name] = (statistics.median(c for c, _ in seen), statistics.median(w for _, w in seen))
    finally:
        database.dispose()
    return found


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
            admissions = {"SQLite": _admissions(f"sqlite:///{tmp}/admissions.db")}
        pg_rates: dict[str, tuple[float, float]] = {}
        postgres = _postgres()
        if postgres is not None:
            url, drop = postgres
            try:
                pg_rates, _ = _measure(url, port, compiled.document, PG_MODES)
                admissions["PostgreSQL"] = _admissions(url)
            finally:
                drop()
    finally:
        upstream.stdin.close()
        upstream.wait(10)
    off = rates["off"][0]
    return "\n".join([
        "## Telemetry and rate limits: the gateway's throughput with them on, against off",
        "",
        f"Fresh-key `create_booking` requests through `Gateway.fetch` on SQLite, {CLIENTS} client threads, "
        f"{REQUESTS:,} requests per round, median of {ROUNDS} rounds, the modes interleaved. *Metrics*: "
        "the Prometheus decision counter and histogram. *Traced*: metrics plus a `skillhouse.gateway` and a "
        "`skillhouse.upstream` span per request (SDK `BatchSpanProcessor`, an exporter that drops the spans) "
        f"and `traceparent` sent upstream ({spans:,} spans exported in all). *Limited*: metrics plus a "
        f"tenant-wide rate limit ({NEVER_REFUSES[0]:,} per {NEVER_REFUSES[1]:g} s: it admits every call, and "
        "every call pays for its admission).",
        "",
        "| mode | req/s | ratio to off | CPU µs per request |",
        "|---|---|---|---:|",
        *(f"| {name} | {rate:,.0f} | **{rate / off:.2f}** | {cpu:,.0f} |" for name, (rate, cpu) in rates.items()),
        "",
        "The same on PostgreSQL (where replicas share their limits), three of the modes:",
        "",
        "| mode | req/s | ratio to off | CPU µs per request |",
        "|---|---|---|---:|",
        *(f"| {name} | {rate:,.0f} | **{rate / pg_rates['off'][0]:.2f}** | {cpu:,.0f} |"
          for name, (rate, cpu) in pg_rates.items()),
        *([] if pg_rates else ["| – | – | – | not run: SKILLHOUSE_TEST_POSTGRES_URL unset |"]),
        "",
        f"One admission (`RateLimits.admit` then `release`), one thread, {ADMISSIONS:,} in a row, median of "
        f"{ROUNDS} runs; on PostgreSQL a call under rate limits only is admitted in one statement, one under a "
        "concurrent-call limit takes a lease in a transaction and gives it back in a second.",
        "",
        "| store | limits | CPU µs per admission | wall µs per admission |",
        "|---|---|---:|---:|",
        *(f"| {store} | {name} | {cpu:,.0f} | {wall:,.0f} |"
          for store, found in admissions.items() for name, (cpu, wall) in found.items()),
        *([] if postgres is not None else ["| PostgreSQL | – | – | not run: SKILLHOUSE_TEST_POSTGRES_URL unset |"]),
        "",
    ]) + "\n"


if __name__ == "__main__":
    print(run())
