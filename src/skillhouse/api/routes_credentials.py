"""``/v1/credentials`` and ``/v1/egress``: what the gateway adds to a tenant's requests, and where they may go.

A credential is bound to (origin, header) and is write-only: ``PUT`` stores it encrypted, ``GET``
lists bindings (origin, header, scheme) and never a value, ``DELETE`` removes one. Scheme
``oauth2-client-credentials`` binds an OAuth 2.0 client instead of a token: ``value`` is the client
secret, and the gateway fetches, caches and refreshes the access token (``gateway/oauth.py``). The gateway injects
it after the egress rule passes, only into requests to that exact scheme, host and port (plain http
only with ``allow_http``), overwriting a header of that name from the guest. A value the transport
cannot send is refused here, with its code and field, rather than failing at call time. The egress
allow-list names hosts a tenant's turns may reach besides their bound operations; tenant gates hold
matching requests for approval on any host.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Response

from skillhouse.api.credential_actions import bind_credential
from skillhouse.api.deps import AdminDep, DatabaseDep
from skillhouse.api.gateway_deps import GatewayDep, gateway_responses
from skillhouse.gateway import Binding, tenant_rules
from skillhouse.registry.errors import NotFound
from skillhouse.wire.credentials import (
    HOST_PATTERN,
    AllowedHosts,
    BindingList,
    BindingOut,
    ClientOut,
    CredentialPut,
    TenantGate,
    TenantGates,
)

router = APIRouter(prefix="/v1", tags=["credentials"])

Host = Annotated[str, Path(pattern=HOST_PATTERN, max_length=255, description="`host` or `host:port`.")]
OriginScheme = Annotated[Literal["http", "https"], Query(description="The binding's origin scheme.")]
HeaderName = Annotated[str, Path(pattern=r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}$", description="The header's name.")]


def _out(binding: Binding) -> BindingOut:
    shown = binding.client
    client = None if shown is None else ClientOut(
        token_url=shown.token_url, client_id=shown.client_id, scopes=list(shown.scopes), audience=shown.audience,
        resource=shown.resource, token_auth_method=shown.auth_method, authorization_url=shown.authorization_url,
        redirect_uri=shown.redirect_uri, revocation_url=shown.revocation_url,
    )  # fmt: skip
    return BindingOut(origin=binding.origin.text, host=binding.host, port=binding.origin.port, header=binding.header,
                      scheme=binding.scheme, allow_http=binding.allow_http, client=client)


@router.put("/credentials", responses=gateway_responses())
def put_credential(body: CredentialPut, tenant: AdminDep, gateway: GatewayDep) -> BindingOut:
    """Bind a secret to (origin, header) for the calling tenant, replacing an earlier one.

    Refused with a code and the field: `invalid-origin`, `origin-scheme-refused`, `http-needs-opt-in`,
    `allow-http-mismatch`, `secret-not-sendable`, `secret-too-long`, `invalid-credential` (with the field:
    `token_url`, `client_id`, `scopes[n]`, `audience`, `resource` for an OAuth 2.0 client)."""
    return _out(bind_credential(gateway, tenant.id, body))


@router.get("/credentials", responses=gateway_responses())
def list_credentials(tenant: AdminDep, gateway: GatewayDep) -> BindingList:
    """The calling tenant's bindings, without values."""
    return BindingList(data=[_out(b) for b in gateway.credentials.list(tenant.id)])


@router.delete("/credentials/{host}/{header}", status_code=204, response_class=Response,
               responses=gateway_responses(404))
def delete_credential(host: Host, header: HeaderName, tenant: AdminDep, gateway: GatewayDep,
                      origin_scheme: OriginScheme = "https") -> Response:  # fmt: skip
    """Remove a binding; the gateway stops injecting it at once. ``?origin_scheme=http`` names an http origin."""
    removed = gateway.credentials.delete(tenant.id, f"{origin_scheme}://{host}", header)
    if not removed:
        raise NotFound("credential-not-found", f"no credential for {origin_scheme}://{host} ({header.lower()})")
    return Response(status_code=204)


@router.get("/egress/allowed-hosts", responses=gateway_responses())
def get_allowed_hosts(tenant: AdminDep, database: DatabaseDep) -> AllowedHosts:
    return AllowedHosts(hosts=tenant_rules.allowed_hosts(database, tenant.id))


@router.put("/egress/allowed-hosts", responses=gateway_responses())
def put_allowed_hosts(body: AllowedHosts, tenant: AdminDep, database: DatabaseDep) -> AllowedHosts:
    """Replace the allow-list. Private addresses stay refused unless the deployment lists the host."""
    return AllowedHosts(hosts=tenant_rules.replace_allowed_hosts(database, tenant.id, body.hosts))


@router.get("/egress/gates", responses=gateway_responses())
def get_gates(tenant: AdminDep, database: DatabaseDep) -> TenantGates:
    gates = tenant_rules.tenant_gates(database, tenant.id)
    return TenantGates(gates=[TenantGate(matches=matches, reason=reason) for matches, reason in gates])


@router.put("/egress/gates", responses=gateway_responses())
def put_gates(body: TenantGates, tenant: AdminDep, database: DatabaseDep) -> TenantGates:
    """Replace the tenant's gates; a later gate with the same ``matches`` replaces an earlier one."""
    gates = tenant_rules.replace_tenant_gates(database, tenant.id, ((g.matches, g.reason) for g in body.gates))
    return TenantGates(gates=[TenantGate(matches=matches, reason=reason) for matches, reason in gates])
