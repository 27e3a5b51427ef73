"""The web console: server-rendered pages under ``/console`` for people operating skillhouse.

Approvals (what a person decides on first, then the exact held request; approve, or deny with a
reason), the registry (skills, versions, releases, each tool per provider profile, compatibility,
diffs), the audit trail and (for admins) the credential bindings and people's OAuth connections, bound, deleted, started and revoked with forms, with filters and cursor pages wherever a list can grow. Signed in with a
tenant's API token into a signed session cookie; every form carries a CSRF token. Pages are Jinja2
templates with a small stylesheet and no JavaScript; each fits a phone and a desktop width. ``router`` is what :func:`skillhouse.api.app.create_app`
includes; it is left out of the OpenAPI document, which describes the API for programs.
"""

from __future__ import annotations

from fastapi import APIRouter

from skillhouse.api.console import (
    routes_approvals,
    routes_audit,
    routes_auth,
    routes_credentials,
    routes_registry,
)

router = APIRouter(include_in_schema=False)
for _module in (routes_auth, routes_approvals, routes_registry, routes_audit, routes_credentials):
    router.include_router(_module.router)
router.include_router(routes_auth.not_found_router)  # last: it matches every /console path

__all__ = ["router"]
