"""``GET /v1/guest``: whether calls can run yet (the guest is built in the background at start-up)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from skillhouse.api.deps import RunDep
from skillhouse.api.errors import STANDARD_ERRORS
from skillhouse.api.guest_deps import GuestDep

router = APIRouter(prefix="/v1/guest", tags=["guest"])


class GuestOut(BaseModel):
    """The guest calls run in, and whether it is ready."""

    kind: Literal["wasm", "inprocess"] = Field(description="`wasm`: the sandboxed component; `inprocess`: asked for by name.")
    state: Literal["starting", "building", "ready", "failed"] = Field(
        description="`starting`: reading the cache; `building`: calls answer 503 guest-building; "
                    "`failed`: calls answer 503 guest-unavailable with `message`.")
    stage: str | None = Field(default=None, description="The build step under way.")
    message: str | None = Field(default=None, description="Why the build failed.")
    elapsed_seconds: float = Field(description="Since the build started, or how long it took.")


@router.get("", responses=STANDARD_ERRORS)
def guest_status(_tenant: RunDep, guest: GuestDep) -> GuestOut:
    """The guest's state; poll it after start-up until `ready` (a first build takes minutes)."""
    status = guest.status()
    return GuestOut(kind=status.kind, state=status.state, stage=status.stage,
                    message=status.message, elapsed_seconds=status.elapsed_seconds)
