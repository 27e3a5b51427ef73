"""The runtime contract's tool specs and skill specs: their typed shapes and field rules.

Field rules (the source system accepted anything shaped like its examples; these are enforced):

- ``tool_id`` and ``integration_id``: 1-128 lowercase letters and digits in segments joined by
  ``.``, ``-`` or ``_`` (``github.primary``); ``skill_id``: an Agent Skills name, 1-64 lowercase
  letters, digits and single hyphens (it becomes the bundle's SKILL.md ``name``).
- ``version``: a JSON integer from 1 to 2,147,483,647; ``"1"``, ``1.0`` and ``true`` are refused.
- ``name`` 1-120 characters, ``description`` 1-1024 (the Agent Skills limit), neither blank.
- ``tool_pack`` is ``coding.v1`` or ``comms.v1``; ``execution_kind`` is ``http``.
- The integration manifest follows its pack: ``coding.v1`` needs ``manifest_version``
  ``coding.integration.v1`` and provider ``github``; ``comms.v1`` needs ``comms.integration.v1`` and
  provider ``resend``. ``status`` is ``active`` or ``disabled``; ``capabilities`` is a non-empty list
  without repeats drawn from the pack's capabilities. The manifest's ``tool_pack`` must equal the
  spec's (checked by :func:`tool_spec_problems`, with its path).
- Unknown fields are refused, so a misspelt field is an error rather than silently dropped.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from skillhouse.json_types import ProblemDocument
from skillhouse.registry.errors import problem

State = Literal["draft", "validated", "published", "deprecated"]
STATES: tuple[State, ...] = get_args(State)
SpecSource = Literal["tenant", "builtin"]
"""Where a tool spec comes from: the tenant's own, or one of skillhouse's built-ins."""
ToolPack = Literal["coding.v1", "comms.v1"]
CodingCapability = Literal[
    "get_issue", "list_issues", "create_issue", "update_issue", "add_issue_comment",
    "get_pull_request", "list_pull_requests", "create_pull_request", "get_file", "get_repository",
]
CommsCapability = Literal["send_email", "get_email", "list_emails"]

ToolId = Annotated[str, Field(pattern=r"^[a-z0-9]+(?:[._-][a-z0-9]+)*$", min_length=1, max_length=128,
                              description="Lowercase letters and digits in segments joined by `.`, `-` or `_`.")]
SkillId = Annotated[str, Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$", min_length=1, max_length=64,
                               description="An Agent Skills name: lowercase letters, digits, single hyphens.")]
Version = Annotated[StrictInt, Field(ge=1, le=2_147_483_647, description="A positive integer version.")]
Text = Annotated[str, Field(min_length=1, pattern=r"\S")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _unique(values: list[str]) -> list[str]:
    seen = [v for i, v in enumerate(values) if v in values[:i]]
    if seen:
        raise ValueError(f"capabilities must not repeat: {', '.join(sorted(set(seen)))}")
    return values


class CodingManifest(_Strict):
    """Integration manifest of a ``coding.v1`` tool (a code host)."""

    manifest_version: Literal["coding.integration.v1"]
    integration_id: ToolId
    provider: Literal["github"]
    status: Literal["active", "disabled"]
    tool_pack: Literal["coding.v1"]
    capabilities: list[CodingCapability] = Field(min_length=1)

    _no_repeats = field_validator("capabilities")(classmethod(lambda cls, v: _unique(v)))


class CommsManifest(_Strict):
    """Integration manifest of a ``comms.v1`` tool (an email sender)."""

    manifest_version: Literal["comms.integration.v1"]
    integration_id: ToolId
    provider: Literal["resend"]
    status: Literal["active", "disabled"]
    tool_pack: Literal["comms.v1"]
    capabilities: list[CommsCapability] = Field(min_length=1)

    _no_repeats = field_validator("capabilities")(classmethod(lambda cls, v: _unique(v)))


IntegrationManifest = Annotated[CodingManifest | CommsManifest, Field(discriminator="tool_pack")]


class ToolSpec(_Strict):
    """A tool of the runtime: which integration runs it and what that integration can do."""

    tool_id: ToolId
    version: Version
    tool_pack: ToolPack
    name: Annotated[str, Field(max_length=120)] = Field(min_length=1, pattern=r"\S")
    description: Annotated[str, Field(max_length=1024)] = Field(min_length=1, pattern=r"\S")
    execution_kind: Literal["http"]
    integration_manifest: IntegrationManifest


class AllowedTool(_Strict):
    """A tool spec a skill may use, by id and version."""

    tool_id: ToolId
    version: Version


class SkillSpec(_Strict):
    """A skill authored as JSON; published as a generated Agent Skills bundle."""

    skill_id: SkillId
    version: Version
    name: Annotated[str, Field(max_length=120)] = Field(min_length=1, pattern=r"\S")
    description: Annotated[str, Field(max_length=1024)] = Field(min_length=1, pattern=r"\S")
    instructions_markdown: Annotated[str, Field(max_length=200_000)] = Field(min_length=1, pattern=r"\S")
    allowed_tools: list[AllowedTool] = Field(max_length=64)


class ToolSpecUpsert(_Strict):
    """Body of ``POST skills/tool-specs``."""

    state: State = "draft"
    tool_spec: ToolSpec


class SkillSpecUpsert(_Strict):
    """Body of ``POST skills/skill-specs``; ``published`` is reached through the publish route."""

    state: State = "draft"
    skill_spec: SkillSpec


def tool_spec_problems(spec: ToolSpec, at: str = "tool_spec") -> list[ProblemDocument]:
    """Rules across fields: the manifest belongs to the spec's tool pack."""
    problems = []
    if spec.integration_manifest.tool_pack != spec.tool_pack:
        problems.append(problem(f"{at}.integration_manifest.tool_pack", "tool-pack-mismatch",
                                f"the manifest is for {spec.integration_manifest.tool_pack} but the tool spec is {spec.tool_pack}"))
    return problems


def skill_spec_problems(spec: SkillSpec, at: str = "skill_spec") -> list[ProblemDocument]:
    """Rules across fields: each allowed tool is listed once."""
    problems = []
    seen: set[tuple[str, int]] = set()
    for index, tool in enumerate(spec.allowed_tools):
        key = (tool.tool_id, tool.version)
        if key in seen:
            problems.append(problem(f"{at}.allowed_tools.{index}", "duplicate-tool",
                                    f"{tool.tool_id} version {tool.version} is listed twice"))
        seen.add(key)
    return problems
