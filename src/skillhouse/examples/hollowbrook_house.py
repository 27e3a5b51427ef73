"""The Hollowbrook guesthouse itself: rooms, nights, bookings and charges, kept in memory.

This is the upstream the Hollowbrook skill (``examples/hollowbrook``) describes, with no HTTP in
it: :mod:`skillhouse.examples.hollowbrook_server` puts it on the wire. A room (``room_id``) is a
kind of room the house has one or more of, so a booking takes one of them for its nights and a
second, identical booking really takes a second one. That is deliberate: the house has no duplicate
protection of its own, which is what makes a resent booking a real problem for the gateway to solve.
A booking is refused (``room-taken``) only when every room of its kind is taken on one of its nights.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import asdict, dataclass
from datetime import date, timedelta

from skillhouse.json_types import JsonObject

MAX_NIGHTS = 30


@dataclass(frozen=True)
class Room:
    """A kind of room: how many the house has of it, whom it sleeps and what a night costs."""

    room_id: int
    name: str
    sleeps: int
    price_eur: int
    count: int


ROOMS: tuple[Room, ...] = (
    Room(1, "Garden room", sleeps=2, price_eur=95, count=1),
    Room(2, "Double room", sleeps=2, price_eur=80, count=3),
    Room(3, "Twin room", sleeps=2, price_eur=75, count=2),
    Room(4, "Family suite", sleeps=4, price_eur=140, count=1),
)


class HouseError(Exception):
    """A request the house refuses: ``status`` is the HTTP status it maps to, ``field`` where it is."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field

    def document(self) -> JsonObject:
        error: JsonObject = {"code": self.code, "message": self.message}
        if self.field is not None:
            error["field"] = self.field
        return {"error": error}


def invalid(field: str, message: str) -> HouseError:
    return HouseError(400, "invalid-field", f"{field}: {message}", field)


def parse_date(field: str, value: object) -> date:
    if not isinstance(value, str):
        raise invalid(field, "must be a date written YYYY-MM-DD")
    try:
        if len(value) != 10:
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError:
        raise invalid(field, f"{value!r} is not a date written YYYY-MM-DD") from None


def parse_stay(arrival: object, departure: object) -> tuple[date, date]:
    first, leaving = parse_date("arrival", arrival), parse_date("departure", departure)
    if leaving <= first:
        raise invalid("departure", "must be after arrival (it is the morning the guest leaves)")
    if (leaving - first).days > MAX_NIGHTS:
        raise invalid("departure", f"a stay is at most {MAX_NIGHTS} nights")
    return first, leaving


def nights_of(arrival: date, departure: date) -> list[date]:
    return [arrival + timedelta(days=n) for n in range((departure - arrival).days)]


class Guesthouse:
    """The house's state for the life of the process; every method is safe across threads."""

    def __init__(self, rooms: tuple[Room, ...] = ROOMS) -> None:
        self.rooms = {room.room_id: room for room in rooms}
        self._bookings: dict[str, JsonObject] = {}
        self._charges: dict[str, JsonObject] = {}
        self._lock = threading.Lock()
        self._booking_numbers = itertools.count(1)
        self._charge_numbers = itertools.count(1)

    def list_rooms(self, min_guests: int | None = None) -> list[JsonObject]:
        return [asdict(r) for r in self.rooms.values() if min_guests is None or r.sleeps >= min_guests]

    def room(self, room_id: int) -> Room:
        room = self.rooms.get(room_id)
        if room is None:
            known = ", ".join(str(r) for r in self.rooms)
            raise HouseError(404, "unknown-room", f"room_id {room_id} is not a room here (rooms: {known})", "room_id")
        return room

    def availability(self, room_id: int, arrival: object, departure: object) -> JsonObject:
        room = self.room(room_id)
        first, leaving = parse_stay(arrival, departure)
        with self._lock:
            taken = self._taken_nights(room, first, leaving)
        return {
            "room_id": room_id,
            "arrival": first.isoformat(),
            "departure": leaving.isoformat(),
            "available": not taken,
            "taken": [night.isoformat() for night in taken],
        }

    def book(self, fields: JsonObject, idempotency_key: str | None = None) -> JsonObject:
        """Take one room of the kind asked for; ``fields`` already checked by the caller's schema."""
        room = self.room(fields["room_id"])
        first, leaving = parse_stay(fields["arrival"], fields["departure"])
        nights = (leaving - first).days
        with self._lock:
            taken = self._taken_nights(room, first, leaving)
            if taken:
                nights_text = ", ".join(n.isoformat() for n in taken)
                raise HouseError(409, "room-taken", f"{room.name} (room_id {room.room_id}) is taken on {nights_text}", "room_id")
            booking = {
                "booking_id": f"bk_{next(self._booking_numbers):04d}",
                "room_id": room.room_id,
                "room_name": room.name,
                "guest_name": fields["guest_name"],
                "arrival": first.isoformat(),
                "departure": leaving.isoformat(),
                "nights": nights,
                "total_cents": nights * room.price_eur * 100,
                "note": fields.get("note"),
                "status": "confirmed",
                # shown, never acted on: the house keeps no duplicate protection of its own
                "idempotency_key": idempotency_key,
            }
            self._bookings[booking["booking_id"]] = booking
            return dict(booking)

    def cancel(self, booking_id: str) -> JsonObject:
        with self._lock:
            booking = self._find_booking(booking_id)
            if booking["status"] == "cancelled":
                raise HouseError(409, "already-cancelled", f"booking {booking_id} is already cancelled", "booking_id")
            booking["status"] = "cancelled"
            return dict(booking)

    def charge(self, fields: JsonObject) -> JsonObject:
        with self._lock:
            booking = self._find_booking(fields["booking_id"])
            if booking["status"] != "confirmed":
                raise HouseError(409, "booking-cancelled", f"booking {booking['booking_id']} is cancelled", "booking_id")
            charge = {
                "charge_id": f"ch_{next(self._charge_numbers):04d}",
                "booking_id": booking["booking_id"],
                "amount_cents": fields["amount_cents"],
                "description": fields["description"],
                "status": "succeeded",
            }
            self._charges[charge["charge_id"]] = charge
            return dict(charge)

    def bookings(self) -> list[JsonObject]:
        with self._lock:
            return [dict(b) for b in self._bookings.values()]

    def charges(self) -> list[JsonObject]:
        with self._lock:
            return [dict(c) for c in self._charges.values()]

    def _find_booking(self, booking_id: object) -> JsonObject:
        booking = self._bookings.get(booking_id) if isinstance(booking_id, str) else None
        if booking is None:
            raise HouseError(404, "unknown-booking", f"booking {booking_id!r} does not exist", "booking_id")
        return booking

    def _taken_nights(self, room: Room, arrival: date, departure: date) -> list[date]:
        """The nights of the stay on which every room of this kind is already booked."""
        wanted = nights_of(arrival, departure)
        booked = {night: 0 for night in wanted}
        for booking in self._bookings.values():
            if booking["room_id"] != room.room_id or booking["status"] != "confirmed":
                continue
            stay = nights_of(date.fromisoformat(booking["arrival"]), date.fromisoformat(booking["departure"]))
            for night in stay:
                if night in booked:
                    booked[night] += 1
        return [night for night in wanted if booked[night] >= room.count]
