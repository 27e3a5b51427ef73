"""The app's guest (:class:`~skillhouse.host.guest_state.GuestState`) for the routes that run calls.

A call route asks :func:`require_guest` right before it runs anything in the guest: while the guest
is being built the call answers ``503 guest-building`` with ``Retry-After``, and after a failed build
``503 guest-unavailable`` with the build's error. Nothing is built inside a request.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from skillhouse.host.guest_state import GuestState


def get_guest(request: Request) -> GuestState:
    """The app's guest, its build started if the app was not started through its lifespan (tests)."""
    guest: GuestState = request.app.state.guest
    guest.start()
    return guest


GuestDep = Annotated[GuestState, Depends(get_guest)]


def require_guest(guest: GuestState) -> None:
    """Return when calls can run in ``guest``; else raise :class:`~skillhouse.host.guest_state.GuestNotReady`,
    answered 503 with ``Retry-After`` while it is building (``api/errors.py``)."""
    guest.require()
