"""Credential bindings and the egress allow-list: the bodies of ``/v1/credentials`` and ``/v1/egress``.

A credential is write-only: :class:`CredentialPut` carries the secret in, :class:`BindingOut` says where it
goes and never what it is.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

CredentialScheme = Literal["bearer", "basic", "header", "oauth2-client-credentials", "oauth2-authorization-code"]
"""How a secret is sent: ``bearer``, ``basic``, an API-key ``header``, or an OAuth 2.0 client's access token."""

HOST_PATTERN = r"^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$"


class CredentialPut(BaseModel):
    """Body of ``PUT /v1/credentials``: a secret for (origin, header). The value is never read back."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    origin: str = Field(
        max_length=300, validation_alias=AliasChoices("origin", "host"),
        description="`https://api.example.com[:port]` or `http://host[:port]` (with `allow_http`). A bare `host` or "
                    "`host:port` (also accepted as the field `host`) means https, port 443 unless given.",
    )  # fmt: skip
    scheme: CredentialScheme = Field(
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
    scheme: CredentialScheme
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
