"""``/v1/connections``: people's own OAuth 2.0 connections to the tenant's ``oauth2-authorization-code`` bindings.

``POST /v1/connections`` starts one for a subject (the end user turns act for) and an origin with
such a binding: it answers the provider's authorization URL (with a single-use ``state`` and a PKCE
``S256`` challenge) for the person to open. After they consent, the provider sends their browser to
``GET /v1/connections/callback``, which needs no token: the state, unguessable, used once and
expiring after ten minutes, is what authenticates it. The callback exchanges the code and stores the
tokens encrypted. ``GET`` lists connections (scopes, expiry, times; never a token), ``DELETE``
revokes one (at the provider's RFC 7009 revocation endpoint when the binding names one).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from skillhouse.api.deps import RunDep
from skillhouse.api.gateway_deps import GatewayDep, gateway_responses
from skillhouse.gateway.connections import Connection
from skillhouse.gateway.credential_input import parse_origin
from skillhouse.registry.errors import NotFound

router = APIRouter(prefix="/v1/connections", tags=["connections"])

SubjectQuery = Annotated[str, Query(min_length=1, max_length=255, description="The end user the connection is for.")]
OriginQuery = Annotated[str, Query(min_length=1, max_length=300, description="The binding's origin, `https://api.example.com`.")]


class ConnectionStart(BaseModel):
    """Body of ``POST /v1/connections``."""

    model_config = ConfigDict(extra="forbid")

    subject: str = Field(min_length=1, max_length=255, description="The end user turns act for (as turns are bound with).")
    origin: str = Field(min_length=1, max_length=300, description="The origin of an `oauth2-authorization-code` binding.")


class ConnectionStarted(BaseModel):
    authorization_url: str = Field(description="The provider's page to send the person to (state and PKCE challenge in it).")
    expires_at: float = Field(description="Epoch seconds after which the URL no longer connects.")
    subject: str
    origin: str


class ConnectionOut(BaseModel):
    """A connection as it may be shown: never a token."""

    subject: str
    origin: str
    client_id: str
    scopes: list[str] = Field(description="The scopes the provider granted.")
    expires_at: float = Field(description="When the current access token expires (epoch seconds).")
    refreshable: bool = Field(description="Whether a refresh token is held (the gateway refreshes the access token).")
    connected_at: float
    refreshed_at: float
    last_used_at: float | None = Field(description="Within a minute: when a call last used the connection.")


class ConnectionList(BaseModel):
    data: list[ConnectionOut]


class ConnectionRevoked(BaseModel):
    connection: ConnectionOut
    provider_revoked: bool = Field(description="Whether the provider's revocation endpoint accepted the revocation.")
    provider_message: str


def _out(connection: Connection) -> ConnectionOut:
    return ConnectionOut(subject=connection.subject, origin=connection.origin, client_id=connection.client_id,
                         scopes=list(connection.scopes), expires_at=connection.expires_at,
                         refreshable=connection.refreshable, connected_at=connection.connected_at,
                         refreshed_at=connection.refreshed_at, last_used_at=connection.last_used_at)  # fmt: skip


@router.post("", status_code=201, responses=gateway_responses(404))
def start_connection(body: ConnectionStart, tenant: RunDep, gateway: GatewayDep) -> ConnectionStarted:
    """Start a connection of ``subject`` to the binding of ``origin``: the authorization URL to send them to."""
    started = gateway.connections.start(tenant.id, body.subject, body.origin)
    return ConnectionStarted(authorization_url=started.authorization_url, expires_at=started.expires_at,
                             subject=started.subject, origin=started.origin)  # fmt: skip


@router.get("/callback", responses=gateway_responses())
def connection_callback(gateway: GatewayDep, state: Annotated[str, Query(max_length=200)] = "",
                        code: Annotated[str | None, Query(max_length=2000)] = None,
                        error: Annotated[str | None, Query(max_length=200)] = None) -> ConnectionOut:  # fmt: skip
    """Where the provider sends the person back: the state (used once) names the connection being made; the
    code is exchanged and the tokens stored. 422 ``connection-state-invalid`` (unknown, used or expired
    state), ``connection-not-granted`` (the person or provider refused); 502 ``credential-unavailable``."""
    return _out(gateway.connections.complete(state, code, error))


@router.get("", responses=gateway_responses())
def list_connections(tenant: RunDep, gateway: GatewayDep, subject: Annotated[str | None, Query(max_length=255)] = None,
                     origin: Annotated[str | None, Query(max_length=300)] = None) -> ConnectionList:  # fmt: skip
    """The tenant's connections, of one subject or origin when given: scopes, expiry and times, never a token."""
    where = None if origin is None else parse_origin(origin).text
    return ConnectionList(data=[_out(c) for c in gateway.connections.list(tenant.id, subject, where)])


@router.delete("", responses=gateway_responses(404))
def revoke_connection(subject: SubjectQuery, origin: OriginQuery, tenant: RunDep, gateway: GatewayDep) -> ConnectionRevoked:
    """Revoke a connection: deleted here, and revoked at the provider when the binding names its revocation endpoint."""
    revoked = gateway.connections.revoke(tenant.id, subject, parse_origin(origin).text)
    if revoked is None:
        raise NotFound("connection-not-found", f"no connection of {subject} to {origin}")
    return ConnectionRevoked(connection=_out(revoked.connection), provider_revoked=revoked.provider_revoked,
                             provider_message=revoked.provider_message)  # fmt: skip
