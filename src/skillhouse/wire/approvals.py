"""Held requests and a person's decision on each: the bodies of ``/v1/approvals``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from skillhouse.json_types import JsonObject

NOTE_LIMIT = 500
"""The most characters of a denial's reason (the model that asks again is told it)."""

State = Literal["pending", "approved", "denied", "used", "expired"]


class ApprovalOut(BaseModel):
    """A held request and what became of it."""

    id: str
    turn_id: str | None = Field(description="The turn whose call was held.")
    operation: str | None = Field(description="The matched operation (`skill.operation`), if any.")
    reason: str = Field(description="Why the request is gated (the skill's or tenant's gate reason).")
    request: JsonObject = Field(description="The canonical request the approval is bound to (no credentials).")
    commitment: str = Field(description="`sha256:` of the canonical request's RFC 8785 JSON.")
    state: State
    created_at: float = Field(description="Epoch seconds.")
    expires_at: float = Field(description="Epoch seconds; after this the approval can be neither decided nor used.")
    decided_by: str | None
    decided_at: float | None = Field(default=None, description="Epoch seconds of the decision, once decided.")
    note: str | None = Field(default=None, description="The reason the person gave with a denial; the model is told it.")


class DenyIn(BaseModel):
    """Why the request is denied (optional): the model that asks again is told it."""

    reason: str | None = Field(default=None, max_length=NOTE_LIMIT, description="Shown to the model, as written.")


class ApprovalList(BaseModel):
    data: list[ApprovalOut]
