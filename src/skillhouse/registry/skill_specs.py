"""Skill specs of the runtime contract, stored as skill versions generated into Agent Skills bundles.

A skill spec and an uploaded package end in the same place: a skill version (source ``spec``) whose
files are generated from the spec and its allowed tools, published into the same release model.
A draft may name tools that do not resolve yet (they are listed in its check report); ``validated``
and publishing require every allowed tool to be a usable tool spec.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from skillhouse.json_types import ProblemDocument, one_of
from skillhouse.registry.builtins import BUILTIN_SKILL_SPECS
from skillhouse.registry.bundle import content_digest, files_from_skill_spec
from skillhouse.registry.errors import Conflict, Invalid, problem
from skillhouse.registry.releases import ReleaseView, publish_version
from skillhouse.registry.skills import (
    PASSED,
    CheckResult,
    deprecate_version,
    owned_row,
    put_version,
    validate_version,
)
from skillhouse.registry.specs import STATES, SkillSpec, SkillSpecUpsert, State, ToolSpec, skill_spec_problems
from skillhouse.registry.tool_specs import find_tool
from skillhouse.store.registry_tables import SkillVersionRow


@dataclass(frozen=True)
class SkillSpecView:
    """A skill spec as listed."""

    spec: SkillSpec
    state: State
    builtin: bool
    report: CheckResult
    created_at: dt.datetime | None
    updated_at: dt.datetime | None


def upsert_skill_spec(session: Session, tenant: str, body: SkillSpecUpsert) -> tuple[SkillSpecView, bool]:
    """Create or update a skill spec in ``draft`` or ``validated`` (or deprecate a published one)."""
    spec = body.skill_spec
    version = str(spec.version)
    problems = skill_spec_problems(spec)
    if problems:
        raise Invalid("invalid-skill-spec", "the skill spec breaks field rules; see problems", problems)
    tools, unresolved = resolve_allowed_tools(session, tenant, spec)
    files = files_from_skill_spec(spec, tools)
    content = spec.model_dump(mode="json")
    existing = owned_row(session, tenant, spec.skill_id, version)
    if body.state in ("published", "deprecated"):
        if existing is None or existing.state not in ("published", "deprecated") or existing.content_digest != content_digest(files, content):
            if body.state == "published":
                raise Invalid("publish-through-route", "publish with POST skills/skill-specs/{skill_id}/{version}/publish",
                              [problem("state", "publish-through-route", "upsert in draft or validated, then publish")])
            raise Conflict("invalid-transition", f"only a published {spec.skill_id} {version} with this content can be deprecated")
        if body.state == "deprecated":
            deprecate_version(session, tenant, spec.skill_id, version)
        return _view_of(session, tenant, spec.skill_id, version), False
    if body.state == "validated" and unresolved:
        raise Invalid("unknown-tool", "every allowed tool must be a validated or published tool spec", unresolved)
    put_version(session, tenant, spec.skill_id, version, files, "spec", content, unresolved)
    if body.state == "validated":
        validate_version(session, tenant, spec.skill_id, version)
    return _view_of(session, tenant, spec.skill_id, version), existing is None


def publish_skill_spec(session: Session, tenant: str, skill_id: str, version: int) -> tuple[ReleaseView, bool]:
    """Publish a validated skill spec (its allowed tools checked again) into a release."""
    row = owned_row(session, tenant, skill_id, str(version))
    if row is not None and row.state == "validated" and row.spec is not None:
        _, unresolved = resolve_allowed_tools(session, tenant, SkillSpec.model_validate(row.spec))
        if unresolved:
            raise Invalid("unknown-tool", "an allowed tool is no longer usable", unresolved)
    return publish_version(session, tenant, skill_id, str(version))


def list_skill_specs(session: Session, tenant: str) -> list[SkillSpecView]:
    rows = session.scalars(select(SkillVersionRow).where(SkillVersionRow.tenant_id == tenant)).all()
    own = {row.skill for row in rows}
    views = [_view(row) for row in rows if row.source == "spec" and row.spec is not None]
    views += [SkillSpecView(spec, "published", True, PASSED, None, None)
              for spec in BUILTIN_SKILL_SPECS if spec.skill_id not in own]
    return sorted(views, key=lambda v: (v.spec.skill_id, v.spec.version))


def resolve_allowed_tools(session: Session, tenant: str, spec: SkillSpec) -> tuple[list[ToolSpec], list[ProblemDocument]]:
    """The usable tool specs a skill spec names, and a problem for each that does not resolve."""
    tools: list[ToolSpec] = []
    unresolved: list[ProblemDocument] = []
    for index, ref in enumerate(spec.allowed_tools):
        found = find_tool(session, tenant, ref.tool_id, ref.version)
        if found is None:
            unresolved.append(problem(f"skill_spec.allowed_tools.{index}", "unknown-tool",
                                      f"no validated or published tool spec {ref.tool_id} version {ref.version}"))
        else:
            tools.append(found[0])
    return tools, unresolved


def _view_of(session: Session, tenant: str, skill: str, version: str) -> SkillSpecView:
    row = owned_row(session, tenant, skill, version)
    assert row is not None
    return _view(row)


def _view(row: SkillVersionRow) -> SkillSpecView:
    return SkillSpecView(SkillSpec.model_validate(row.spec), one_of(row.state, STATES, "state"), False,
                         CheckResult.stored(row.report), row.created_at, row.updated_at)
