"""Skill versions, releases and their tools: the bodies of the native ``/v1/skills`` routes."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from skillhouse.compiler.profiles import ProfileName
from skillhouse.json_types import JsonObject, JsonSchema, ProviderTool
from skillhouse.wire.errors import Problem

Profile = ProfileName
SKILL_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
VERSION_PATTERN = r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$"


class FilesUpload(BaseModel):
    """A skill package as a map of file paths (``SKILL.md``, ``create_booking.md``) to their text."""

    model_config = ConfigDict(extra="forbid")

    files: dict[str, str] = Field(description="File path to UTF-8 text; SKILL.md is required.")


class CheckReport(BaseModel):
    ok: bool = Field(description="True when the package compiles without a problem.")
    errors: list[Problem] = Field(description="Every problem: FILE:LINE: CODE for files, path for spec fields.")


class VersionOut(BaseModel):
    """A skill version: its state and check report (and files when read one at a time)."""

    skill: str
    version: str
    state: Literal["draft", "validated", "published", "deprecated"]
    source: Literal["package", "spec"]
    builtin: bool
    content_digest: str
    report: CheckReport
    created_at: dt.datetime | None
    updated_at: dt.datetime | None
    files: dict[str, str] | None = None


class VersionList(BaseModel):
    data: list[VersionOut]


class SkillOut(BaseModel):
    name: str
    builtin: bool
    versions: list[VersionOut]


class SkillList(BaseModel):
    data: list[SkillOut]


class Argument(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    name: str
    in_: Literal["path", "query", "header", "body"] = Field(alias="in")
    wire: str


class OperationDocument(BaseModel):
    """One operation of a release: everything the guest and the gateway need."""

    model_config = ConfigDict(extra="allow")

    name: str
    tool_name: str
    file: str
    description: str
    method: str
    url: str = Field(description="URL template with {param} path segments.")
    arguments: list[Argument]
    schema_: JsonSchema = Field(alias="schema", description="The tool's parameters (expanded JSON Schema).")
    encoding: str
    headers: dict[str, str]
    identity: list[str]
    approval: JsonObject | None


class PlainDocument(BaseModel):
    path: str
    text: str


class ReleaseDocument(BaseModel):
    """The canonical release document (its ``digest`` is SHA-256 of RFC 8785 JSON without ``digest``)."""

    model_config = ConfigDict(extra="allow")

    format: str
    skill: str
    version: str
    description: str
    instructions: str
    operations: list[OperationDocument]
    documents: list[PlainDocument]
    compatibility: JsonObject
    digest: str


class ReleaseSummary(BaseModel):
    skill: str
    version: str
    digest: str
    builtin: bool
    published_at: dt.datetime | None


class ReleaseOut(ReleaseSummary):
    document: ReleaseDocument
    files: dict[str, str] = Field(description="The Agent Skills bundle: file path to text.")


class ReleaseList(BaseModel):
    data: list[ReleaseSummary]


class ToolsOut(BaseModel):
    skill: str
    version: str
    profile: Profile | None = Field(description="None: the provider-neutral definitions.")
    tools: list[ProviderTool] = Field(description="Tool definitions in the profile's wire format.")


class CompatibilityOut(BaseModel):
    skill: str
    version: str
    digest: str
    report: JsonObject = Field(description="Per profile and tool: ok, adapted (what changed) or refused (why).")
