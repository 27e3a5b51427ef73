"""``/v1/credentials`` and ``/v1/egress``: what the gateway adds to a tenant's requests, and where they may go.

A credential is bound to (host, header) and is write-only: ``PUT`` stores it encrypted, ``GET``
lists bindings (host, header, scheme) and never a value, ``DELETE`` removes one. The gateway injects
it after the egress rule passes, overwriting a header of that name from the guest. The egress
allow-list names hosts a tenant's turns may reach besides their bound operations; tenant gates hold
matching requests for approval on any host.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Response
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import delete, select

from skillhouse.api.deps import AdminDep, DatabaseDep
from skillhouse.api.gateway_deps import GatewayDep, api_error, gateway_responses
from skillhouse.gateway import Binding, GatewayError
from skillhouse.registry.errors import NotFound
from skillhouse.store.gateway_tables import AllowedHostRow, TenantGateRow

router = APIRouter(prefix="/v1", tags=["credentials"])

HOST_PATTERN = r"^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$"
Host = Annotated[str, Path(pattern=HOST_PATTERN, max_length=255, description="`host` or `host:port`.")]
HeaderName = Annotated[str, Path(pattern=r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}$", description="The header's name.")]


class CredentialPut(BaseModel):
    """Body of ``PUT /v1/credentials``: a secret for (host, header). The value is never read back."""

    model_config = ConfigDict(extra="forbid")

    host: str = Field(pattern=HOST_PATTERN, max_length=255, description="`api.github.com` or `host:port` (more specific).")
    scheme: Literal["bearer", "basic", "header"] = Field(
        description="`bearer`: `Authorization: Bearer <value>`; `basic`: value `user:password`; `header`: `<header>: <value>`.")
    header: str | None = Field(default=None, pattern=r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}$",
                               description="The header name for scheme `header` (an API-key header).")
    value: str = Field(min_length=1, max_length=8192, pattern=r"^[^\r\n]+$", json_schema_extra={"writeOnly": True},
                       description="The secret. Stored encrypted; never returned, logged or shown.")


class BindingOut(BaseModel):
    """Where a credential goes; never what it is."""

    host: str
    header: str = Field(description="Lowercased header name.")
    scheme: Literal["bearer", "basic", "header"]


class BindingList(BaseModel):
    data: list[BindingOut]


class AllowedHosts(BaseModel):
    """The tenant's egress allow-list (besides the hosts of a turn's bound operations)."""

    model_config = ConfigDict(extra="forbid")

    hosts: list[Annotated[str, Field(pattern=HOST_PATTERN, max_length=255)]] = Field(max_length=200)


class TenantGate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    matches: str = Field(pattern=r"^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) /[^\s]{0,400}$",
                         description="`METHOD /path/{param}` on any host.")
    reason: str = Field(default="", max_length=500)


class TenantGates(BaseModel):
    """Requests the tenant holds for approval whatever their skill says."""

    model_config = ConfigDict(extra="forbid")

    gates: list[TenantGate] = Field(max_length=100)


def _out(binding: Binding) -> BindingOut:
    return BindingOut(host=binding.host, header=binding.header, scheme=binding.scheme)  # type: ignore[arg-type]


@router.put("/credentials", responses=gateway_responses())
def put_credential(body: CredentialPut, tenant: AdminDep, gateway: GatewayDep) -> BindingOut:
    """Bind a secret to (host, header) for the calling tenant, replacing an earlier one."""
    try:
        return _out(gateway.credentials.put(tenant.id, body.host, body.scheme, body.value, body.header))
    except GatewayError as exc:
        raise api_error(exc) from None


@router.get("/credentials", responses=gateway_responses())
def list_credentials(tenant: AdminDep, gateway: GatewayDep) -> BindingList:
    """The calling tenant's bindings, without values."""
    return BindingList(data=[_out(b) for b in gateway.credentials.list(tenant.id)])


@router.delete("/credentials/{host}/{header}", status_code=204, response_class=Response,
               responses=gateway_responses(404))
def delete_credential(host: Host, header: HeaderName, tenant: AdminDep, gateway: GatewayDep) -> Response:
    """Remove a binding; the gateway stops injecting it at once."""
    if not gateway.credentials.delete(tenant.id, host, header):
        raise NotFound("credential-not-found", f"no credential for {host} ({header.lower()})")
    return Response(status_code=204)


@router.get("/egress/allowed-hosts", responses=gateway_responses())
def get_allowed_hosts(tenant: AdminDep, database: DatabaseDep) -> AllowedHosts:
    with database.transaction() as session:
        rows = session.scalars(select(AllowedHostRow.host).where(AllowedHostRow.tenant_id == tenant.id)
                               .order_by(AllowedHostRow.host))
        return AllowedHosts(hosts=list(rows))


@router.put("/egress/allowed-hosts", responses=gateway_responses())
def put_allowed_hosts(body: AllowedHosts, tenant: AdminDep, database: DatabaseDep) -> AllowedHosts:
    """Replace the allow-list. Private addresses stay refused unless the deployment lists the host."""
    hosts = sorted({host.lower() for host in body.hosts})
    with database.transaction() as session:
        session.execute(delete(AllowedHostRow).where(AllowedHostRow.tenant_id == tenant.id))
        session.add_all(AllowedHostRow(tenant_id=tenant.id, host=host) for host in hosts)
    return AllowedHosts(hosts=hosts)


@router.get("/egress/gates", responses=gateway_responses())
def get_gates(tenant: AdminDep, database: DatabaseDep) -> TenantGates:
    with database.transaction() as session:
        rows = session.scalars(select(TenantGateRow).where(TenantGateRow.tenant_id == tenant.id)
                               .order_by(TenantGateRow.matches))
        return TenantGates(gates=[TenantGate(matches=row.matches, reason=row.reason) for row in rows])


@router.put("/egress/gates", responses=gateway_responses())
def put_gates(body: TenantGates, tenant: AdminDep, database: DatabaseDep) -> TenantGates:
    """Replace the tenant's gates; a later gate with the same ``matches`` replaces an earlier one."""
    gates = {gate.matches: gate for gate in body.gates}
    with database.transaction() as session:
        session.execute(delete(TenantGateRow).where(TenantGateRow.tenant_id == tenant.id))
        session.add_all(TenantGateRow(tenant_id=tenant.id, matches=g.matches, reason=g.reason) for g in gates.values())
    return TenantGates(gates=sorted(gates.values(), key=lambda g: g.matches))
