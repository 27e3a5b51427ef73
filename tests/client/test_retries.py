"""The client sends a request again only where that is safe: after a connection that was never made (any
request), and after a signal to come back (503 ``guest-building`` with ``Retry-After``) only for a request
that may be repeated; a POST whose answer was lost is never sent twice.

Real sockets throughout: a closed port, a loopback listener that reads a request and hangs up, and the API
with a wasm guest whose build the test holds (see tests/api/test_guest_building.py).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from tests.api.served import free_port
from tests.client.served import HOLLOWBROOK, Served, serving

from skillhouse.client import Client, GuestBuilding, RateLimited, Retries, ServerUnreachable
from skillhouse.errors import Signal
from skillhouse.host.guest_state import GuestState, Progress
from skillhouse.host.wasm_runner import LoadedComponent, loaded_component
from skillhouse.wire.skills import ReleaseOut

QUICK = Retries(attempts=3, connect_backoff=0.01)
BOOKING = {"room_id": 1, "guest_name": "Grace Hopper", "arrival": "2031-02-01", "departure": "2031-02-02"}


class Counting(httpx.HTTPTransport):
    """The real transport, counting what it is asked to send."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(f"{request.method} {request.url.path}")
        return super().handle_request(request)


@pytest.fixture
def hanging_up() -> Iterator[str]:
    """A loopback server that reads each request and closes the connection without answering."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.05)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.recv(65536)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def test_a_connection_that_is_never_made_is_tried_again_then_raised_as_not_sent() -> None:
    transport = Counting()
    with Client(f"http://127.0.0.1:{free_port()}", "skh_x", retries=QUICK, transport=transport) as client, \
            pytest.raises(ServerUnreachable) as unreachable:
        client.bind(["hollowbrook@1.0.0"])  # a POST: nothing left, so trying again is safe
    assert unreachable.value.sent is False and unreachable.value.details == {"sent": False}
    assert transport.sent == ["POST /v1/turns"] * 3


def test_a_post_whose_answer_is_lost_is_sent_once_and_a_get_is_sent_again(hanging_up: str) -> None:
    transport = Counting()
    with Client(hanging_up, "skh_x", retries=QUICK, transport=transport) as client:
        with pytest.raises(ServerUnreachable) as lost:
            client.bind(["hollowbrook@1.0.0"])
        assert lost.value.sent is True
        assert transport.sent == ["POST /v1/turns"]
        with pytest.raises(ServerUnreachable):
            client.approvals()
        assert transport.sent[1:] == ["GET /v1/approvals"] * 3


class HeldBuild:
    """A wasm guest build that waits for :meth:`finish` before it loads the suite's cached component."""

    def __init__(self) -> None:
        self.finished = threading.Event()

    def __call__(self, progress: Progress) -> LoadedComponent:
        progress("building the guest component (held by the test)")
        assert self.finished.wait(120), "the test never let the build finish"
        return loaded_component()


class FinishingTheBuild(Counting):
    """Lets the held build finish once the first answer has come back."""

    def __init__(self, build: HeldBuild) -> None:
        super().__init__()
        self.build = build

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        self.build.finished.set()
        return response


@contextmanager
def _released(build: HeldBuild) -> Iterator[None]:
    try:
        yield
    finally:
        build.finished.set()  # a failing test leaves no build thread waiting


def test_guest_building_is_raised_for_a_plain_call_and_waited_out_for_a_replayable_one(tmp_path: Path) -> None:
    build = HeldBuild()
    with serving(tmp_path, GuestState("wasm", load=build, retry_after=1, settle_seconds=0.01)) as served, \
            _released(build):
        with Client(served.url, served.tokens["admin"]) as admin:
            turn = admin.bind([f"hollowbrook@{admin.publish(HOLLOWBROOK).version}"])
            with pytest.raises(GuestBuilding) as building:
                admin.call(turn.id, "hollowbrook_create_booking", BOOKING)
        assert isinstance(building.value, Signal) and building.value.status == 503
        assert building.value.retry_after == 1

        transport = FinishingTheBuild(build)
        with Client(served.url, served.tokens["admin"], transport=transport, retries=Retries(attempts=30)) as admin:
            # create_booking declares an identity: the gateway answers a repeat from its key
            booked = admin.call(turn.id, "hollowbrook_create_booking", BOOKING, replayable=True)
        assert booked.status == 201 and len(served.house.house.bookings()) == 1
        assert len(transport.sent) >= 2 and set(transport.sent) == {f"POST /v1/turns/{turn.id}/calls"}


def test_a_rate_limited_call_is_raised_when_plain_and_waited_out_when_replayable(
    served: Served, admin: Client, release: ReleaseOut
) -> None:
    # waits out the server's real retry_after (a second): the one wait this test is about
    turn = admin.bind([f"hollowbrook@{release.version}"])
    limits = httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {served.tokens['admin']}"})
    limit = {"scope": "operation", "subject": "hollowbrook.list_rooms", "requests": 1, "window_seconds": 1}
    assert limits.put("/v1/limits", json=limit).status_code == 200
    try:
        listed_before = len([r for r in served.house.received if r["path"] == "/rooms"])
        assert admin.call(turn.id, "hollowbrook_list_rooms").status == 200
        with pytest.raises(RateLimited) as limited:
            admin.call(turn.id, "hollowbrook_list_rooms")
        assert isinstance(limited.value, Signal) and limited.value.retry_after >= 1
        # listing rooms is a GET upstream: repeating it is safe, so the caller marks it replayable
        assert admin.call(turn.id, "hollowbrook_list_rooms", replayable=True).status == 200
        listed = [r for r in served.house.received if r["path"] == "/rooms"]
        assert len(listed) == listed_before + 2  # the held call never reached the house
    finally:
        limits.delete("/v1/limits", params={"scope": "operation", "subject": "hollowbrook.list_rooms"})
        limits.close()
