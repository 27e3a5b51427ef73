"""Scripted plans for the Hollowbrook task set, one per task and arm: what ``--model scripted`` plays.

The ``tools`` plans make the moves of the source document's three failures through the tools arm,
where each now ends well: operations loaded by the names the skill lists (``load-operations``), a
skill file fetched from an invented host and read where the refusal points (``eval-list-rooms``), a
booking resent twice that takes one room (``resent-booking``). The ``raw`` plans compose each request
with ``fetch_url`` from the operation's file, and ``raw-no-content-type`` plays the third failure as
it happened on the raw path: a booking posted without ``Content-Type``, refused 415, and resent the
same way until the model gives up. It is the scripted run an evaluation must count as a failure.
"""

from __future__ import annotations

import json
from typing import Any

from skillhouse.host.models import PLANS, Answer, Call, Calls, ScriptedModel, Step, Transcript
from skillhouse.host.models.plans import STAY, demo_plan
from skillhouse.json_types import JsonObject

HOUSE = "http://hollowbrook.local:8084"
JSON_HEADERS = {"Content-Type": "application/json"}


def _booking(transcript: Transcript, tool: str) -> Any:
    return transcript.response_body(tool, 0)


def _charge_body(booking: Any) -> JsonObject:
    return {"booking_id": booking["booking_id"], "amount_cents": booking["total_cents"],
            "description": f"{booking['nights']} nights, {booking.get('room_name', 'room')}"}


def _charge_outcome(transcript: Transcript, tool: str) -> str:
    charge = transcript.last_result(tool)
    body = charge.get("body") if isinstance(charge, dict) else None
    if isinstance(body, dict) and body.get("charge_id"):
        return f"The stay is charged ({body['charge_id']})."
    problem = charge.get("error") if isinstance(charge, dict) else None
    if isinstance(problem, dict) and problem.get("code") == "approval-required":
        return f"The charge is waiting for a person to approve it (approval {problem.get('approval_id')})."
    return f"The charge did not go through: {json.dumps(charge)[:200]}."


def _booked(transcript: Transcript, tool: str) -> str:
    booking = _booking(transcript, tool)
    return f"Booked {booking.get('room_name', 'the room')} for {booking['guest_name']}: booking {booking['booking_id']}."


def book_and_charge_tools() -> list[Step]:
    """The demo's plan, then, once the person has approved the charge, the same charge once more."""
    charge = "hollowbrook_charge"
    plan = demo_plan()
    return [
        *plan,
        Calls([Call(charge, lambda t: _charge_body(_booking(t, "hollowbrook_create_booking")))],
              say="Approved; sending the charge again."),
        Answer(lambda t: f"{_booked(t, 'hollowbrook_create_booking')} {_charge_outcome(t, charge)}"),
    ]


def list_rooms_tools() -> list[Step]:
    return [
        Calls([Call("fetch_url", {"method": "GET", "url": "http://hollowbrook/list_rooms.md"})]),
        Calls([Call("read_object", lambda t: {"path": t.last_result("fetch_url")["error"]["path"]})]),
        Calls([Call("load_tools", {"names": ["list_rooms"]})]),
        Calls([Call("hollowbrook_list_rooms", {"min_guests": 2})]),
        Answer(lambda t: _rooms_text(t.response_body("hollowbrook_list_rooms"))),
    ]


def _rooms_text(body: Any) -> str:
    return "Rooms for two: " + ", ".join(f"{r['name']} ({r['price_eur']} EUR a night)" for r in body["rooms"]) + "."


def _post(path: str, body: JsonObject | Any, headers: dict[str, str] | None = None) -> JsonObject:
    request: JsonObject = {"method": "POST", "url": f"{HOUSE}{path}", "body": json.dumps(body)}
    if headers is not None:
        request["headers"] = headers
    return request


def book_and_charge_raw() -> list[Step]:
    return [
        Calls([Call("read_object", {"path": "skill/hollowbrook"})]),
        Calls([Call("read_object", {"path": "skill/hollowbrook/create_booking.md"})]),
        Calls([Call("fetch_url", _post("/bookings", STAY, JSON_HEADERS))]),
        Calls([Call("read_object", {"path": "skill/hollowbrook/charge.md"})]),
        Calls([Call("fetch_url", lambda t: _post("/charges", _charge_body(_booking(t, "fetch_url")), JSON_HEADERS))]),
        Answer(lambda t: f"{_booked(t, 'fetch_url')} {_charge_outcome(t, 'fetch_url')}"),
        Calls([Call("fetch_url", lambda t: _post("/charges", _charge_body(_booking(t, "fetch_url")), JSON_HEADERS))]),
        Answer(lambda t: f"{_booked(t, 'fetch_url')} {_charge_outcome(t, 'fetch_url')}"),
    ]


def check_then_book_raw() -> list[Step]:
    query = f"room_id={STAY['room_id']}&arrival={STAY['arrival']}&departure={STAY['departure']}"
    return [
        Calls([Call("read_object", {"path": "skill/hollowbrook/check_availability.md"}),
               Call("read_object", {"path": "skill/hollowbrook/create_booking.md"})]),
        Calls([Call("fetch_url", {"method": "GET", "url": f"{HOUSE}/availability?{query}"})]),
        Calls([Call("fetch_url", _post("/bookings", STAY, JSON_HEADERS))]),
        Answer(lambda t: _booked_raw(t)),
    ]


def _booked_raw(transcript: Transcript) -> str:
    posted = [r for r in transcript.results("fetch_url") if isinstance(r, dict) and r.get("status") == 201]
    booking = posted[0]["body"]
    return f"Booked {booking['room_name']} for {booking['guest_name']}: booking {booking['booking_id']}."


def list_rooms_raw() -> list[Step]:
    return [
        Calls([Call("fetch_url", {"method": "GET", "url": "http://hollowbrook/list_rooms.md"})]),
        Calls([Call("read_object", lambda t: {"path": t.last_result("fetch_url")["error"]["path"]})]),
        Calls([Call("fetch_url", {"method": "GET", "url": f"{HOUSE}/rooms?min_guests=2"})]),
        Answer(lambda t: _rooms_text(t.response_body("fetch_url"))),
    ]


def no_content_type_raw() -> list[Step]:
    """The third failure on the raw path: no ``Content-Type``, 415, the same request again, then giving up."""
    return [
        Calls([Call("read_object", {"path": "skill/hollowbrook/create_booking.md"})]),
        Calls([Call("fetch_url", _post("/bookings", STAY))]),
        Calls([Call("fetch_url", _post("/bookings", STAY))], say="That failed; sending it again."),
        Calls([Call("fetch_url", _post("/bookings", STAY))], say="Once more."),
        Answer("I could not book the room: the guesthouse keeps refusing the request."),
    ]


EVAL_PLANS = {
    **PLANS,
    "eval-book-and-charge": book_and_charge_tools,
    "eval-list-rooms": list_rooms_tools,
    "raw-book-and-charge": book_and_charge_raw,
    "raw-check-then-book": check_then_book_raw,
    "raw-list-rooms": list_rooms_raw,
    "raw-no-content-type": no_content_type_raw,
}
"""Every plan a task file may name: the host's (``demo``, ``load-operations``...) and the ones above."""


def eval_scripted_model(plan: str) -> ScriptedModel:
    """The scripted model playing ``plan`` (one of :data:`EVAL_PLANS`; ``ValueError`` otherwise)."""
    if plan not in EVAL_PLANS:
        raise ValueError(f"unknown plan {plan!r}; known: {', '.join(EVAL_PLANS)}")
    return ScriptedModel(EVAL_PLANS[plan](), name=plan)
