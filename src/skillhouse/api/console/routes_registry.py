"""Registry pages: skills, one skill's versions and releases, a version's tools, a tool per provider,
and the diff between two versions' tools. Read through the registry's own use cases, so built-in
skills appear as they do in the API and another tenant's skills are "not found". The skills list is
filtered by name (and a built-in's description), a release's tools by name and description, a page at a time."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from skillhouse.api.console.pages import page
from skillhouse.api.console.paging import direction_of, query_string
from skillhouse.api.console.routing import ConsoleRoute
from skillhouse.api.console.sessions import ConsoleRefusal, RunSessionDep
from skillhouse.api.console.tool_views import (
    diff_versions,
    profiles,
    tool_per_profile,
    tools_page,
    version_document,
)
from skillhouse.registry.releases import list_releases
from skillhouse.registry.skills import VersionView, list_skills, list_versions
from skillhouse.store import Database

router = APIRouter(route_class=ConsoleRoute)


def _database(request: Request) -> Database:
    database: Database = request.app.state.database
    return database


def skill_description(versions: list[VersionView]) -> str:
    """What a skill built from a spec (a built-in) says it is; a package's description is on its version page."""
    newest = versions[-1]
    return str(newest.spec.get("description", "")) if newest.spec else ""


@router.get("/console/skills")
def skills_page(request: Request, session: RunSessionDep, q: str = "") -> HTMLResponse:
    with _database(request).sessions() as db:
        skills = list_skills(db, session.tenant)
    described = {name: skill_description(versions) for name, versions in skills.items()}
    words = q.lower().split()
    shown = {name: versions for name, versions in skills.items()
             if all(word in f"{name} {described[name]}".lower() for word in words)}
    return page(request, "skills.html", session, title="Skills", skills=shown, total=len(skills), q=q.strip(),
                described=described)


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
def version_page(skill: str, version: str, request: Request, session: RunSessionDep, q: str = "", before: str = "",
                 after: str = "") -> HTMLResponse:
    with _database(request).sessions() as db:
        shown = version_document(db, session.tenant, skill, version)
    compatibility = (shown.document or {}).get("compatibility", {}).get("profiles", {})
    operations = shown.operations()
    cursor, direction = direction_of(before, after)
    tools = tools_page(operations, q, cursor, direction)
    return page(request, "version.html", session, title=f"{skill} {version}", skill=skill, shown=shown,
                compatibility=compatibility, profiles=profiles(), tools=tools, all_tools=len(operations), q=q.strip(),
                base=query_string(q=q.strip()))


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
