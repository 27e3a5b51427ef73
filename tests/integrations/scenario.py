"""The booking every integration's test scripts its framework's test model through: book the double room
with one call, then charge for it, which the house's policy holds for a person's approval."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tests.client.served import Served

from skillhouse.client import Client


def booking(month: int) -> dict[str, Any]:
    """Two nights in the double room in ``month`` of 2031: each framework's test books its own month, as they
    share one house."""
    return {"room_id": 2, "guest_name": "Ada Lovelace", "arrival": f"2031-{month:02d}-01",
            "departure": f"2031-{month:02d}-03"}


def charge_for(booking_result: Any) -> dict[str, Any]:
    """The charge arguments for a booking tool's result (a dict, or its JSON text)."""
    result = json.loads(booking_result) if isinstance(booking_result, str) else booking_result
    body = result["body"]
    return {"booking_id": body["booking_id"], "amount_cents": body["total_cents"], "description": "Two nights"}


@dataclass(frozen=True)
class HouseBefore:
    bookings: int
    charges: int


def house_now(served: Served) -> HouseBefore:
    return HouseBefore(len(served.house.house.bookings()), len(served.house.house.charges()))


def assert_booked_once_and_charge_held(served: Served, before: HouseBefore, charge_result: Any) -> str:
    """One booking more in the house, no charge, the charge's tool result an approval-required answer that
    tells the model to repeat the call once approved, and that approval pending; answers its id."""
    after = house_now(served)
    assert after.bookings == before.bookings + 1
    assert after.charges == before.charges
    result = json.loads(charge_result) if isinstance(charge_result, str) else charge_result
    error = result["error"]
    assert error["code"] == "approval-required" and error["approval_id"].startswith("apr_")
    assert "repeat the identical call" in error["next"]
    with Client(served.url, served.tokens["admin"]) as admin:
        assert error["approval_id"] in [a.id for a in admin.approvals(state="pending")]
    return str(error["approval_id"])
