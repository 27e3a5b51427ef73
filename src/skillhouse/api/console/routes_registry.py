"""Registry pages: skills, one skill's versions and releases, a version's tools, a tool per provider,
and the diff between two versions' tools. Read through the registry's own use cases, so built-in
skills appear as they do in the API and another tenant's skills are "not found"."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from skillhouse.api.console.pages import page
from skillhouse.api.console.routing import ConsoleRoute
from skillhouse.api.console.sessions import ConsoleRefusal, RunSessionDep
from skillhouse.api.console.tool_views import diff_versions, profiles, tool_per_profile, version_document
from skillhouse.registry.releases import list_releases
from skillhouse.registry.skills import list_skills, list_versions
from skillhouse.store import Database

router = APIRouter(route_class=ConsoleRoute)


def _database(request: Request) -> Database:
    database: Database = request.app.state.database
    return database


@router.get("/console/skills")
def skills_page(request: Request, session: RunSessionDep) -> HTMLResponse:
    with _database(request).sessions() as db:
        skills = list_skills(db, session.tenant)
    return page(request, "skills.html", session, title="Skills", skills=skills)


@router.get("/console/skills/{skill}")
def skill_page(skill: str, request: Request, session: RunSessionDep) -> HTMLResponse:
    with _database(request).sessions() as db:
        versions = list_versions(db, session.tenant, skill)
        releases = list_releases(db, session.tenant, skill)
    return page(request, "skill.html", session, title=skill, skill=skill, versions=versions, releases=releases)


@router.get("/console/skills/{skill}/diff")
def diff_page(skill: str, request: Request, session: RunSessionDep, old: str = "", new: str = "") -> HTMLResponse:
    if not old or not new:
        raise ConsoleRefusal("choose two versions to compare (old and new)", code="versions-missing")
    with _database(request).sessions() as db:
        before = version_document(db, session.tenant, skill, old)
        after = version_document(db, session.tenant, skill, new)
    problems = [f"{d.version.version} does not compile" for d in (before, after) if d.document is None]
    return page(request, "diff.html", session, title=f"{skill}: {old} → {new}", skill=skill, old=before, new=after,
                diff=diff_versions(before, after), problems=problems)


@router.get("/console/skills/{skill}/{version}")
def version_page(skill: str, version: str, request: Request, session: RunSessionDep) -> HTMLResponse:
    with _database(request).sessions() as db:
        shown = version_document(db, session.tenant, skill, version)
    compatibility = (shown.document or {}).get("compatibility", {}).get("profiles", {})
    return page(request, "version.html", session, title=f"{skill} {version}", skill=skill, shown=shown,
                compatibility=compatibility, profiles=profiles())


@router.get("/console/skills/{skill}/{version}/tools/{tool}")
def tool_page(skill: str, version: str, tool: str, request: Request, session: RunSessionDep,
              profile: str = "openai") -> HTMLResponse:
    if profile not in profiles():
        raise ConsoleRefusal(f"no provider profile {profile!r}; one of: {', '.join(profiles())}", code="unknown-profile")
    with _database(request).sessions() as db:
        shown = version_document(db, session.tenant, skill, version)
    operation = shown.operations().get(tool)
    if operation is None:
        raise ConsoleRefusal(f"{skill} {version} has no tool {tool!r}", code="tool-not-found")
    return page(request, "tool.html", session, title=f"{tool} for {profile}", skill=skill, shown=shown,
                operation=operation, view=tool_per_profile(operation, profile), profiles=profiles())
