"""``/v1/limits``: the calling tenant's rate limits, and the waits its upstreams asked for.

A limit is ``requests`` per ``window_seconds``, ``concurrent`` calls in flight, or both, on all of the tenant's calls (``scope`` ``tenant``), on
the calls matching one operation (``operation``, subject ``skill.operation``) or on the calls to one
host (``host``, subject the host name). Every replica enforces it from the next call on (GCRA with its
state in the database, ``gateway/limits.py``); a call over a limit is not sent and answers the model
``rate-limited`` with ``retry_after`` seconds. Setting limits is the tenant's configuration (``admin``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from skillhouse.api.deps import AdminDep
from skillhouse.api.gateway_deps import GatewayDep, gateway_responses
from skillhouse.gateway.limits import MAX_REQUESTS, MAX_WINDOW_SECONDS, RateLimit

router = APIRouter(prefix="/v1/limits", tags=["rate limits"])

Scope = Literal["tenant", "operation", "host"]


class LimitIn(BaseModel):
    """A limit to set; setting one that exists (same scope and subject) changes it."""

    model_config = ConfigDict(extra="forbid")

    scope: Scope = Field(description="`tenant` (every call), `operation` (one tool) or `host` (one upstream host).")
    subject: str = Field(default="", max_length=255,
                         description="Empty for `tenant`; `skill.operation` for `operation`; the host name for `host`.")
    requests: int | None = Field(default=None, ge=1, le=MAX_REQUESTS,
                                 description="Calls admitted per window (also the largest burst); with `window_seconds`.")
    window_seconds: float | None = Field(default=None, gt=0, le=MAX_WINDOW_SECONDS, description="The window, in seconds.")
    concurrent: int | None = Field(default=None, ge=1, le=MAX_REQUESTS,
                                   description="Calls in flight at once, across replicas.")


class LimitOut(BaseModel):
    scope: Scope
    subject: str
    requests: int | None
    window_seconds: float | None
    concurrent: int | None


class WaitOut(BaseModel):
    """An upstream answered 429 or 503 with ``Retry-After``: the tenant's calls to ``host`` wait until ``until``."""

    host: str
    until: float = Field(description="Epoch seconds.")
    status: int


class LimitList(BaseModel):
    data: list[LimitOut]
    upstream_waits: list[WaitOut] = Field(description="Waits upstreams asked for that have not passed.")


def _out(limit: RateLimit) -> LimitOut:
    return LimitOut.model_validate(limit, from_attributes=True)


@router.get("", responses=gateway_responses())
def list_limits(tenant: AdminDep, gateway: GatewayDep) -> LimitList:
    """The calling tenant's limits, and the upstream waits in force."""
    return LimitList(data=[_out(limit) for limit in gateway.limits.limits(tenant.id)],
                     upstream_waits=[WaitOut.model_validate(w, from_attributes=True) for w in gateway.limits.waits(tenant.id)])


@router.put("", responses=gateway_responses())
def put_limit(body: LimitIn, tenant: AdminDep, gateway: GatewayDep) -> LimitOut:
    """Set (or change) one limit; every replica holds calls to it from the next call on."""
    return _out(gateway.limits.set(tenant.id, body.scope, body.subject, body.requests, body.window_seconds,
                                   body.concurrent))


@router.delete("", status_code=204, response_class=Response, responses=gateway_responses(404))
def delete_limit(
    tenant: AdminDep,
    gateway: GatewayDep,
    scope: Annotated[Scope, Query(description="The limit's scope.")],
    subject: Annotated[str, Query(max_length=255, description="The limit's subject (empty for `tenant`).")] = "",
) -> Response:
    """Remove one limit (404 ``rate-limit-not-found`` when it is not set)."""
    gateway.limits.delete(tenant.id, scope, subject)
    return Response(status_code=204)
