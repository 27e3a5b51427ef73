"""Publishing a validated skill version into an immutable release, and reading releases.

Publish compiles the stored files and inserts the release row. The database decides races: of two
concurrent publishers of one version, one insert wins the unique (tenant, skill, version)
constraint; the other reads the winner's row and answers with it when the digests agree (they do,
for the same stored content) or refuses with a conflict when they do not. Release rows are never
updated (a trigger refuses it), so the parsed documents are cached by digest.
"""

from __future__ import annotations

import json

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from skillhouse.compiler import canonical_json, neutral_tool
from skillhouse.json_types import ReleaseDocument, ToolDefinition

# re-exported: callers read releases, built-in or published, from here
from skillhouse.registry.builtin_releases import ReleaseView as ReleaseView
from skillhouse.registry.builtin_releases import builtin_release as builtin_release
from skillhouse.registry.builtin_releases import compile_files
from skillhouse.registry.builtins import builtin_skill
from skillhouse.registry.errors import Conflict, NotFound
from skillhouse.registry.skills import owned_row, owns_skill
from skillhouse.store.registry_tables import ReleaseRow, utcnow


def publish_version(session: Session, tenant: str, skill: str, version: str) -> tuple[ReleaseView, bool]:
    """Publish ``skill@version``: the release and whether this call created it."""
    row = owned_row(session, tenant, skill, version)
    if row is None:
        if not owns_skill(session, tenant, skill) and builtin_skill(skill) is not None:
            return get_release(session, tenant, skill, version), False
        raise NotFound("not-found", f"no skill version {skill} {version}")
    if row.state in ("published", "deprecated"):
        return get_release(session, tenant, skill, version), False
    if row.state != "validated":
        raise Conflict("invalid-transition", f"{skill} {version} is {row.state}; validate it before publishing")
    compiled = compile_files(skill, version, dict(row.files))
    release = ReleaseRow(tenant_id=tenant, skill=skill, version=version, digest=compiled["digest"],
                         document=canonical_json(compiled).decode("utf-8"), files=dict(row.files), created_at=utcnow())
    try:
        with session.begin_nested():
            session.add(release)
            row.state, row.updated_at = "published", utcnow()
            session.flush()
    except IntegrityError:
        session.expire_all()
        existing = _release_row(session, tenant, skill, version)
        if existing is None or existing.digest != compiled["digest"]:
            raise Conflict("release-conflict", f"{skill} {version} is already published with different content") from None
        return _view(existing), False
    return _view(release), True


def get_release(session: Session, tenant: str, skill: str, version: str, with_files: bool = True) -> ReleaseView:
    """The release ``skill@version`` the tenant sees; ``with_files=False`` leaves the bundle unread."""
    row = _release_row(session, tenant, skill, version)
    if row is not None:
        return _view(row, with_files)
    spec = builtin_skill(skill)
    if spec is not None and str(spec.version) == version and not owns_skill(session, tenant, skill):
        return builtin_release(skill)
    raise NotFound("not-found", f"no release {skill} {version}")


def list_releases(session: Session, tenant: str, skill: str) -> list[ReleaseView]:
    rows = session.scalars(select(ReleaseRow).where(ReleaseRow.tenant_id == tenant, ReleaseRow.skill == skill)
                           .order_by(ReleaseRow.id)).all()
    if rows:
        return [_view(row) for row in rows]
    if builtin_skill(skill) is not None and not owns_skill(session, tenant, skill):
        return [builtin_release(skill)]
    if owns_skill(session, tenant, skill):
        return []
    raise NotFound("not-found", f"no skill {skill}")


def release_tools(release: ReleaseView) -> list[ToolDefinition]:
    """The neutral tool definitions of a release's operations."""
    return [neutral_tool(op) for op in release.document.get("operations", [])]


def _release_row(session: Session, tenant: str, skill: str, version: str) -> ReleaseRow | None:
    query = select(ReleaseRow).where(ReleaseRow.tenant_id == tenant, ReleaseRow.skill == skill, ReleaseRow.version == version)
    return session.scalars(query).one_or_none()


_DOCUMENTS: dict[str, ReleaseDocument] = {}
_DOCUMENTS_KEPT = 256


def _document(row: ReleaseRow) -> ReleaseDocument:
    # a digest names one document for ever (rows are immutable), so the parse is shared; the
    # ``document`` column is deferred, so a cached release is read without its text
    document = _DOCUMENTS.get(row.digest)
    if document is None:
        document = json.loads(row.document)
        if len(_DOCUMENTS) >= _DOCUMENTS_KEPT:
            _DOCUMENTS.pop(next(iter(_DOCUMENTS)))
        _DOCUMENTS[row.digest] = document
    return document


def _view(row: ReleaseRow, with_files: bool = True) -> ReleaseView:
    return ReleaseView(row.skill, row.version, row.digest, _document(row), dict(row.files) if with_files else {}, row.created_at)
