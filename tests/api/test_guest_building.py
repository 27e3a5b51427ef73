"""Calls while the wasm guest is being built: ``503 guest-building`` with ``Retry-After``, then real
answers once it is ready; a failed build is ``503 guest-unavailable`` with its error, never a silent
in-process guest.

The build is held by a seam (the ``load`` a :class:`GuestState` runs): it announces its step as the
real build does, then waits for the test's event before loading the suite's cached component.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from tests.hollowbrook import running_hollowbrook
from tests.scratch import scratch_database

from skillhouse.api import create_app
from skillhouse.examples import HollowbrookHTTPServer
from skillhouse.host.guest_state import GuestState, Load, Progress
from skillhouse.host.wasm_build import GuestBuildError
from skillhouse.host.wasm_runner import LoadedComponent, loaded_component
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings

Headers = dict[str, str]
BOOKING = {"room_id": 1, "guest_name": "Grace Hopper", "arrival": "2031-02-01", "departure": "2031-02-02"}
HELD_STAGE = "building the guest component with componentize-py (held by the test)"


class HeldBuild:
    """A build that says what it is doing, then waits for :meth:`finish` before it loads the component."""

    def __init__(self) -> None:
        self.finished = threading.Event()
        self.waiting = threading.Event()

    def __call__(self, progress: Progress) -> LoadedComponent:
        progress(HELD_STAGE)
        self.waiting.set()
        assert self.finished.wait(120), "the test never let the build finish"
        return loaded_component()

    def finish(self) -> None:
        self.finished.set()


def failed_build(progress: Progress) -> LoadedComponent:
    progress("building the guest component with componentize-py (first run only)")
    raise GuestBuildError("build-failed", "componentize-py failed for agent_app.py:\nno space left on device")


@pytest.fixture
def house() -> Iterator[HollowbrookHTTPServer]:
    with running_hollowbrook() as server:
        yield server


@pytest.fixture
def serve_with(tmp_path: Path, house: HollowbrookHTTPServer) -> Iterator[Callable[..., TestClient]]:
    """``serve_with(load, **guest_options)``: a started app whose wasm guest is made ready by ``load``."""
    clients: list[TestClient] = []
    with scratch_database("sqlite", tmp_path) as database:

        def serve(load: Load, **options: float) -> TestClient:
            settings = Settings(data_dir=tmp_path, database_url=database.url, guest="wasm", model="scripted",
                                resolve={("hollowbrook.local", 8084): f"127.0.0.1:{house.port}"},
                                secret_key=Fernet.generate_key().decode())
            client = TestClient(create_app(settings, database, GuestState("wasm", load=load, **options)))
            client.__enter__()  # runs the lifespan: the build starts as serve starts it
            clients.append(client)
            return client

        yield serve
        for client in clients:
            client.__exit__(None, None, None)
            gateway = getattr(client.app.state, "gateway", None)  # type: ignore[attr-defined]
            if gateway is not None:
                gateway.close()


def published_turn(client: TestClient, hollowbrook_files: dict[str, str]) -> tuple[Headers, str]:
    with client.app.state.database.transaction() as session:  # type: ignore[attr-defined]
        secret, _ = create_token(session, "acme", scope="admin")
    headers = {"Authorization": f"Bearer {secret}"}
    base = "/v1/skills/hollowbrook/versions/1.0.0"
    assert client.put(base, json={"files": hollowbrook_files}, headers=headers).status_code == 200
    assert client.post(f"{base}/validate", headers=headers).status_code == 200
    assert client.post(f"{base}/publish", headers=headers).status_code == 201
    turn = client.post("/v1/turns", json={"skills": [{"name": "hollowbrook", "version": "1.0.0"}]}, headers=headers)
    assert turn.status_code == 201, turn.text
    return headers, turn.json()["id"]


def test_a_call_before_the_guest_is_built_answers_guest_building_with_retry_after_then_runs_once_it_is(
    serve_with: Callable[..., TestClient], hollowbrook_files: dict[str, str], house: HollowbrookHTTPServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    build = HeldBuild()
    caplog.set_level(logging.INFO, logger="skillhouse.guest")
    client = serve_with(build)
    headers, turn = published_turn(client, hollowbrook_files)  # the registry works while the guest builds
    assert build.waiting.wait(30)
    call = {"tool": "hollowbrook_create_booking", "arguments": BOOKING}

    early = client.post(f"/v1/turns/{turn}/calls", json=call, headers=headers)
    run = client.post(f"/v1/turns/{turn}/run", json={"prompt": "book a room"}, headers=headers)
    status = client.get("/v1/guest", headers=headers).json()

    assert early.status_code == 503
    assert early.json()["error"]["code"] == "guest-building"
    assert HELD_STAGE in early.json()["error"]["message"]
    assert early.headers["Retry-After"] == "10"
    assert (run.status_code, run.json()["error"]["code"], run.headers["Retry-After"]) == (503, "guest-building", "10")
    assert status["kind"] == "wasm" and status["state"] == "building" and status["stage"] == HELD_STAGE
    assert house.house.bookings() == []  # nothing was sent, by any guest
    assert any(HELD_STAGE in record.getMessage() for record in caplog.records)

    build.finish()
    guest: GuestState = client.app.state.guest  # type: ignore[attr-defined]
    assert guest.wait(60).state == "ready"
    later = client.post(f"/v1/turns/{turn}/calls", json=call, headers=headers)

    assert later.status_code == 200, later.text
    assert later.json()["status"] == 201
    assert len(house.house.bookings()) == 1
    assert client.get("/v1/guest", headers=headers).json()["state"] == "ready"
    assert any("guest is ready" in record.getMessage() for record in caplog.records)


def test_a_failed_build_answers_guest_unavailable_with_its_error_and_never_runs_the_guest_in_process(
    serve_with: Callable[..., TestClient], hollowbrook_files: dict[str, str], house: HollowbrookHTTPServer,
) -> None:
    client = serve_with(failed_build)
    headers, turn = published_turn(client, hollowbrook_files)
    guest: GuestState = client.app.state.guest  # type: ignore[attr-defined]
    assert guest.wait(30).state == "failed"

    answer = client.post(f"/v1/turns/{turn}/calls", json={"tool": "hollowbrook_create_booking", "arguments": BOOKING},
                         headers=headers)

    assert answer.status_code == 503
    assert answer.json()["error"]["code"] == "guest-unavailable"
    assert "no space left on device" in answer.json()["error"]["message"]
    assert "Retry-After" not in answer.headers
    assert house.house.bookings() == []
    status = client.get("/v1/guest", headers=headers).json()
    assert status["state"] == "failed" and "no space left on device" in status["message"]


def test_a_guest_read_from_a_warm_cache_takes_calls_at_once(
    serve_with: Callable[..., TestClient], hollowbrook_files: dict[str, str], house: HollowbrookHTTPServer,
) -> None:
    client = serve_with(lambda progress: loaded_component())  # announces no build step: a warm cache
    headers, turn = published_turn(client, hollowbrook_files)

    answer = client.post(f"/v1/turns/{turn}/calls", json={"tool": "hollowbrook_create_booking", "arguments": BOOKING},
                         headers=headers)

    assert answer.status_code == 200 and answer.json()["status"] == 201


def test_the_guest_status_needs_a_token(serve_with: Callable[..., TestClient]) -> None:
    client = serve_with(lambda progress: loaded_component())

    assert client.get("/v1/guest").status_code == 401


class Heard(logging.Handler):
    """Sets ``event`` when a log line containing ``words`` is emitted."""

    def __init__(self, words: str) -> None:
        super().__init__()
        self.words = words
        self.event = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.words in record.getMessage():
            self.event.set()


def test_a_long_build_step_keeps_saying_what_it_is_doing_in_the_log(serve_with: Callable[..., TestClient]) -> None:
    build = HeldBuild()
    heard = Heard(f"still {HELD_STAGE}")
    logger = logging.getLogger("skillhouse.guest")
    logger.addHandler(heard)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        serve_with(build, heartbeat_seconds=0.05)
        assert heard.event.wait(30)
    finally:
        build.finish()
        logger.removeHandler(heard)
        logger.setLevel(level)
