"""Gateway throughput against direct calls to the same loopback upstream, with idempotency on.

Each gateway request is a distinct ``create_booking`` (its own identity), so every one claims a key,
sends, and stores its response: the full path, not replays. SQLite in a temporary file, and PostgreSQL
in a fresh database when ``SKILLHOUSE_TEST_POSTGRES_URL`` (or ``SKILLHOUSE_BENCH_POSTGRES_URL``) is set.
Target (shared/TARGETS.md): gateway ≥ 0.5 × direct.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import psycopg
from sqlalchemy.engine import make_url

from skillhouse.compiler import compile_dir
from skillhouse.gateway import BoundReleases, Gateway, GatewayConfig, TurnContext
from skillhouse.store.database import open_database

ROOT = Path(__file__).resolve().parents[1]
REQUESTS = 400


class _Bookings(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # one response, one segment: no 40 ms delayed-ACK stalls
    wbufsize = 65536

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        data = json.dumps({"id": uuid.uuid4().hex[:8], **json.loads(body)}).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _booking(n: int) -> str:
    return json.dumps({"arrival": "2030-05-01", "departure": "2030-05-03", "guest_name": f"G{n}", "room_id": 2})


def _rate(send: Callable[[int], None]) -> float:
    for n in range(20):
        send(-n - 1)  # warm the pools
    rates = []
    for _round in range(3):
        start = time.perf_counter()
        for n in range(REQUESTS):
            send(n + _round * REQUESTS)
        rates.append(REQUESTS / (time.perf_counter() - start))
    return statistics.median(rates)


def _measure(database_url: str, port: int, release: dict[str, Any]) -> float:
    database = open_database(database_url)
    config = GatewayConfig(resolve={("hollowbrook.local", 8084): f"127.0.0.1:{port}"})
    gateway = Gateway(database, config)
    turn = TurnContext("bench", None, BoundReleases([release]))
    headers = {"Content-Type": "application/json"}

    def send(n: int) -> None:
        answer = gateway.fetch(turn, {"method": "POST", "url": "http://hollowbrook.local:8084/bookings",
                                      "headers": headers, "body": _booking(n + 10_000 * len(database_url))})  # fmt: skip
        assert answer.get("status") == 201, answer

    try:
        return _rate(send)
    finally:
        gateway.close()
        database.dispose()


def _postgres() -> tuple[str, Callable[[], None]] | None:
    base = os.environ.get("SKILLHOUSE_BENCH_POSTGRES_URL") or os.environ.get("SKILLHOUSE_TEST_POSTGRES_URL")
    if not base:
        return None
    name = f"skh_bench_{uuid.uuid4().hex[:10]}"
    admin = make_url(base).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return make_url(base).set(database=name).render_as_string(hide_password=False), drop


def run() -> str:
    compiled, errors = compile_dir(ROOT / "examples" / "hollowbrook")
    assert compiled is not None, errors
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Bookings)
    server.daemon_threads = True
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = httpx.Client()
    url = f"http://127.0.0.1:{port}/bookings"

    def direct(n: int) -> None:
        assert client.post(url, content=_booking(n), headers={"Content-Type": "application/json"}).status_code == 201

    lines = [
        "## Gateway: throughput against direct calls (idempotency on)",
        "",
        f"Sequential `create_booking` requests to a loopback upstream, {REQUESTS} per round, median of 3 rounds; "
        "each gateway request has its own identity, so each claims a key, sends, and stores its response. "
        "Target: gateway ≥ 0.5 × direct.",
        "",
        "| store | direct req/s | gateway req/s | ratio |",
        "|---|---|---|---|",
    ]
    try:
        direct_rate = _rate(direct)
        with tempfile.TemporaryDirectory() as tmp:
            sqlite_rate = _measure(f"sqlite:///{tmp}/bench.db", port, compiled.document)
        lines.append(f"| SQLite | {direct_rate:,.0f} | {sqlite_rate:,.0f} | {sqlite_rate / direct_rate:.2f} |")
        postgres = _postgres()
        if postgres is None:
            lines.append("| PostgreSQL | – | – | not run: SKILLHOUSE_TEST_POSTGRES_URL unset |")
        else:
            pg_url, drop = postgres
            try:
                pg_rate = _measure(pg_url, port, compiled.document)
            finally:
                drop()
            lines.append(f"| PostgreSQL | {direct_rate:,.0f} | {pg_rate:,.0f} | {pg_rate / direct_rate:.2f} |")
    finally:
        client.close()
        server.shutdown()
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
