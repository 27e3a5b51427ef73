"""``skillhouse serve`` under an orchestrator: SIGTERM during calls stops accepting new connections,
lets the calls finish and send their answers (nothing lost), then exits; the same calls through a
restarted serve are replayed from the store (nothing resent); a call still running at
the shutdown deadline is logged as unfinished, never resent; with
``SKILLHOUSE_LOG_FORMAT=json`` every log line is one JSON object, the call's with its request id."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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


@dataclass
class Served:
    url: str
    token: str
    turn_id: str
    process: subprocess.Popen[bytes]
    log: Path
    env: dict[str, str]

    def call_in_background(self, booking: dict[str, Any] = BOOKING) -> tuple[threading.Thread, list[httpx.Response | Exception]]:
        answers: list[httpx.Response | Exception] = []

        def call() -> None:
            try:
                answers.append(httpx.post(f"{self.url}/v1/turns/{self.turn_id}/calls", timeout=60,
                                          headers={"Authorization": f"Bearer {self.token}"},
                                          json={"tool": "hollowbrook_create_booking", "arguments": booking}))
            except httpx.TransportError as exc:
                answers.append(exc)

        thread = threading.Thread(target=call)
        thread.start()
        return thread, answers

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]  # every line is JSON


@contextmanager
def serving(tmp_path: Path, house: HeldHouse, shutdown_seconds: int) -> Iterator[Served]:
    """``skillhouse serve`` with JSON logs, Hollowbrook published and a turn bound."""
    database_url = f"sqlite:///{tmp_path / 'skillhouse.db'}"
    token = token_in(database_url)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "SKILLHOUSE_DATABASE_URL": database_url, "SKILLHOUSE_DATA_DIR": str(tmp_path),
           "SKILLHOUSE_GUEST": "inprocess", "SKILLHOUSE_RESOLVE": f"hollowbrook.local:8084=127.0.0.1:{house.port}",
           "SKILLHOUSE_SECRET_KEY": Fernet.generate_key().decode(), "SKILLHOUSE_LOG_FORMAT": "json",
           "SKILLHOUSE_SHUTDOWN_SECONDS": str(shutdown_seconds)}
    log = tmp_path / "serve.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen([str(SKILLHOUSE), "serve", "--port", str(port)], env=env,
                                   stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        wait_until_serving(url, process)
        files = {p.name: p.read_text(encoding="utf-8") for p in sorted(HOLLOWBROOK.iterdir()) if p.is_file()}
        yield Served(url, token, publish_and_bind(url, token, files), process, log, env)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def until(condition: Callable[[], bool], seconds: float = 10.0) -> bool:
    pause = threading.Event()
    for _ in range(int(seconds / 0.05)):
        if condition():
            return True
        pause.wait(0.05)
    return condition()


def test_a_call_past_the_shutdown_deadline_is_logged_as_unfinished_and_sent_once(
    tmp_path: Path, house: HeldHouse
) -> None:
    with serving(tmp_path, house, shutdown_seconds=1) as served:
        call, answers = served.call_in_background()
        assert house.arrived.wait(30), "the booking never reached the house"
        served.process.send_signal(signal.SIGTERM)
        # uvicorn says when the deadline has passed and it cancels what is still running
        assert until(lambda: any("Cancel" in e["message"] for e in served.events()), 30), served.events()
        house.release.set()
        call.join(60)
        assert served.process.wait(30) in (0, -signal.SIGTERM)
        events = served.events()
    (unfinished,) = [e for e in events if e["message"].endswith("did not finish before shutdown")]
    assert unfinished["level"] == "warning" and unfinished["route"] == "/v1/turns/{turn_id}/calls"
    assert not isinstance(answers[0], httpx.Response) or answers[0].status_code != 200
    assert len([r for r in house.received if (r["method"], r["path"]) == ("POST", "/bookings")]) == 1


@contextmanager
def serving_again(served: Served) -> Iterator[str]:
    """Another ``skillhouse serve`` on the same store and settings (a replica restarted); its URL."""
    port = free_port()
    process = subprocess.Popen([str(SKILLHOUSE), "serve", "--port", str(port)], env=served.env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_serving(f"http://127.0.0.1:{port}", process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(30)


def test_sigterm_during_several_calls_loses_none_and_a_restarted_serve_resends_none(
    tmp_path: Path, house: HeldHouse
) -> None:
    bookings = [{**BOOKING, "guest_name": f"Guest {n}", "arrival": f"2030-0{n}-01", "departure": f"2030-0{n}-03"}
                for n in (1, 2, 3)]

    def posted() -> int:
        return len([r for r in house.received if (r["method"], r["path"]) == ("POST", "/bookings")])

    with serving(tmp_path, house, shutdown_seconds=30) as served:
        calls = [served.call_in_background(booking) for booking in bookings]
        assert until(lambda: posted() == 3, 30), "the bookings never all reached the house"
        served.process.send_signal(signal.SIGTERM)
        assert until(lambda: refused(served.url)), "serve still accepts connections after SIGTERM"
        assert served.process.poll() is None, "serve exited with calls in flight"
        house.release.set()
        for thread, _ in calls:
            thread.join(60)
        # uvicorn re-raises the signal once it has shut down, so the status says SIGTERM ended it
        assert served.process.wait(30) in (0, -signal.SIGTERM)
        # nothing lost: every call in flight was answered with the booking it made
        answers = [answered[0] for _, answered in calls]
        assert all(isinstance(a, httpx.Response) and a.status_code == 200 and a.json()["status"] == 201
                   for a in answers), answers
        # nothing resent: the same calls through a restarted serve are answered from the store
        with serving_again(served) as url:
            again = [httpx.post(f"{url}/v1/turns/{served.turn_id}/calls", timeout=60,
                                headers={"Authorization": f"Bearer {served.token}"},
                                json={"tool": "hollowbrook_create_booking", "arguments": booking}).json()
                     for booking in bookings]
        events = served.events()
    assert [a.get("replayed") for a in again] == [True, True, True]
    assert [a["body"] for a in again] == [a.json()["body"] for a in answers if isinstance(a, httpx.Response)]
    assert posted() == 3 and len(house.house.bookings()) == 3
    # the log: one JSON object per line, each call's with its request id, and never the token
    assert any(e["logger"] == "skillhouse.serve" and e["message"].startswith("credentials:") for e in events)
    assert {"/openapi.json", "/v1/turns"} <= {e.get("route") for e in events}
    logged = [e for e in events if e.get("route") == "/v1/turns/{turn_id}/calls"]
    assert all(e["status"] == 200 and len(e["request_id"]) == 32 and e["level"] == "info" for e in logged)
    assert sorted(e["request_id"] for e in logged) == sorted(a.headers["x-request-id"] for a in answers
                                                             if isinstance(a, httpx.Response))
    assert served.token not in served.log.read_text(encoding="utf-8")
