"""Skill versions of a tenant: upload, the state machine, and reading (built-ins merged in).

States move ``draft -> validated -> published -> deprecated``. Uploading again replaces a draft or
validated version's files (back to draft); a published version's content never changes: the same
content again is accepted as is, different content is a conflict. A tenant's own skill with a
built-in's name shadows the built-in for that tenant.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Literal, get_args

from sqlalchemy import select
from sqlalchemy.orm import Session

from skillhouse.compiler import compile_package
from skillhouse.json_types import JsonObject, ProblemDocument, one_of
from skillhouse.registry.builtin_releases import builtin_release
from skillhouse.registry.builtins import BUILTIN_SKILL_SPECS
from skillhouse.registry.bundle import content_digest
from skillhouse.registry.errors import Conflict, Invalid, NotFound, problem
from skillhouse.registry.specs import STATES, State
from skillhouse.skill import read_package
from skillhouse.store.registry_tables import SkillVersionRow, utcnow

SKILL_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$")
VersionSource = Literal["package", "spec"]


@dataclass(frozen=True)
class CheckResult:
    """A version's check report: whether its package compiles without a problem, and every problem found
    (each a problem document: a package file's ``file`` and ``line``, or a spec field's ``path``)."""

    ok: bool
    errors: tuple[ProblemDocument, ...] = ()

    @classmethod
    def stored(cls, document: JsonObject) -> CheckResult:
        """The report as the version's row holds it (JSON)."""
        return cls(bool(document.get("ok")), tuple(document.get("errors", [])))

    def document(self) -> JsonObject:
        """The report as the version's row holds it."""
        return {"ok": self.ok, "errors": list(self.errors)}


PASSED = CheckResult(True)
"""The report of a built-in version (compiled from the built-in specs, never wrong)."""


@dataclass(frozen=True)
class VersionView:
    """A skill version as the API shows it."""

    skill: str
    version: str
    state: State
    source: VersionSource
    content_digest: str
    report: CheckResult
    created_at: dt.datetime | None
    updated_at: dt.datetime | None
    builtin: bool = False
    files: dict[str, str] | None = None
    spec: JsonObject | None = None


def check_names(skill: str, version: str) -> None:
    problems = []
    if len(skill) > 64 or not SKILL_NAME.match(skill):
        problems.append(problem("skill", "invalid-skill-name", "1-64 lowercase letters, digits and single hyphens"))
    if not VERSION.match(version):
        problems.append(problem("version", "invalid-version", "1-64 letters, digits, '.', '+', '_' or '-', starting with a letter or digit"))
    if problems:
        raise Invalid("invalid-name", "the skill name or version is not valid", problems)


def check_report(skill: str, version: str, files: dict[str, str], extra: list[ProblemDocument] | None = None) -> CheckResult:
    """Compile ``files`` as package ``skill``: whether it compiles, with every error of the package."""
    package, read_errors = read_package(skill, files, label="")
    compiled, errors = compile_package(package, version)
    found = sorted(set(read_errors) | set(errors))
    listed: list[ProblemDocument] = [dict(e.as_dict()) for e in found] + list(extra or [])
    return CheckResult(compiled is not None and not listed, tuple(listed))


def put_version(session: Session, tenant: str, skill: str, version: str, files: dict[str, str],
                source: str = "package", spec: JsonObject | None = None,
                extra_problems: list[ProblemDocument] | None = None) -> VersionView:
    """Store ``files`` as ``skill@version`` in draft, with its check report."""
    check_names(skill, version)
    digest = content_digest(files, spec)
    row = _row(session, tenant, skill, version)
    if row is not None and row.state in ("published", "deprecated"):
        if row.content_digest == digest:
            return _view(row)
        raise Conflict("release-conflict", f"{skill} {version} is {row.state}; its content cannot change. Upload a new version.")
    report = check_report(skill, version, files, extra_problems)
    now = utcnow()
    if row is None:
        row = SkillVersionRow(tenant_id=tenant, skill=skill, version=version, created_at=now)
        session.add(row)
    row.state, row.source, row.files, row.spec = "draft", source, files, spec
    row.content_digest, row.report, row.updated_at = digest, report.document(), now
    session.flush()
    return _view(row)


def validate_version(session: Session, tenant: str, skill: str, version: str) -> VersionView:
    """``draft -> validated``; refused with every problem when the check report has errors."""
    row = _locked(session, tenant, skill, version)
    if row.state == "validated":
        return _view(row)
    _require(row, "draft", "validated")
    report = CheckResult.stored(row.report)
    if not report.ok:
        raise Invalid("check-failed", f"{skill} {version} has problems; fix them and upload again", list(report.errors))
    row.state, row.updated_at = "validated", utcnow()
    session.flush()
    return _view(row)


