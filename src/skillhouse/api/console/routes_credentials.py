"""The tenant's credential bindings and people's OAuth connections, read-only: where each binding goes and
of what kind (an OAuth client's token URL, client id and scopes; never a secret), and each connection's
subject, scopes, expiry and last use (never a token). Binding and revoking stay with the API and the CLI."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from skillhouse.api.console.pages import page
from skillhouse.api.console.routing import ConsoleRoute
from skillhouse.api.console.sessions import AdminSessionDep
from skillhouse.api.gateway_deps import get_gateway

router = APIRouter(route_class=ConsoleRoute)


@router.get("/console/credentials")
def credentials_view(request: Request, session: AdminSessionDep) -> HTMLResponse:
    gateway = get_gateway(request)
    return page(request, "credentials.html", session, title="Credentials",
                bindings=gateway.credentials.list(session.tenant), connections=gateway.connections.list(session.tenant))
