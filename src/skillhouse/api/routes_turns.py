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

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field

from skillhouse.api.bodies import SKILL_PATTERN, VERSION_PATTERN, Profile
from skillhouse.api.deps import DatabaseDep, RunDep, SettingsDep
from skillhouse.api.errors import ApiError
from skillhouse.api.gateway_deps import GatewayDep, gateway_responses
from skillhouse.api.guest_deps import GuestDep, require_guest
from skillhouse.host.calls import run_agent, run_call
from skillhouse.host.models.factory import model_from_settings
from skillhouse.json_types import ChatMessage, JsonObject, ProviderTool
from skillhouse.registry.turns import MAX_SKILLS, Turn, bind_turn, load_turn

router = APIRouter(prefix="/v1/turns", tags=["turns"])

TurnId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,40}$", description="The turn's id (`turn_...`).")]


class SkillRef(BaseModel):
    """A skill version to bind: a published release of the tenant, or a built-in."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=SKILL_PATTERN, max_length=64, description="The skill's name (`hollowbrook`).")
    version: str = Field(pattern=VERSION_PATTERN, max_length=64, description="The release's version (`1.0.0`).")


class TurnCreate(BaseModel):
    """Body of ``POST /v1/turns``."""

    model_config = ConfigDict(extra="forbid")

    skills: list[SkillRef] = Field(min_length=1, max_length=MAX_SKILLS, description="The skill versions to bind.")
    profile: Profile = Field(default="openai", description="The provider whose wire format the tools are in.")
    subject: str | None = Field(default=None, min_length=1, max_length=255,
                                description="The end user the turn acts for: its calls to an `oauth2-authorization-code` "
                                            "binding use this person's connection (`/v1/connections`).")


class BoundRelease(BaseModel):
    skill: str
    version: str
    digest: str = Field(description="The bound release's digest: the turn uses exactly this document.")


class TurnOut(BaseModel):
    """A bound turn and its tools."""

    id: str
    tenant: str
    profile: Profile
    releases: list[BoundRelease]
    tools: list[ProviderTool] = Field(description="The turn's tools in the profile's wire format.")
    created_at: float = Field(description="Epoch seconds.")
    subject: str | None = Field(default=None, description="The end user the turn acts for, if bound with one.")


class CallIn(BaseModel):
    """Body of ``POST /v1/turns/{id}/calls``: one tool call as the model made it."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1, max_length=256, description="The tool's name as the turn offered it.")
    arguments: JsonObject = Field(default_factory=dict, description="The call's arguments (a JSON object).")


class CallError(BaseModel):
    """A refusal or signal: ``invalid-arguments`` (with violations), ``approval-required`` (with
    ``approval_id``), ``approval-denied``, ``egress-refused``, ``idempotency-conflict``, ..."""

    model_config = ConfigDict(extra="allow")

    code: str
    message: str


class CallAnswer(BaseModel):
    """Exactly what the guest answered: a response (``status``, ``headers``, ``body``, ``replayed``)
    or an ``error``; other tools' answers (``read_object``'s ``ok``) pass through as they are."""

    model_config = ConfigDict(extra="allow")

    status: int | None = Field(default=None, description="The upstream's HTTP status.")
    headers: dict[str, str] | None = None
    body: str | None = Field(default=None, description="The upstream's body, secrets redacted.")
    replayed: bool | None = Field(default=None, description="True: the stored answer of an identical earlier request.")
    error: CallError | None = None


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


class RunIn(BaseModel):
    """Body of ``POST /v1/turns/{id}/run``: a conversation for the turn's model to carry on."""

    model_config = ConfigDict(extra="forbid")

    prompt: str | None = Field(default=None, max_length=20_000, description="The user's message.")
    messages: list[ChatMessage] | None = Field(
        default=None, max_length=200, description="Earlier neutral messages (role, content, tool_calls, tool_call_id)."
    )
    system: str | None = Field(default=None, max_length=20_000, description="Extra system instructions.")
    max_steps: int = Field(default=12, ge=1, le=50, description="Model steps before the loop stops.")


class RunOut(BaseModel):
    """The agent loop's transcript: every message, the final answer and why the loop stopped."""

    model_config = ConfigDict(extra="allow")

    final: str | None = Field(default=None, description="The model's final answer, when it gave one.")
    stopped: str = Field(description="`answer`, `max-steps`, `model-error` or `bad-request`.")
    steps: int
    messages: list[ChatMessage]
    error: JsonObject | None = None


@router.post("/{turn_id}/run", response_model_exclude_unset=True, responses=gateway_responses(404))
def run_turn(turn_id: TurnId, body: RunIn, tenant: RunDep, database: DatabaseDep, gateway: GatewayDep,
             settings: SettingsDep, guest: GuestDep) -> RunOut:
    """Run the agent loop with the deployment's model (``SKILLHOUSE_MODEL``): the model's tool calls go
    through the guest and the gateway like ``/calls``; held, refused and replayed calls are in the transcript.
    A deployment that names no model answers ``503 model-not-configured``; one whose model cannot be
    built, ``503 model-unavailable``."""
    if body.prompt is None and not body.messages:
        raise ApiError("give a prompt or messages", code="invalid-request")
    with database.transaction() as session:
        turn = load_turn(session, tenant.id, turn_id)
    model = model_from_settings(settings)  # ModelConfigError: 503 model-not-configured / model-unavailable
    request = body.model_dump(exclude_none=True)
    require_guest(guest)
    transcript = run_agent(gateway, turn.tenant, turn.id, turn.releases, request, model.complete, guest.kind,
                           guest.make_runner, subject=turn.subject)
    return RunOut.model_validate(transcript)