def deprecate_version(session: Session, tenant: str, skill: str, version: str) -> VersionView:
    """``published -> deprecated`` (deprecating twice is accepted)."""
    row = _locked(session, tenant, skill, version)
    if row.state != "deprecated":
        _require(row, "published", "deprecated")
        row.state, row.updated_at = "deprecated", utcnow()
        session.flush()
    return _view(row)


def get_version(session: Session, tenant: str, skill: str, version: str) -> VersionView:
    row = _row(session, tenant, skill, version)
    if row is not None:
        return _view(row, with_files=True)
    if not _owns_skill(session, tenant, skill):
        builtin = _builtin_versions().get((skill, version))
        if builtin is not None:
            return builtin
    raise NotFound("not-found", f"no skill version {skill} {version}")


def list_versions(session: Session, tenant: str, skill: str) -> list[VersionView]:
    rows = session.scalars(select(SkillVersionRow).where(SkillVersionRow.tenant_id == tenant, SkillVersionRow.skill == skill)
                           .order_by(SkillVersionRow.id)).all()
    if rows:
        return [_view(row) for row in rows]
    builtins = [view for (name, _), view in _builtin_versions().items() if name == skill]
    if not builtins:
        raise NotFound("not-found", f"no skill {skill}")
    return builtins


def list_skills(session: Session, tenant: str) -> dict[str, list[VersionView]]:
    """Skill name to its versions: the tenant's own, then built-ins it does not shadow."""
    skills: dict[str, list[VersionView]] = {}
    for row in session.scalars(select(SkillVersionRow).where(SkillVersionRow.tenant_id == tenant).order_by(SkillVersionRow.id)):
        skills.setdefault(row.skill, []).append(_view(row))
    for (name, _), view in _builtin_versions().items():
        if name not in skills or skills[name][0].builtin:
            skills.setdefault(name, []).append(view)
    return dict(sorted(skills.items()))


def owned_row(session: Session, tenant: str, skill: str, version: str) -> SkillVersionRow | None:
    return _row(session, tenant, skill, version)


def _owns_skill(session: Session, tenant: str, skill: str) -> bool:
    query = select(SkillVersionRow.id).where(SkillVersionRow.tenant_id == tenant, SkillVersionRow.skill == skill).limit(1)
    return session.scalars(query).first() is not None


def owns_skill(session: Session, tenant: str, skill: str) -> bool:
    return _owns_skill(session, tenant, skill)


def _row(session: Session, tenant: str, skill: str, version: str) -> SkillVersionRow | None:
    query = select(SkillVersionRow).where(SkillVersionRow.tenant_id == tenant, SkillVersionRow.skill == skill,
                                          SkillVersionRow.version == version)
    return session.scalars(query).one_or_none()


def _locked(session: Session, tenant: str, skill: str, version: str) -> SkillVersionRow:
    query = select(SkillVersionRow).where(SkillVersionRow.tenant_id == tenant, SkillVersionRow.skill == skill,
                                          SkillVersionRow.version == version).with_for_update()
    row = session.scalars(query).one_or_none()
    if row is None:
        if not _owns_skill(session, tenant, skill) and (skill, version) in _builtin_versions():
            raise Conflict("builtin-readonly", f"{skill} is built in and cannot be changed; publish your own skill under this name")
        raise NotFound("not-found", f"no skill version {skill} {version}")
    return row


def _require(row: SkillVersionRow, expected: str, target: str) -> None:
    if row.state != expected:
        raise Conflict("invalid-transition", f"{row.skill} {row.version} is {row.state}; only a {expected} version can become {target}")


def _view(row: SkillVersionRow, with_files: bool = False) -> VersionView:
    # the columns hold what this module wrote; a value outside the vocabulary is a damaged row, said so
    state, source = one_of(row.state, STATES, "state"), one_of(row.source, get_args(VersionSource), "source")
    return VersionView(row.skill, row.version, state, source, row.content_digest, CheckResult.stored(row.report),
                       row.created_at, row.updated_at, False, dict(row.files) if with_files else None, row.spec)


def _builtin_versions() -> dict[tuple[str, str], VersionView]:
    views = {}
    for spec in BUILTIN_SKILL_SPECS:
        release = builtin_release(spec.skill_id)
        views[(spec.skill_id, str(spec.version))] = VersionView(
            spec.skill_id, str(spec.version), "published", "spec", content_digest(release.files, spec.model_dump()),
            PASSED, None, None, True, dict(release.files), spec.model_dump())
    return views
