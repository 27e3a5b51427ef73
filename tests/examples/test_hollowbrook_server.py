"""The Hollowbrook server on loopback: its routes, its refusals, and no duplicate protection."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import HOLLOWBROOK
from tests.hollowbrook import running_hollowbrook

from skillhouse.compiler import compile_dir
from skillhouse.examples import HollowbrookHTTPServer

STAY = {"room_id": 2, "guest_name": "Ada Lovelace", "arrival": "2031-06-01", "departure": "2031-06-03"}


@pytest.fixture
def house() -> Iterator[HollowbrookHTTPServer]:
    with running_hollowbrook() as server:
        yield server


@pytest.fixture
def client(house: HollowbrookHTTPServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=house.url, timeout=5) as client:
        yield client


def error_code(response: httpx.Response) -> str:
    code: str = response.json()["error"]["code"]
    return code


def test_every_declared_operation_has_a_route_with_its_method_and_path() -> None:
    compiled, errors = compile_dir(HOLLOWBROOK)
    assert compiled is not None, errors
    routes = {(op.method, op.url.removeprefix("http://hollowbrook.local:8084")) for op in compiled.operations}
    assert routes == {
        ("GET", "/rooms"), ("GET", "/availability"), ("POST", "/bookings"),
        ("DELETE", "/bookings/{booking_id}"), ("POST", "/charges"),
    }


def test_rooms_are_listed_and_filtered_by_how_many_they_sleep(client: httpx.Client) -> None:
    every = client.get("/rooms").json()["rooms"]
    large = client.get("/rooms", params={"min_guests": 3}).json()["rooms"]
    assert {room["room_id"] for room in every} == {1, 2, 3, 4}
    assert [room["room_id"] for room in large] == [4]
    assert set(every[0]) == {"room_id", "name", "sleeps", "price_eur", "count"}


def test_a_min_guests_that_is_not_an_integer_is_refused_with_its_field(client: httpx.Client) -> None:
    response = client.get("/rooms", params={"min_guests": "two"})
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "min_guests"


def test_booking_returns_an_id_and_the_total_and_shows_in_the_bookings(client: httpx.Client) -> None:
    response = client.post("/bookings", json={**STAY, "note": "late arrival"})
    assert response.status_code == 201
    booking = response.json()
    assert booking["booking_id"].startswith("bk_")
    assert (booking["nights"], booking["total_cents"], booking["note"]) == (2, 16000, "late arrival")
    assert client.get("/bookings").json()["bookings"] == [booking]


def test_a_post_without_a_json_content_type_is_refused_with_415_and_books_nothing(client: httpx.Client) -> None:
    bare = client.post("/bookings", content=json.dumps(STAY).encode())
    as_text = client.post("/bookings", content=json.dumps(STAY), headers={"Content-Type": "text/plain"})
    assert (bare.status_code, as_text.status_code) == (415, 415)
    assert error_code(bare) == "unsupported-media-type"
    assert client.get("/bookings").json()["bookings"] == []


def test_a_resent_booking_really_takes_a_second_room(client: httpx.Client, house: HollowbrookHTTPServer) -> None:
    first, second = client.post("/bookings", json=STAY), client.post("/bookings", json=STAY)
    assert (first.status_code, second.status_code) == (201, 201)
    assert first.json()["booking_id"] != second.json()["booking_id"]
    assert len(house.house.bookings()) == 2


def test_booking_is_refused_only_once_every_room_of_its_kind_is_taken(client: httpx.Client) -> None:
    garden = {**STAY, "room_id": 1}
    assert client.post("/bookings", json=garden).status_code == 201
    overlapping = client.post("/bookings", json={**garden, "arrival": "2031-06-02", "departure": "2031-06-05"})
    assert overlapping.status_code == 409
    assert error_code(overlapping) == "room-taken"
    next_stay = client.post("/bookings", json={**garden, "arrival": "2031-06-03", "departure": "2031-06-04"})
    assert next_stay.status_code == 201


def test_availability_lists_the_nights_that_are_taken(client: httpx.Client) -> None:
    client.post("/bookings", json={**STAY, "room_id": 1})
    query = {"room_id": 1, "arrival": "2031-05-31", "departure": "2031-06-04"}
    answer = client.get("/availability", params=query).json()
    assert (answer["available"], answer["taken"]) == (False, ["2031-06-01", "2031-06-02"])
    free = client.get("/availability", params={**query, "room_id": 4}).json()
    assert (free["available"], free["taken"]) == (True, [])


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"room_id": "2"}, "room_id"),
        ({"room_id": True}, "room_id"),
        ({"guest_name": ""}, "guest_name"),
        ({"arrival": "01/06/2031"}, "arrival"),
        ({"departure": "2031-06-01"}, "departure"),
        ({"departure": "2031-08-01"}, "departure"),
        ({"breakfast": True}, "breakfast"),
        ({"note": 5}, "note"),
    ],
)
def test_invalid_booking_fields_are_refused_with_the_field_named(
    client: httpx.Client, change: dict[str, Any], field: str
) -> None:
    response = client.post("/bookings", json={**STAY, **change})
    assert response.status_code == 400
    assert (error_code(response), response.json()["error"]["field"]) == ("invalid-field", field)


def test_a_missing_field_an_unknown_room_and_a_body_that_is_not_json_are_refused(client: httpx.Client) -> None:
    missing = client.post("/bookings", json={k: v for k, v in STAY.items() if k != "arrival"})
    unknown = client.post("/bookings", json={**STAY, "room_id": 99})
    broken = client.post("/bookings", content=b"{room", headers={"Content-Type": "application/json"})
    listed = client.post("/bookings", json=[STAY])
    assert (missing.status_code, missing.json()["error"]["field"]) == (400, "arrival")
    assert (unknown.status_code, error_code(unknown)) == (404, "unknown-room")
    assert (broken.status_code, error_code(broken)) == (400, "invalid-json")
    assert (listed.status_code, error_code(listed)) == (400, "invalid-body")


def test_cancelling_frees_the_room_and_a_second_cancel_is_refused(client: httpx.Client) -> None:
    booking = client.post("/bookings", json={**STAY, "room_id": 1}).json()
    cancelled = client.delete(f"/bookings/{booking['booking_id']}")
    again = client.delete(f"/bookings/{booking['booking_id']}")
    assert (cancelled.status_code, cancelled.json()["status"]) == (200, "cancelled")
    assert (again.status_code, error_code(again)) == (409, "already-cancelled")
    assert client.post("/bookings", json={**STAY, "room_id": 1}).status_code == 201
    assert error_code(client.delete("/bookings/bk_9999")) == "unknown-booking"


def test_a_charge_runs_against_a_booking_and_every_resend_charges_again(client: httpx.Client) -> None:
    booking = client.post("/bookings", json=STAY).json()
    charge = {"booking_id": booking["booking_id"], "amount_cents": 16000, "description": "two nights"}
    assert client.post("/charges", json=charge).status_code == 201
    assert client.post("/charges", json=charge).status_code == 201
    assert len(client.get("/charges").json()["charges"]) == 2
    unknown = client.post("/charges", json={**charge, "booking_id": "bk_0404"})
    assert (unknown.status_code, error_code(unknown)) == (404, "unknown-booking")


def test_unknown_routes_and_methods_get_404_and_405(client: httpx.Client) -> None:
    assert error_code(client.get("/guests")) == "not-found"
    wrong = client.put("/bookings", json=STAY)
    assert (wrong.status_code, error_code(wrong)) == (405, "method-not-allowed")
    assert client.delete("/rooms").status_code == 405
    assert client.options("/rooms").status_code == 405
    assert client.head("/rooms").status_code == 405


def test_the_server_records_what_reached_it(client: httpx.Client, house: HollowbrookHTTPServer) -> None:
    client.post("/bookings", json=STAY, headers={"Idempotency-Key": "key-1"})
    assert house.received[-1] == {"method": "POST", "path": "/bookings",
                                  "content_type": "application/json", "idempotency_key": "key-1"}
    assert house.house.bookings()[0]["idempotency_key"] == "key-1"


def test_the_command_line_server_starts_answers_and_stops_on_sigterm() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "skillhouse.examples.hollowbrook_server", "--port", "0"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        url = line.strip().rsplit(" ", 1)[-1]
        assert httpx.get(f"{url}/rooms", timeout=5).status_code == 200
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0


def test_a_body_over_the_limit_is_refused_with_413(client: httpx.Client) -> None:
    response = client.post("/bookings", json={**STAY, "note": "x" * 70_000})
    assert (response.status_code, error_code(response)) == (413, "body-too-large")
    assert client.get("/rooms").status_code == 200


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
booking_like = st.fixed_dictionaries(
    {}, optional={"room_id": json_values | st.integers(0, 6), "guest_name": json_values,
                  "arrival": json_values | st.dates().map(str), "departure": json_values | st.dates().map(str),
                  "note": json_values},
)


@settings(max_examples=60, deadline=None)
@given(body=booking_like | json_values)
def test_whatever_json_a_booking_carries_the_answer_is_a_booking_or_a_coded_4xx(body: Any) -> None:
    with running_hollowbrook() as server, httpx.Client(base_url=server.url, timeout=5) as client:
        sent = json.dumps(body).encode()  # json=None would send no body at all
        response = client.post("/bookings", content=sent, headers={"Content-Type": "application/json"})
    assert response.status_code in (201, 400, 404, 409)
    if response.status_code != 201:
        assert error_code(response) in {"invalid-field", "invalid-body", "unknown-room", "room-taken"}


def test_a_client_that_resets_its_connection_prints_no_traceback(
    house: HollowbrookHTTPServer, client: httpx.Client, capfd: pytest.CaptureFixture[str]
) -> None:
    import socket
    import struct
    import time

    for partial in (b"", b"GET /rooms HTTP/1.1\r\nHost: x\r\n"):  # reset while idle, and mid-request
        connection = socket.create_connection(("127.0.0.1", house.port))
        if partial:
            connection.sendall(partial)
        time.sleep(0.1)  # the server's thread is reading
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        connection.close()  # linger 0: a reset, not a close
    time.sleep(0.3)
    assert client.get("/rooms").status_code == 200  # the house still answers
    assert "Traceback" not in capfd.readouterr().err
