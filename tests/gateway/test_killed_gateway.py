"""A gateway process killed after sending upstream and before recording the response: the retry
does not send again, and reports the key unresolved."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from tests.gateway.conftest import booking_request, gateway_for
from tests.gateway.upstream_server import Upstream
from tests.gateway.wire import fetch_json

from skillhouse.gateway import KeyPolicy, TurnContext
from skillhouse.store.database import Database

PROCESS = Path(__file__).with_name("gateway_process.py")
ROOT = Path(__file__).resolve().parents[2]


def test_a_gateway_killed_mid_call_is_never_resent_and_its_key_is_unresolved(
    database: Database, database_url: str, upstream: Upstream, turn: TurnContext
) -> None:
    upstream.recorder.hold = threading.Event()
    child = subprocess.Popen(
        [sys.executable, str(PROCESS), database_url, str(upstream.port), "0.5"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert upstream.recorder.received.wait(20), child.stderr.read().decode() if child.stderr else ""
        child.kill()  # SIGKILL: no cleanup, no chance to record anything
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.stdout is not None and child.stdout.read() == b""
    retry_gateway = gateway_for(database, upstream, keys=KeyPolicy(wait_seconds=10))
    answer = fetch_json(retry_gateway, turn, booking_request())
    assert answer["error"]["code"] == "upstream-unresolved"
    assert len(upstream.recorder.bookings) == 1
    again = fetch_json(retry_gateway, turn, booking_request())
    assert again["error"]["code"] == "upstream-unresolved"
    assert len(upstream.recorder.bookings) == 1
    upstream.recorder.hold.set()
    retry_gateway.close()
