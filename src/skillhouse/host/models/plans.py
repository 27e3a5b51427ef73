"""Scripted plans on the Hollowbrook skill: the demo, and the three failures of the source document.

The source document's afternoon with small models went wrong three ways; each plan here makes the
same move, so a test can show the system now answers it well:

- :func:`load_operations_plan`: ``load_tools`` asked for ``check_availability`` and
  ``create_booking`` -- operation names, not tool names. They load, and the booking is one call.
- :func:`fetch_skill_file_plan`: ``fetch_url`` of ``http://hollowbrook/list_rooms.md``, a host
  invented for a skill file. It is refused with a pointer to ``read_object``, which the plan follows.
- :func:`resent_booking_plan`: a booking resent twice after its response was lost. With the
  gateway's idempotency the three sends take one room.

:func:`demo_plan` is what ``make demo`` shows: list rooms, load ``create_booking`` by its short
name, book with one call, resend it, then try a charge, which is held for a person's approval.
"""

from __future__ import annotations

import json
from typing import Any

from skillhouse.host.models.scripted import Answer, Call, Calls, ScriptedModel, Step, Transcript
from skillhouse.json_types import JsonObject

BOOKING_TOOL = "hollowbrook_create_booking"
STAY: JsonObject = {
    "room_id": 2,
    "guest_name": "Ada Lovelace",
    "arrival": "2031-06-01",
    "departure": "2031-06-03",
}
PROMPT = "Book a double room at Hollowbrook for Ada Lovelace from 1 to 3 June 2031, and charge the stay."


def booking_id(transcript: Transcript) -> str:
    """The id of the first booking the turn made, as the house answered it."""
    first = transcript.response_body(BOOKING_TOOL, 0)
    return str(first["booking_id"])


def _booked_text(transcript: Transcript) -> str:
    booking = transcript.response_body(BOOKING_TOOL, 0)
    return (
        f"Booked {booking.get('room_name', 'the room')} for {booking['guest_name']} from "
        f"{booking['arrival']} to {booking['departure']}: booking {booking['booking_id']}."
    )


def _charge_arguments(transcript: Transcript) -> JsonObject:
    booking = transcript.response_body(BOOKING_TOOL, 0)
    return {
        "booking_id": booking["booking_id"],
        "amount_cents": booking["total_cents"],
        "description": f"{booking['nights']} nights, {booking.get('room_name', 'room')}",
    }


def _demo_answer(transcript: Transcript) -> str:
    charge = transcript.last_result("hollowbrook_charge")
    problem = charge.get("error") if isinstance(charge, dict) else None
    if isinstance(problem, dict) and problem.get("code") == "approval-required":
        pending = f"The charge is waiting for a person to approve it (approval {problem.get('approval_id')})."
    elif isinstance(charge, dict) and charge.get("status") in (200, 201):
        pending = "The stay is charged."
    else:
        pending = f"The charge did not go through: {json_text(charge)}."
    return f"{_booked_text(transcript)} {pending}"


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)[:300]


def demo_plan() -> list[Step]:
    return [
        Calls([Call("load_tools", {"names": ["list_rooms"]})], say="Let me see which rooms there are."),
        Calls([Call("hollowbrook_list_rooms", {"min_guests": 2})]),
        Calls([Call("load_tools", {"names": ["create_booking"]})], say="The double room fits; booking it."),
        Calls([Call(BOOKING_TOOL, dict(STAY))]),
        Calls([Call(BOOKING_TOOL, dict(STAY))], say="That took a while; sending the booking again to be sure."),
        Calls([Call("load_tools", {"names": ["charge"]})]),
        Calls([Call("hollowbrook_charge", _charge_arguments)]),
        Answer(_demo_answer),
    ]


def load_operations_plan() -> list[Step]:
    return [
        Calls([Call("load_tools", {"names": ["check_availability", "create_booking"]})]),
        Calls([Call("hollowbrook_check_availability",
                    {k: STAY[k] for k in ("room_id", "arrival", "departure")})]),
        Calls([Call(BOOKING_TOOL, dict(STAY))]),
        Answer(_booked_text),
    ]


def _refusal_path(transcript: Transcript) -> JsonObject:
    refusal = transcript.last_result("fetch_url")
    return {"path": refusal["error"]["path"]}


def fetch_skill_file_plan() -> list[Step]:
    return [
        Calls([Call("fetch_url", {"method": "GET", "url": "http://hollowbrook/list_rooms.md"})]),
        Calls([Call("read_object", _refusal_path)], say="Reading the file where I was pointed."),
        Answer(lambda t: f"list_rooms.md says: {str(t.last_result('read_object'))[:200]}"),
    ]


def resent_booking_plan() -> list[Step]:
    return [
        Calls([Call("load_tools", {"names": ["create_booking"]})]),
        Calls([Call(BOOKING_TOOL, dict(STAY))]),
        Calls([Call(BOOKING_TOOL, dict(STAY))], say="No answer came back; sending it again."),
        Calls([Call(BOOKING_TOOL, dict(STAY))], say="Still unsure; once more."),
        Answer(_booked_text),
    ]


PLANS = {
    "demo": demo_plan,
    "load-operations": load_operations_plan,
    "fetch-skill-file": fetch_skill_file_plan,
    "resent-booking": resent_booking_plan,
}


def scripted_model(plan: str = "demo") -> ScriptedModel:
    """The scripted model playing the plan called ``plan`` (one of :data:`PLANS`)."""
    if plan not in PLANS:
        raise ValueError(f"unknown plan {plan!r}; known: {', '.join(PLANS)}")
    return ScriptedModel(PLANS[plan](), name=plan)
