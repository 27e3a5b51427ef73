"""Three ``skillhouse serve`` processes on one PostgreSQL schema hold one rate limit between them.

A limit of ``LIMIT`` calls per hour on ``hollowbrook.list_rooms``, set through one replica's API, admits exactly
``LIMIT`` of ``CALLS`` calls released together and spread over the three; every other call answers the model
``rate-limited`` with the seconds to wait and never reaches the upstream. Then the upstream's own 429 with
``Retry-After``, answered to a call through one replica, holds the tenant's next calls to that host on the
other two, again without sending them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet
from tests.api.served import serve_processes
from tests.api.test_concurrent_bookings import publish_and_bind, token_in
from tests.gateway.upstream_server import Upstream
from tests.real_parts import postgres_url
from tests.scratch import postgres_schema_url

LIMIT = 10
CALLS = 36
ROOMS = {"tool": "hollowbrook_list_rooms", "arguments": {}}


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


def list_rooms(url: str, token: str, turn_id: str) -> dict[str, Any]:
    response = httpx.post(f"{url}/v1/turns/{turn_id}/calls", json=ROOMS, headers={"Authorization": f"Bearer {token}"},
                          timeout=60)
    assert response.status_code == 200, response.text  # an answer to the model, refusals included
    answer: dict[str, Any] = response.json()
    return answer


def rooms_sent(upstream: Upstream) -> int:
    return len([r for r in upstream.recorder.requests if r["path"].startswith("/rooms")])


def test_three_serve_processes_admit_exactly_n_between_them_and_share_an_upstreams_retry_after(
    tmp_path: Path, upstream: Upstream, hollowbrook_files: dict[str, str]
) -> None:
    with postgres_schema_url(postgres_url()) as database_url:
        token = token_in(database_url)  # migrates the schema first, so the three servers find it ready
        env = {"SKILLHOUSE_DATABASE_URL": database_url, "SKILLHOUSE_DATA_DIR": str(tmp_path),
               "SKILLHOUSE_GUEST": "inprocess", "SKILLHOUSE_RESOLVE": f"hollowbrook.local:8084=127.0.0.1:{upstream.port}",
               "SKILLHOUSE_SECRET_KEY": Fernet.generate_key().decode()}
        with serve_processes(3, env) as urls:
            admin = {"Authorization": f"Bearer {token}"}
            turn_id = publish_and_bind(urls[0], token, hollowbrook_files)
            limit = {"scope": "operation", "subject": "hollowbrook.list_rooms", "requests": LIMIT, "window_seconds": 3600}
            assert httpx.put(f"{urls[1]}/v1/limits", json=limit, headers=admin, timeout=30).status_code == 200

            start = threading.Barrier(CALLS, timeout=60)

            def call(index: int) -> dict[str, Any]:
                start.wait()
                return list_rooms(urls[index % 3], token, turn_id)

            with ThreadPoolExecutor(CALLS) as pool:
                answers = list(pool.map(call, range(CALLS)))
            admitted = [a for a in answers if a.get("status") == 200]
            limited = [a["error"] for a in answers if "error" in a]
            assert len(admitted) == LIMIT and len(limited) == CALLS - LIMIT, [a for a in answers if "status" not in a][:2]
            assert {(e["code"], e["limit"]) for e in limited} == {("rate-limited", "operation hollowbrook.list_rooms")}
            # the next call is admitted one interval (3600 s / LIMIT) after the burst, in whole seconds
            assert all(1 <= e["retry_after"] <= 3600 // LIMIT + 1 for e in limited)
            assert rooms_sent(upstream) == LIMIT

            # the upstream's own 429: asked through one replica, honoured by the others
            removed = httpx.delete(f"{urls[2]}/v1/limits", params={"scope": "operation", "subject": "hollowbrook.list_rooms"},
                                   headers=admin, timeout=30)
            assert removed.status_code == 204
            upstream.recorder.busy = "120"
            assert list_rooms(urls[0], token, turn_id)["status"] == 429
            upstream.recorder.busy = None
            for url in urls[1:]:
                held = list_rooms(url, token, turn_id)["error"]
                assert (held["code"], held["limit"]) == ("rate-limited", "upstream hollowbrook.local")
                assert 110 <= held["retry_after"] <= 120
            assert rooms_sent(upstream) == LIMIT + 1
            waits = httpx.get(f"{urls[2]}/v1/limits", headers=admin, timeout=30).json()["upstream_waits"]
            assert [(w["host"], w["status"]) for w in waits] == [("hollowbrook.local", 429)]
