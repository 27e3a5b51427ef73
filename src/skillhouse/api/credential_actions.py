"""What the API's credential and connection routes and the console's forms both do, written once: bind a
credential of any kind from a :class:`~skillhouse.wire.credentials.CredentialPut` (the same checks, the
same refusals with their ``field``). Starting a person's connection is the gateway's own
:meth:`~skillhouse.gateway.connections.ConnectionBroker.start`, which the CLI calls too."""

from __future__ import annotations

from skillhouse.gateway import Binding, Gateway
from skillhouse.gateway.errors import CredentialError
from skillhouse.gateway.oauth_client import (
    CODE_GRANT,
    GRANT,
    GRANTS,
    authorization_code_client,
    client_credentials,
)
from skillhouse.wire.credentials import CredentialPut


def bind_credential(gateway: Gateway, tenant: str, body: CredentialPut) -> Binding:
    """Bind ``body`` for ``tenant``, replacing an earlier binding of the same origin and header.

    Refused with :class:`CredentialError` naming the field (``scheme``, ``header``, ``token_url``...)."""
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

