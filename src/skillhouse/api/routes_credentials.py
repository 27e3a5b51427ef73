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
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
)

from skillhouse.api.deps import AdminDep, DatabaseDep
from skillhouse.api.gateway_deps import GatewayDep, gateway_responses
from skillhouse.gateway import Binding, tenant_rules
from skillhouse.gateway.errors import CredentialError
from skillhouse.gateway.oauth_client import (
    CODE_GRANT,
    GRANT,
    GRANTS,
    authorization_code_client,
    client_credentials,
)
from skillhouse.registry.errors import NotFound

router = APIRouter(prefix="/v1", tags=["credentials"])

Scheme = Literal["bearer", "basic", "header", "oauth2-client-credentials", "oauth2-authorization-code"]
HOST_PATTERN = r"^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$"
Host = Annotated[str, Path(pattern=HOST_PATTERN, max_length=255, description="`host` or `host:port`.")]
OriginScheme = Annotated[Literal["http", "https"], Query(description="The binding's origin scheme.")]
HeaderName = Annotated[str, Path(pattern=r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}$", description="The header's name.")]


class CredentialPut(BaseModel):
    """Body of ``PUT /v1/credentials``: a secret for (origin, header). The value is never read back."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    origin: str = Field(
        max_length=300, validation_alias=AliasChoices("origin", "host"),
        description="`https://api.example.com[:port]` or `http://host[:port]` (with `allow_http`). A bare `host` or "
                    "`host:port` (also accepted as the field `host`) means https, port 443 unless given.",
    )  # fmt: skip
    scheme: Scheme = Field(
        description="`bearer`: `Authorization: Bearer <value>`; `basic`: value `user:password`; `header`: `<header>: <value>`; "
                    "`oauth2-client-credentials`: value is the client secret, the gateway sends "
                    "`Authorization: Bearer <access token>` fetched from `token_url`; `oauth2-authorization-code`: value is "
                    "the client secret, each turn's call sends its subject's own connection's access token "
                    "(`/v1/connections`).")
    header: str | None = Field(default=None, pattern=r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}$",
                               description="The header name for scheme `header` (an API-key header).")
    allow_http: bool = Field(default=False, description="Opt in to sending this secret over plain http (an `http://` origin).")
    value: str = Field(max_length=65536, json_schema_extra={"writeOnly": True},
                       description="The secret: printable ASCII, no leading or trailing space, a header value of at most "
                                   "8192 bytes. Stored encrypted; never returned, logged or shown.")
    token_url: str | None = Field(default=None, max_length=2000,
                                  description="`oauth2-client-credentials`: the token endpoint; https, or http with "
                                              "`allow_http`. The client secret is sent nowhere else.")
    client_id: str | None = Field(default=None, max_length=255, description="`oauth2-client-credentials`: the client id.")
    scopes: list[str] = Field(default_factory=list, max_length=50, description="`oauth2-client-credentials`: scopes requested.")
    audience: str | None = Field(default=None, max_length=2000, description="`oauth2-client-credentials`: `audience` sent.")
    resource: str | None = Field(default=None, max_length=2000,
                                 description="`oauth2-client-credentials`: RFC 8707 `resource` indicator sent.")
    token_auth_method: Literal["client_secret_basic", "client_secret_post"] = Field(
        default="client_secret_basic", description="`oauth2-*`: how the client authenticates at the token endpoint.")
    authorization_url: str | None = Field(default=None, max_length=2000,
                                          description="`oauth2-authorization-code`: the provider's authorization endpoint.")
    redirect_uri: str | None = Field(default=None, max_length=2000,
                                     description="`oauth2-authorization-code`: this deployment's "
                                                 "`https://<host>/v1/connections/callback`, registered with the provider.")
    revocation_url: str | None = Field(default=None, max_length=2000,
                                       description="`oauth2-authorization-code`: the provider's RFC 7009 revocation "
                                                   "endpoint, told when a connection is revoked.")


class ClientOut(BaseModel):
    """An OAuth 2.0 binding's client: everything but its secret."""

    token_url: str
    client_id: str
    scopes: list[str]
    audience: str | None
    resource: str | None
    token_auth_method: str
    authorization_url: str | None = None
    redirect_uri: str | None = None
    revocation_url: str | None = None


class BindingOut(BaseModel):
    """Where a credential goes; never what it is."""

    origin: str = Field(description="`scheme://host[:port]`, the port left out when it is the scheme's default.")
    host: str
    port: int
    header: str = Field(description="Lowercased header name.")
    scheme: Scheme
    allow_http: bool = Field(description="Whether the origin is plain http, opted in to.")
    client: ClientOut | None = Field(default=None, description="For `oauth2-client-credentials`: the client, never its secret; "
                                                                  "null for a static binding.")


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
    shown = binding.client
    client = None if shown is None else ClientOut(
        token_url=shown.token_url, client_id=shown.client_id, scopes=list(shown.scopes), audience=shown.audience,
        resource=shown.resource, token_auth_method=shown.auth_method, authorization_url=shown.authorization_url,
        redirect_uri=shown.redirect_uri, revocation_url=shown.revocation_url,
    )  # fmt: skip
    return BindingOut(origin=binding.origin.text, host=binding.host, port=binding.origin.port, header=binding.header,
                      scheme=binding.scheme, allow_http=binding.allow_http, client=client)


def _put(tenant: str, body: CredentialPut, gateway: GatewayDep) -> Binding:
    oauth = (body.token_url, body.client_id, body.audience, body.resource)
    code = (body.authorization_url, body.redirect_uri, body.revocation_url)
    if body.scheme not in GRANTS:
        if any(v is not None for v in (*oauth, *code)) or body.scopes:
            raise CredentialError(f"token_url, client_id, scopes and the other client fields belong to {GRANT} and "
                                  f"{CODE_GRANT} only", field="scheme")  # fmt: skip
        return gateway.credentials.put(tenant, body.origin, body.scheme, body.value, body.header, body.allow_http)
    if body.header is not None:
        raise CredentialError(f"a {body.scheme} binding always sets Authorization; leave header out", field="header")
    required = ("token_url", "client_id") if body.scheme == GRANT else ("authorization_url", "token_url", "client_id",
                                                                       "redirect_uri")  # fmt: skip
    for name in required:
        if getattr(body, name) is None:
            raise CredentialError(f"{name} is required for scheme {body.scheme}", field=name)
    if body.scheme == CODE_GRANT:
        for name in ("audience", "resource"):
            if getattr(body, name) is not None:
                raise CredentialError(f"{name} belongs to scheme {GRANT} only", field=name)
        coded = authorization_code_client(
            body.authorization_url or "", body.token_url or "", body.client_id or "", body.value, body.redirect_uri or "",
            body.scopes, body.revocation_url, body.token_auth_method, body.allow_http,
        )  # fmt: skip
        return gateway.credentials.put_client(tenant, body.origin, coded, body.allow_http)
    if any(v is not None for v in code):
        raise CredentialError(f"authorization_url, redirect_uri and revocation_url belong to scheme {CODE_GRANT} only",
                              field="scheme")  # fmt: skip
    client = client_credentials(
        body.token_url or "", body.client_id or "", body.value, body.scopes, body.audience, body.resource,
        body.token_auth_method, body.allow_http,
    )  # fmt: skip
    return gateway.credentials.put_client_credentials(tenant, body.origin, client, body.allow_http)


@router.put("/credentials", responses=gateway_responses())
def put_credential(body: CredentialPut, tenant: AdminDep, gateway: GatewayDep) -> BindingOut:
    """Bind a secret to (origin, header) for the calling tenant, replacing an earlier one.

    Refused with a code and the field: `invalid-origin`, `origin-scheme-refused`, `http-needs-opt-in`,
    `allow-http-mismatch`, `secret-not-sendable`, `secret-too-long`, `invalid-credential` (with the field:
    `token_url`, `client_id`, `scopes[n]`, `audience`, `resource` for an OAuth 2.0 client)."""
    return _out(_put(tenant.id, body, gateway))


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
