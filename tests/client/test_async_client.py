"""The asynchronous client does what the blocking one does, against the same real server: publish,
bind, list tools, book once, a held charge raised as ``ApprovalRequired``, approved, then charged once."""

from __future__ import annotations

import asyncio
import json

import pytest
from tests.client.served import HOLLOWBROOK, Served

from skillhouse.client import ApprovalRequired, AsyncClient, NotFound, TokenRefused

BOOKING = {"room_id": 1, "guest_name": "Grace Hopper", "arrival": "2031-07-01", "departure": "2031-07-02"}


def test_the_async_client_books_once_and_a_held_charge_goes_through_after_approval(served: Served) -> None:
    charges_before = len(served.house.house.charges())

    async def scenario() -> str:
        async with AsyncClient(served.url, served.tokens["admin"]) as client:
            release = await client.publish(HOLLOWBROOK)
            turn = await client.bind([f"hollowbrook@{release.version}"])
            assert "hollowbrook_create_booking" in {t["function"]["name"] for t in await client.tools(turn.id)}
            booked = await client.call(turn.id, "hollowbrook_create_booking", BOOKING)
            booking = json.loads(booked.body or "{}")
            charge = {"booking_id": booking["booking_id"], "amount_cents": booking["total_cents"],
                      "description": "One night"}
            with pytest.raises(ApprovalRequired) as held:
                await client.call(turn.id, "hollowbrook_charge", charge)
            assert held.value.approval_id in [a.id for a in await client.approvals("pending")]
            assert len(served.house.house.charges()) == charges_before
            await client.approve(held.value.approval_id)
            charged = await client.call(turn.id, "hollowbrook_charge", charge)
            assert charged.status == 201
            with pytest.raises(NotFound):
                await client.approval("apr_nothing")
        async with AsyncClient(served.url, "skh_unknown") as stranger:
            with pytest.raises(TokenRefused) as refused:
                await stranger.credentials()
            return refused.value.code

    assert asyncio.run(scenario()) == "malformed-token"
    assert [b["guest_name"] for b in served.house.house.bookings()].count("Grace Hopper") == 1
    assert len(served.house.house.charges()) == charges_before + 1
