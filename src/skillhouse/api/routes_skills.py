"""``/v1/skills``: upload skill versions, move them through their states, read releases and tools.

States: ``draft`` (uploaded, with its check report) ``-> validated`` (report clean) ``-> published``
(compiled into an immutable release) ``-> deprecated``. Another tenant's skill answers 404.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Query, Response

from skillhouse.api.bodies import release_out, release_summary, version_out
from skillhouse.api.deps import AdminDep, RunDep, SessionDep
from skillhouse.api.errors import error_responses
from skillhouse.compiler.profiles import provider_tools
from skillhouse.registry import releases, skills
from skillhouse.registry.bundle import MAX_ARCHIVE_BYTES, files_from_archive, files_from_map
from skillhouse.wire.skills import (
    SKILL_PATTERN,
    VERSION_PATTERN,
    CompatibilityOut,
    FilesUpload,
    Profile,
    ReleaseList,
    ReleaseOut,
    SkillList,
    SkillOut,
    ToolsOut,
    VersionList,
    VersionOut,
)

router = APIRouter(prefix="/v1/skills", tags=["skills"])

SkillName = Annotated[str, Path(pattern=SKILL_PATTERN, max_length=64, description="The skill's name (SKILL.md `name`).")]
Version = Annotated[str, Path(pattern=VERSION_PATTERN, max_length=64, description="The version label (`1.0.0`).")]


@router.get("", responses=error_responses())
def list_skills(tenant: RunDep, session: SessionDep) -> SkillList:
    """The tenant's skills and the built-ins it does not shadow."""
    found = skills.list_skills(session, tenant.id)
    return SkillList(data=[SkillOut(name=name, builtin=views[0].builtin, versions=[version_out(v) for v in views])
                           for name, views in found.items()])


@router.get("/{skill}", responses=error_responses(404))
def get_skill(skill: SkillName, tenant: RunDep, session: SessionDep) -> SkillOut:
    views = skills.list_versions(session, tenant.id, skill)
    return SkillOut(name=skill, builtin=views[0].builtin, versions=[version_out(v) for v in views])


@router.get("/{skill}/versions", responses=error_responses(404))
def list_versions(skill: SkillName, tenant: RunDep, session: SessionDep) -> VersionList:
    return VersionList(data=[version_out(v) for v in skills.list_versions(session, tenant.id, skill)])


@router.put("/{skill}/versions/{version}", responses=error_responses(409))
def put_version(skill: SkillName, version: Version, body: FilesUpload, tenant: AdminDep, session: SessionDep) -> VersionOut:
    """Upload the package's files as a draft (answered with its check report)."""
    files = files_from_map(body.files)
    return version_out(skills.put_version(session, tenant.id, skill, version, files))


@router.put(
    "/{skill}/versions/{version}/archive",
    responses=error_responses(400, 409, 413),
    openapi_extra={"requestBody": {"required": True, "content": {"application/gzip": {"schema": {"type": "string", "format": "binary"}}}}},
)
def put_archive(
    skill: SkillName,
    version: Version,
    tenant: AdminDep,
    session: SessionDep,
    body: Annotated[bytes, Body(media_type="application/gzip", max_length=MAX_ARCHIVE_BYTES)] = b"",
) -> VersionOut:
    """Upload the package as a tar.gz (one top-level directory is stripped) as a draft."""
    files = files_from_archive(body)
    return version_out(skills.put_version(session, tenant.id, skill, version, files))


@router.get("/{skill}/versions/{version}", responses=error_responses(404))
def get_version(skill: SkillName, version: Version, tenant: RunDep, session: SessionDep) -> VersionOut:
    return version_out(skills.get_version(session, tenant.id, skill, version))


@router.post("/{skill}/versions/{version}/validate", responses=error_responses(404, 409))
def validate(skill: SkillName, version: Version, tenant: AdminDep, session: SessionDep) -> VersionOut:
    """``draft -> validated``; refused (422) with every problem when the check report has errors."""
    return version_out(skills.validate_version(session, tenant.id, skill, version))


@router.post("/{skill}/versions/{version}/publish", status_code=201, responses={200: {"model": ReleaseOut, "description": "Already published: the same release."}, **error_responses(404, 409)})
def publish(skill: SkillName, version: Version, tenant: AdminDep, session: SessionDep, response: Response) -> ReleaseOut:
    """``validated -> published``: compile and store the release (201); publishing again answers it (200)."""
    release, created = releases.publish_version(session, tenant.id, skill, version)
    if not created:
        response.status_code = 200
    return release_out(release)


@router.post("/{skill}/versions/{version}/deprecate", responses=error_responses(404, 409))
def deprecate(skill: SkillName, version: Version, tenant: AdminDep, session: SessionDep) -> VersionOut:
    """``published -> deprecated``: the release stays readable."""
    return version_out(skills.deprecate_version(session, tenant.id, skill, version))


@router.get("/{skill}/releases", responses=error_responses(404))
def list_releases(skill: SkillName, tenant: RunDep, session: SessionDep) -> ReleaseList:
    return ReleaseList(data=[release_summary(r) for r in releases.list_releases(session, tenant.id, skill)])


@router.get("/{skill}/releases/{version}", responses=error_responses(404))
def get_release(skill: SkillName, version: Version, tenant: RunDep, session: SessionDep) -> ReleaseOut:
    return release_out(releases.get_release(session, tenant.id, skill, version))


@router.get("/{skill}/releases/{version}/tools", responses=error_responses(404))
def get_tools(
    skill: SkillName,
    version: Version,
    tenant: RunDep,
    session: SessionDep,
    profile: Annotated[Profile | None, Query(description="Provider profile; omit for neutral definitions.")] = None,
) -> ToolsOut:
    """The release's tools, in ``profile``'s wire format (tools the profile refuses are left out)."""
    release = releases.get_release(session, tenant.id, skill, version, with_files=False)
    tools = releases.release_tools(release)
    listed = tools if profile is None else provider_tools(tools, profile)
    return ToolsOut(skill=skill, version=version, profile=profile, tools=listed)


@router.get("/{skill}/releases/{version}/compatibility", responses=error_responses(404))
def get_compatibility(skill: SkillName, version: Version, tenant: RunDep, session: SessionDep) -> CompatibilityOut:
    """The compiler's compatibility report: per provider profile and tool, ok, adapted or refused."""
    release = releases.get_release(session, tenant.id, skill, version, with_files=False)
    return CompatibilityOut(skill=skill, version=version, digest=release.digest, report=release.document["compatibility"])
