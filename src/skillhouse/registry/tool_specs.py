"""Tool specs of a tenant (with built-ins merged in) and manifest resolution for tool execution.

A tool spec is usable (resolvable, allowed in a skill) in state ``validated`` or ``published``.
States only move forward; a published or deprecated spec's content never changes. A tenant's own
spec with a built-in's ``tool_id`` shadows that built-in for the tenant, in listings and resolution.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from skillhouse.json_types import JsonObject, one_of
from skillhouse.registry.builtins import BUILTIN_TOOL_SPECS
from skillhouse.registry.errors import Conflict, Invalid, problem
from skillhouse.registry.specs import STATES, SpecSource, State, ToolSpec, ToolSpecUpsert, tool_spec_problems
from skillhouse.store.registry_tables import ToolSpecRow, utcnow

RANK = {"draft": 0, "validated": 1, "published": 2, "deprecated": 3}
USABLE = ("validated", "published")


@dataclass(frozen=True)
class ToolSpecView:
    """A tool spec as listed: the spec, its state, and where it comes from."""

    spec: ToolSpec
    state: State
    builtin: bool
    created_at: dt.datetime | None
    updated_at: dt.datetime | None


def upsert_tool_spec(session: Session, tenant: str, body: ToolSpecUpsert) -> tuple[ToolSpecView, bool]:
    """Create or update ``(tool_id, version)`` for ``tenant``: the stored view and whether it is new."""
    spec = body.tool_spec
    problems = tool_spec_problems(spec)
    if problems:
        raise Invalid("invalid-tool-spec", "the tool spec breaks field rules; see problems", problems)
    content = spec.model_dump(mode="json")
    row = _row(session, tenant, spec.tool_id, spec.version)
    now = utcnow()
    if row is None:
        if body.state == "deprecated":
            raise Invalid("invalid-state", "a new tool spec cannot start deprecated",
                          [problem("state", "invalid-state", "start in draft, validated or published")])
        row = ToolSpecRow(tenant_id=tenant, tool_id=spec.tool_id, version=spec.version, created_at=now)
        created = True
    else:
        if RANK[body.state] < RANK[row.state]:
            raise Conflict("invalid-transition", f"{spec.tool_id} {spec.version} is {row.state}; states only move forward")
        if row.state in ("published", "deprecated") and row.spec != content:
            raise Conflict("release-conflict", f"{spec.tool_id} {spec.version} is {row.state}; its content cannot change")
        created = False
    row.tool_pack, row.integration_id = spec.tool_pack, spec.integration_manifest.integration_id
    row.state, row.spec, row.updated_at = body.state, content, now
    try:
        with session.begin_nested():
            session.add(row)
            session.flush()
    except IntegrityError:
        raise Conflict("concurrent-update", f"{spec.tool_id} {spec.version} was created at the same time; retry") from None
    return _view(row), created


def list_tool_specs(session: Session, tenant: str) -> list[ToolSpecView]:
    rows = session.scalars(select(ToolSpecRow).where(ToolSpecRow.tenant_id == tenant)).all()
    views = [_view(row) for row in rows]
    own = {row.tool_id for row in rows}
    views += [ToolSpecView(spec, "published", True, None, None) for spec in BUILTIN_TOOL_SPECS if spec.tool_id not in own]
    return sorted(views, key=lambda v: (v.spec.tool_id, v.spec.version))


def find_tool(session: Session, tenant: str, tool_id: str, version: int | None = None) -> tuple[ToolSpec, SpecSource] | None:
    """The usable tool spec ``tool_id`` (``version``, or the highest usable): the spec and its source."""
    rows = session.scalars(select(ToolSpecRow).where(ToolSpecRow.tenant_id == tenant, ToolSpecRow.tool_id == tool_id)).all()
    if rows:
        usable = [r for r in rows if r.state in USABLE and (version is None or r.version == version)]
        best = max(usable, key=lambda r: r.version, default=None)
        return (ToolSpec.model_validate(best.spec), "tenant") if best is not None else None
    for spec in BUILTIN_TOOL_SPECS:
        if spec.tool_id == tool_id and (version is None or spec.version == version):
            return spec, "builtin"
    return None


def find_integration(session: Session, tenant: str, integration_id: str) -> tuple[ToolSpec, SpecSource] | None:
    """The usable tool spec whose manifest is ``integration_id``: the tenant's first, then built-ins."""
    rows = session.scalars(select(ToolSpecRow).where(ToolSpecRow.tenant_id == tenant,
                                                     ToolSpecRow.integration_id == integration_id,
                                                     ToolSpecRow.state.in_(USABLE))).all()
    if rows:
        best = max(rows, key=lambda r: (r.version, r.tool_id))
        return ToolSpec.model_validate(best.spec), "tenant"
    own = set(session.scalars(select(ToolSpecRow.tool_id).where(ToolSpecRow.tenant_id == tenant)).all())
    for spec in BUILTIN_TOOL_SPECS:
        if spec.integration_manifest.integration_id == integration_id and spec.tool_id not in own:
            return spec, "builtin"
    return None


def _row(session: Session, tenant: str, tool_id: str, version: int) -> ToolSpecRow | None:
    query = select(ToolSpecRow).where(ToolSpecRow.tenant_id == tenant, ToolSpecRow.tool_id == tool_id,
                                      ToolSpecRow.version == version).with_for_update()
    return session.scalars(query).one_or_none()


def _view(row: ToolSpecRow) -> ToolSpecView:
    spec: JsonObject = row.spec
    return ToolSpecView(ToolSpec.model_validate(spec), one_of(row.state, STATES, "state"), False, row.created_at, row.updated_at)
