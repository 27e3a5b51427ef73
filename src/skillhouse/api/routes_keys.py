"""``/v1/idempotency-keys``: the calling tenant's keys, and a person clearing one whose outcome is unknown.

A key is ``unresolved`` when its request may have reached the upstream but the gateway never learned
the answer; the gateway then refuses the identical request (``upstream-unresolved``) rather than risk
doing it twice. A person checks the upstream and clears the key (``DELETE``), which lets the request
run again; the clearing is recorded with the token that cleared it (``GET .../clearings``). Only an
unresolved key can be cleared (409 ``idempotency-key-not-unresolved`` otherwise); another tenant's key
answers 404. Listings never include a stored response.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, Field

from skillhouse.api.deps import ApproveDep, DatabaseDep, RunDep
from skillhouse.api.gateway_deps import GatewayDep, gateway_responses
from skillhouse.gateway.key_review import Clearing
from skillhouse.registry.tokens import Tenant, token_label

router = APIRouter(prefix="/v1/idempotency-keys", tags=["idempotency keys"])

State = Literal["running", "completed", "unresolved"]
Key = Annotated[str, Path(pattern=r"^skh-[0-9a-f]{48}$", description="The key (`skh-` and 48 hex digits).")]


class KeyOut(BaseModel):
    """An idempotency key and its state; never the response stored under it."""

    key: str
    operation: str = Field(description="The operation (`skill.operation`) the key's request matched.")
    state: State
    created_at: float = Field(description="Epoch seconds.")
    expires_at: float = Field(description="Epoch seconds; after this the key is forgotten.")


class KeyList(BaseModel):
    data: list[KeyOut]


class ClearingOut(BaseModel):
    """A person cleared an unresolved key: which, who and when."""

    key: str
    operation: str
    commitment: str = Field(description="`sha256:` of the request the key was first used with.")
    key_created_at: float = Field(description="Epoch seconds: when the key's request was first claimed.")
    cleared_by: str = Field(description="The API token (id and label) or the CLI user that cleared it.")
    cleared_at: float = Field(description="Epoch seconds.")


class ClearingList(BaseModel):
    data: list[ClearingOut]


def clearing_actor(database: DatabaseDep, tenant: Tenant) -> str:
    """Who is clearing: the authenticated token's id and label."""
    with database.reading() as session:
        label = token_label(session, tenant.token_id)
    return f"api token {tenant.token_id}" + (f" ({label})" if label else "")


def _clearing(clearing: Clearing) -> ClearingOut:
    return ClearingOut.model_validate(clearing, from_attributes=True)


@router.get("", responses=gateway_responses())
def list_keys(
    tenant: RunDep,
    gateway: GatewayDep,
    state: Annotated[State | None, Query(description="Only keys in this state (`unresolved`: what needs a person).")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> KeyList:
    """The calling tenant's idempotency keys, newest first."""
    return KeyList(data=[KeyOut.model_validate(k, from_attributes=True) for k in gateway.key_review.list(tenant.id, state, limit)])


@router.get("/clearings", responses=gateway_responses())
def list_clearings(
    tenant: RunDep, gateway: GatewayDep, limit: Annotated[int, Query(ge=1, le=500)] = 100
) -> ClearingList:
    """Every clearing of the calling tenant's keys, newest first: the audit of what people let run again."""
    return ClearingList(data=[_clearing(c) for c in gateway.key_review.clearings(tenant.id, limit)])


@router.delete("/{key}", responses=gateway_responses(404, 409))
def clear_key(key: Key, tenant: ApproveDep, gateway: GatewayDep, database: DatabaseDep) -> ClearingOut:
    """Clear an unresolved key after checking the upstream: the identical request may then run again
    (a person's decision, like an approval: ``approve`` scope)."""
    return _clearing(gateway.key_review.clear(tenant.id, key, clearing_actor(database, tenant)))
