"""Request dependencies every router uses: the settings, the database session, the tenant and scope.

``SessionDep`` is a session inside one transaction that commits when the route returns (before the
response is sent, so a failed commit is an error response, never a false success) and rolls back
if the route raises.

Who may call a route is said once, in its signature: ``RunDep``, ``ApproveDep`` or ``AdminDep``
authenticates the bearer token (``TokenRejected``: 401 when missing, malformed, unknown or revoked),
checks its scope (``InsufficientScope``: 403) and names the tenant; ``api/errors.py`` answers both. Every API route takes exactly one of them; a test
walks the app's routes and fails on one that takes none. ``TenantDep`` is ``AdminDep``: a route
written without thinking about scopes is for admins only rather than open to every token.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from skillhouse.registry.tokens import (
    Scope,
    Tenant,
    TokenRejected,
    authenticate,
    require_scope,
)
from skillhouse.settings import Settings
from skillhouse.store import Database, Session

_bearer = HTTPBearer(auto_error=False, description="An API token: `Authorization: Bearer skh_...`.")


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_database(request: Request) -> Database:
    database: Database = request.app.state.database
    return database


def db_session(database: Annotated[Database, Depends(get_database)]) -> Iterator[Session]:
    with database.sessions() as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


def current_tenant(
    database: Annotated[Database, Depends(get_database)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    request: Request,
) -> Tenant:
    header = request.headers.get("authorization")
    if header is None:
        raise TokenRejected("missing-token", "this route needs `Authorization: Bearer skh_...`")
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise TokenRejected("malformed-token", "the Authorization header must be `Bearer skh_...`")
    with database.transaction() as session:
        return authenticate(session, credentials.credentials)


class ScopeRequired:
    """A route's dependency saying the least scope it needs: the tenant of a token of that scope or above."""

    def __init__(self, minimum: Scope) -> None:
        self.minimum = minimum

    def __call__(self, tenant: Annotated[Tenant, Depends(current_tenant)]) -> Tenant:
        require_scope(tenant.scope, self.minimum)  # InsufficientScope: 403 with its challenge (api/errors.py)
        return tenant

    def __repr__(self) -> str:
        return f"ScopeRequired({self.minimum!r})"


SettingsDep = Annotated[Settings, Depends(get_settings)]
DatabaseDep = Annotated[Database, Depends(get_database)]
SessionDep = Annotated[Session, Depends(db_session, scope="function")]
RunDep = Annotated[Tenant, Depends(ScopeRequired("run"))]
ApproveDep = Annotated[Tenant, Depends(ScopeRequired("approve"))]
AdminDep = Annotated[Tenant, Depends(ScopeRequired("admin"))]
TenantDep = AdminDep
