"""``skillhouse serve`` under an orchestrator: SIGTERM during a call stops accepting new connections,
lets the call finish and send its answer (sent once, never again), then exits; with
``SKILLHOUSE_LOG_FORMAT=json`` every log line is one JSON object, the call's with its request id."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet
from tests.api.served import SKILLHOUSE, free_port, wait_until_serving
from tests.api.test_concurrent_bookings import BOOKING, publish_and_bind, token_in

from skillhouse.examples import HollowbrookHTTPServer

HOLLOWBROOK = Path(__file__).resolve().parents[2] / "examples" / "hollowbrook"


class HeldHouse(HollowbrookHTTPServer):
    """Hollowbrook holding each new booking until ``release`` is set (``arrived`` says one is held)."""

    def __init__(self, address: tuple[str, int]) -> None:
        super().__init__(address)
        self.arrived, self.release = threading.Event(), threading.Event()

    def record(self, method: str, path: str, headers: Any) -> None:
        super().record(method, path, headers)
        if (method, path) == ("POST", "/bookings"):
            self.arrived.set()
            self.release.wait(60)


@pytest.fixture
def house() -> Iterator[HeldHouse]:
    server = HeldHouse(("127.0.0.1", 0))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join(10)


def refused(url: str) -> bool:
    try:
        httpx.get(f"{url}/healthz", timeout=2)
    except httpx.ConnectError:
        return True
    return False


def test_sigterm_during_a_call_lets_it_finish_and_sends_it_once(tmp_path: Path, house: HeldHouse) -> None:
    database_url = f"sqlite:///{tmp_path / 'skillhouse.db'}"
    token = token_in(database_url)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "SKILLHOUSE_DATABASE_URL": database_url, "SKILLHOUSE_DATA_DIR": str(tmp_path),
           "SKILLHOUSE_GUEST": "inprocess", "SKILLHOUSE_RESOLVE": f"hollowbrook.local:8084=127.0.0.1:{house.port}",
           "SKILLHOUSE_SECRET_KEY": Fernet.generate_key().decode(), "SKILLHOUSE_LOG_FORMAT": "json",
           "SKILLHOUSE_SHUTDOWN_SECONDS": "30"}
    log = tmp_path / "serve.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen([str(SKILLHOUSE), "serve", "--port", str(port)], env=env,
                                   stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        wait_until_serving(url, process)
        files = {p.name: p.read_text(encoding="utf-8") for p in sorted(HOLLOWBROOK.iterdir()) if p.is_file()}
        turn_id = publish_and_bind(url, token, files)
        answers: list[httpx.Response] = []
        call = threading.Thread(target=lambda: answers.append(httpx.post(
            f"{url}/v1/turns/{turn_id}/calls", headers={"Authorization": f"Bearer {token}"}, timeout=60,
            json={"tool": "hollowbrook_create_booking", "arguments": BOOKING})))
        call.start()
        assert house.arrived.wait(30), "the booking never reached the house"
        process.send_signal(signal.SIGTERM)
        pause = threading.Event()
        for _ in range(200):  # uvicorn closes its listening socket on the signal
            if refused(url):
                break
            pause.wait(0.05)
        assert refused(url), "serve still accepts connections after SIGTERM"
        assert process.poll() is None, "serve exited with a call in flight"
        house.release.set()
        call.join(60)
        # uvicorn re-raises the signal once it has shut down, so the status says SIGTERM ended it
        assert process.wait(30) in (0, -signal.SIGTERM)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    (answer,) = answers
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == 201
    assert len(house.house.bookings()) == 1
    assert len([r for r in house.received if (r["method"], r["path"]) == ("POST", "/bookings")]) == 1
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]  # every line is JSON
    assert any(e["logger"] == "skillhouse.serve" and e["message"].startswith("credentials:") for e in events)
    assert {"/openapi.json", "/v1/turns"} <= {e.get("route") for e in events}
    (logged,) = [e for e in events if e.get("route") == "/v1/turns/{turn_id}/calls"]
    assert logged["status"] == 200 and len(logged["request_id"]) == 32 and logged["level"] == "info"
    assert answer.headers["x-request-id"] == logged["request_id"]
    assert token not in log.read_text(encoding="utf-8")
