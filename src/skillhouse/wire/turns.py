"""Turns, tool calls and agent runs: the bodies of ``/v1/turns``.

A call's answer is exactly what the guest answered (a response, a refusal of the arguments, the gateway's
refusal or signal); those are answers to the model and come with 200, so they are bodies here, not
error bodies.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from skillhouse.json_types import ChatMessage, JsonObject, ProviderTool
from skillhouse.wire.skills import SKILL_PATTERN, VERSION_PATTERN, Profile

MAX_SKILLS = 32
"""The most skill versions one turn binds."""


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
    stopped: Literal["answer", "step-limit", "model-error", "bad-request"] = Field(
        description="Why the loop stopped: the model answered, it used every step (`max_steps`), the model failed, "
                    "or the request could not be run.")
    steps: int
    messages: list[ChatMessage]
    error: JsonObject | None = None
