"""100 concurrent identical ``create_booking`` calls through ``POST /v1/turns/{id}/calls`` make one booking.

Real servers on loopback: the API under uvicorn (in a thread, or two ``skillhouse serve`` processes
sharing one PostgreSQL schema, requests alternating between them), the Hollowbrook house recording
every booking, and 100 client threads released together by a barrier. Whatever the interleaving,
the house holds exactly one booking and every answer is that booking: the first as sent, the rest
replayed from the idempotency key (or, for a duplicate that waited out its bound, a 409-style
``idempotency-conflict``, which never sends).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet
from tests.api.served import serve_processes, serving_in_thread
from tests.hollowbrook import running_hollowbrook
from tests.real_parts import postgres_url
from tests.scratch import postgres_schema_url, scratch_database

from skillhouse.api import create_app
from skillhouse.examples import HollowbrookHTTPServer
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings
from skillhouse.store import open_database

CALLS = 100
BOOKING = {"room_id": 3, "guest_name": "Grace Hopper", "arrival": "2030-06-01", "departure": "2030-06-04"}


@pytest.fixture
def house() -> Iterator[HollowbrookHTTPServer]:
    with running_hollowbrook() as server:
        yield server


def token_in(database_url: str, tenant: str = "acme") -> str:
    database = open_database(database_url)
    try:
        with database.transaction() as session:
            secret, _ = create_token(session, tenant, scope="admin")
    finally:
        database.dispose()
    return secret


def publish_and_bind(url: str, token: str, files: dict[str, str]) -> str:
    headers = {"Authorization": f"Bearer {token}"}
    base = f"{url}/v1/skills/hollowbrook/versions/1.0.0"
    with httpx.Client(headers=headers, timeout=60) as client:
        assert client.put(base, json={"files": files}).status_code == 200
        assert client.post(f"{base}/validate").status_code == 200
        assert client.post(f"{base}/publish").status_code == 201
        turn = client.post(f"{url}/v1/turns", json={"skills": [{"name": "hollowbrook", "version": "1.0.0"}]})
        assert turn.status_code == 201, turn.text
        return str(turn.json()["id"])


def book_concurrently(urls: list[str], token: str, turn_id: str) -> list[dict[str, Any]]:
    """``CALLS`` identical calls, released together, alternating between ``urls``; their answers."""
    barrier = threading.Barrier(CALLS, timeout=60)
    body = {"tool": "hollowbrook_create_booking", "arguments": BOOKING}

    def one(index: int) -> dict[str, Any]:
        url = urls[index % len(urls)]
        with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=120) as client:
            barrier.wait()
            response = client.post(f"{url}/v1/turns/{turn_id}/calls", json=body)
        assert response.status_code == 200, response.text
        answer: dict[str, Any] = response.json()
        return answer

    with ThreadPoolExecutor(CALLS) as pool:
        return list(pool.map(one, range(CALLS)))


def assert_one_booking(answers: list[dict[str, Any]], house: HollowbrookHTTPServer) -> None:
    (booking,) = house.house.bookings()
    assert len([r for r in house.received if r["method"] == "POST" and r["path"] == "/bookings"]) == 1
    sent = [a for a in answers if "status" in a and not a.get("replayed")]
    replayed = [a for a in answers if a.get("replayed") is True]
    waited_out = [a for a in answers if a.get("error", {}).get("code") == "idempotency-conflict"]
    assert len(sent) == 1 and sent[0]["status"] == 201
    assert len(sent) + len(replayed) + len(waited_out) == CALLS, [a for a in answers if "error" in a][:3]
    assert {json.loads(a["body"])["booking_id"] for a in sent + replayed} == {booking["booking_id"]}


def settings_for(database_url: str, tmp_path: Path, house: HollowbrookHTTPServer) -> Settings:
    return Settings(data_dir=tmp_path, database_url=database_url, guest="inprocess", key_wait_seconds=60,
                    resolve={("hollowbrook.local", 8084): f"127.0.0.1:{house.port}"},
                    secret_key=Fernet.generate_key().decode())


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_hundred_identical_bookings_through_the_api_make_one(
    kind: str, tmp_path: Path, house: HollowbrookHTTPServer, hollowbrook_files: dict[str, str]
) -> None:
    server = postgres_url() if kind == "postgresql" else None
    with scratch_database(kind, tmp_path, server) as database:
        app = create_app(settings_for(database.url, tmp_path, house), database)
        token = token_in(database.url)
        with serving_in_thread(app) as url:
            turn_id = publish_and_bind(url, token, hollowbrook_files)
            answers = book_concurrently([url], token, turn_id)
        app.state.gateway.close()
    assert_one_booking(answers, house)


def test_a_hundred_identical_bookings_split_between_two_serve_processes_make_one(
    tmp_path: Path, house: HollowbrookHTTPServer, hollowbrook_files: dict[str, str]
) -> None:
    with postgres_schema_url(postgres_url()) as database_url:
        token = token_in(database_url)  # migrates the schema first, so the two servers find it ready
        env = {"SKILLHOUSE_DATABASE_URL": database_url, "SKILLHOUSE_DATA_DIR": str(tmp_path),
               "SKILLHOUSE_GUEST": "inprocess", "SKILLHOUSE_RESOLVE": f"hollowbrook.local:8084=127.0.0.1:{house.port}",
               "SKILLHOUSE_SECRET_KEY": Fernet.generate_key().decode(), "SKILLHOUSE_KEY_WAIT_SECONDS": "60"}
        with serve_processes(2, env) as urls:
            turn_id = publish_and_bind(urls[0], token, hollowbrook_files)
            answers = book_concurrently(urls, token, turn_id)
    assert_one_booking(answers, house)
