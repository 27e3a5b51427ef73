"""``/v1/turns``: bind skill versions into a turn, read it, and run its tool calls.

A turn binds published releases (the tenant's own or the built-ins it does not shadow) and offers
their operations as tools in one provider profile's wire format. A call runs through a fresh guest
and the gateway (:func:`skillhouse.host.calls.run_call`) and answers exactly what the guest answers:
the upstream response (``replayed`` when the idempotency key answered), a refusal of the arguments,
or the gateway's refusal or signal (``approval-required`` with its id, ``approval-denied``). Those
are answers to the model, so they come with 200; only a problem with the API request itself (an
unknown turn, a malformed body) is an HTTP error. Another tenant's turn answers 404.

No database session is held across a call: the gateway runs its own short transactions, and on
SQLite an open write transaction would hold the lock the gateway needs.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request

from skillhouse.api.deps import DatabaseDep, RunDep
from skillhouse.api.errors import ApiError
from skillhouse.api.gateway_deps import GatewayDep, gateway_responses
from skillhouse.api.guest_deps import GuestDep, require_guest
from skillhouse.api.model_deps import app_model
from skillhouse.host.calls import run_agent, run_call
from skillhouse.registry.turns import Turn, bind_turn, load_turn
from skillhouse.wire.turns import BoundRelease, CallAnswer, CallIn, RunIn, RunOut, TurnCreate, TurnOut

router = APIRouter(prefix="/v1/turns", tags=["turns"])

TurnId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,40}$", description="The turn's id (`turn_...`).")]


def _out(turn: Turn) -> TurnOut:
    return TurnOut(id=turn.id, tenant=turn.tenant, profile=turn.profile,
                   releases=[BoundRelease(**entry) for entry in turn.bound()], tools=turn.tools(),
                   created_at=turn.created_at, subject=turn.subject)


@router.post("", status_code=201, responses=gateway_responses())
def create_turn(body: TurnCreate, tenant: RunDep, database: DatabaseDep) -> TurnOut:
    """Bind skill versions for the calling tenant; the turn's id and its tools for ``profile``."""
    with database.transaction() as session:
        turn = bind_turn(session, tenant.id, [(ref.name, ref.version) for ref in body.skills], body.profile, body.subject)
    return _out(turn)


@router.get("/{turn_id}", responses=gateway_responses(404))
def get_turn(turn_id: TurnId, tenant: RunDep, database: DatabaseDep) -> TurnOut:
    """One of the calling tenant's turns, with its tools (another tenant's answers 404)."""
    with database.transaction() as session:
        return _out(load_turn(session, tenant.id, turn_id))


@router.post("/{turn_id}/calls", response_model_exclude_unset=True, responses=gateway_responses(404))
def call_tool(turn_id: TurnId, body: CallIn, tenant: RunDep, database: DatabaseDep, gateway: GatewayDep,
              guest: GuestDep) -> CallAnswer:
    """Run one tool call through the guest and the gateway; the guest's answer, whatever it is.
    While the guest is still being built: 503 ``guest-building`` with ``Retry-After``. Only a tool the
    turn offers may be called (422 ``tool-not-offered`` otherwise)."""
    with database.transaction() as session:
        turn = load_turn(session, tenant.id, turn_id)
    turn.check_offered(body.tool)
    require_guest(guest)
    answer = run_call(gateway, turn.tenant, turn.id, turn.releases, body.tool, body.arguments, guest.kind, guest.pool,
                      subject=turn.subject)
    return CallAnswer.model_validate(answer)


@router.post("/{turn_id}/run", response_model_exclude_unset=True, responses=gateway_responses(404))
def run_turn(turn_id: TurnId, body: RunIn, tenant: RunDep, database: DatabaseDep, gateway: GatewayDep,
             guest: GuestDep, request: Request) -> RunOut:
    """Run the agent loop with the deployment's model (``SKILLHOUSE_MODEL``): the model's tool calls go
    through the guest and the gateway like ``/calls``; held, refused and replayed calls are in the transcript.
    A deployment that names no model answers ``503 model-not-configured``; one whose model cannot be
    built, ``503 model-unavailable``. The app builds its model client once and reuses it for every run."""
    if body.prompt is None and not body.messages:
        raise ApiError("give a prompt or messages", code="invalid-request")
    with database.transaction() as session:
        turn = load_turn(session, tenant.id, turn_id)
    model = app_model(request.app.state)  # ModelConfigError: 503 model-not-configured / model-unavailable
    run = body.model_dump(exclude_none=True)
    require_guest(guest)
    transcript = run_agent(gateway, turn.tenant, turn.id, turn.releases, run, model.complete, guest.kind,
                           guest.make_runner, subject=turn.subject)
    return RunOut.model_validate(transcript)
