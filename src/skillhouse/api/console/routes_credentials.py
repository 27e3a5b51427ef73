"""The tenant's credential bindings and people's OAuth connections, managed by an admin: where each binding
goes and of what kind (an OAuth client's token URL, client id and scopes; never a secret), each
connection's subject, scopes, expiry and last use (never a token), and forms to bind a credential of
every kind, delete a binding, start a person's connection and revoke one.

Binding goes through the same :func:`~skillhouse.api.credential_actions.bind_credential` as ``PUT
/v1/credentials``, with the same body model, so a refusal is the API's own message, shown next to the
field it names. The secret is write-only: a password field, never put back into a page (a refused form
comes back with every other field as typed) and never in a redirect. Every form carries the session's
CSRF token and needs an ``admin`` session, checked here on the server.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError

from skillhouse.api.console.pages import page
from skillhouse.api.console.routing import ConsoleRoute
from skillhouse.api.console.sessions import AdminSessionDep, ConsoleSession, FormDep
from skillhouse.api.credential_actions import bind_credential
from skillhouse.api.gateway_deps import get_gateway
from skillhouse.gateway.credential_input import parse_origin
from skillhouse.gateway.errors import BindingNotFound, CredentialError
from skillhouse.registry.errors import NotFound
from skillhouse.wire.credentials import CredentialPut

router = APIRouter(route_class=ConsoleRoute)
PATH = "/console/credentials"

# field: (label, hint, input type)
FIELDS: dict[str, tuple[str, str, str]] = {
    "origin": ("Origin", "https://api.example.com[:port]; http:// only with plain http allowed below.", "text"),
    "header": ("Header name", "The header that carries the key, such as X-Api-Key.", "text"),
    "value": ("Secret", "Write-only: stored encrypted, never shown again.", "password"),
    "authorization_url": ("Authorization URL", "The provider's authorization endpoint.", "url"),
    "token_url": ("Token URL", "The provider's token endpoint; the client secret is sent nowhere else.", "url"),
    "client_id": ("Client id", "", "text"),
    "redirect_uri": ("Redirect URI", "This deployment's https://<host>/v1/connections/callback, registered with the "
                                     "provider.", "url"),
    "scopes": ("Scopes", "Separated by spaces.", "text"),
    "audience": ("Audience", "Optional: the audience parameter sent to the token endpoint.", "text"),
    "resource": ("Resource", "Optional: an RFC 8707 resource indicator.", "text"),
    "revocation_url": ("Revocation URL", "Optional: the provider's RFC 7009 endpoint, told when a connection is "
                                         "revoked.", "url"),
    "token_auth_method": ("Client authentication", "How the client authenticates at the token endpoint.", "select"),
    "allow_http": ("Allow plain http", "Send this secret over an http:// origin, readable on the network.", "checkbox"),
}
_OAUTH = ["origin", "token_url", "client_id", "value", "scopes"]
# scheme: (title, the secret's label, its fields in order)
KINDS: dict[str, tuple[str, str, list[str]]] = {
    "bearer": ("Bearer token", "Token", ["origin", "value", "allow_http"]),
    "basic": ("Basic authentication", "user:password", ["origin", "value", "allow_http"]),
    "header": ("API key in a header", "Key", ["origin", "header", "value", "allow_http"]),
    "oauth2-client-credentials": ("OAuth 2.0 client credentials", "Client secret",
                                  [*_OAUTH, "audience", "resource", "token_auth_method", "allow_http"]),
    "oauth2-authorization-code": ("OAuth 2.0 authorization code (each person connects)", "Client secret",
                                  ["origin", "authorization_url", *_OAUTH[1:], "redirect_uri", "revocation_url",
                                   "token_auth_method", "allow_http"]),
}  # fmt: skip
AUTH_METHODS = ("client_secret_basic", "client_secret_post")
_TEXT = ("origin", "header", "token_url", "client_id", "audience", "resource", "token_auth_method",
         "authorization_url", "redirect_uri", "revocation_url")  # fmt: skip


def _render(request: Request, session: ConsoleSession, status: int = 200, **values: Any) -> HTMLResponse:
    gateway = get_gateway(request)
    bindings = gateway.credentials.list(session.tenant)
    coded = [b.origin.text for b in bindings if b.scheme == "oauth2-authorization-code"]
    shown: dict[str, Any] = {"errors": {}, "entered": {}, "kind": None, "started": None, "revoked": None,
                             "notice": None, "connect": {}, "connect_errors": {}} | values  # fmt: skip
    return page(request, "credentials.html", session, status=status, title="Credentials", bindings=bindings,
                connections=gateway.connections.list(session.tenant), kinds=KINDS, fields=FIELDS,
                auth_methods=AUTH_METHODS, coded_origins=coded, **shown)  # fmt: skip


def _notice(request: Request, session: ConsoleSession, bound: str, deleted: str) -> str | None:
    """The confirmation a redirect asks for, said as the store's state now (so a link cannot make it untrue)."""
    held = {(b.origin.text, b.header) for b in get_gateway(request).credentials.list(session.tenant)}
    origin, _, header = bound.rpartition(" ")
    if origin and (origin, header) in held:
        return f"A credential is bound for {origin} ({header}); it replaced any earlier one."
    origin, _, header = deleted.rpartition(" ")
    if origin and (origin, header) not in held:
        return f"No credential is bound for {origin} ({header}) now; the gateway no longer sends one."
    return None


@router.get(PATH)
def credentials_view(request: Request, session: AdminSessionDep, bound: str = "", deleted: str = "") -> HTMLResponse:
    return _render(request, session, notice=_notice(request, session, bound, deleted))


def credential_body(form: dict[str, str]) -> dict[str, Any]:
    """A bind form as the body ``PUT /v1/credentials`` takes: empty fields left out, scopes split on spaces."""
    body: dict[str, Any] = {name: form[name].strip() for name in _TEXT if form.get(name, "").strip()}
    body["scheme"] = form.get("scheme", "")
    if form.get("value"):
        body["value"] = form["value"]
    if form.get("scopes", "").strip():
        body["scopes"] = form["scopes"].split()
    body["allow_http"] = form.get("allow_http", "") in ("on", "true", "1")
    return body


@router.post(f"{PATH}/bind", response_model=None)
def bind(request: Request, session: AdminSessionDep, form: FormDep) -> HTMLResponse | RedirectResponse:
    kind = form.get("scheme", "")
    errors: dict[str, str] = {}
    try:
        binding = bind_credential(get_gateway(request), session.tenant, CredentialPut.model_validate(credential_body(form)))
    except ValidationError as exc:
        for error in exc.errors():
            where = str(error["loc"][0]) if error["loc"] else "scheme"
            errors.setdefault(where, error["msg"])
    except CredentialError as exc:
        errors[str(exc.details.get("field", "scheme")).partition("[")[0]] = exc.message
    if errors:
        entered = {name: value for name, value in form.items() if name not in ("value", "csrf")}
        return _render(request, session, status=422, errors=errors, entered=entered, kind=kind)
    shown = quote(f"{binding.origin.text} {binding.header}", safe="")
    return RedirectResponse(f"{PATH}?bound={shown}", status_code=303)


@router.post(f"{PATH}/delete")
def delete(request: Request, session: AdminSessionDep, form: FormDep) -> RedirectResponse:
    origin, header = form.get("origin", ""), form.get("header", "").lower()
    where = parse_origin(origin).text
    if not get_gateway(request).credentials.delete(session.tenant, where, header):
        raise NotFound("credential-not-found", f"no credential for {where} ({header})")
    return RedirectResponse(f"{PATH}?deleted={quote(f'{where} {header}', safe='')}", status_code=303)


@router.post(f"{PATH}/connections")
def start_connection(request: Request, session: AdminSessionDep, form: FormDep) -> HTMLResponse:
    """Start a person's connection: the page shows the authorization URL to give them (never in a redirect)."""
    subject, origin = form.get("subject", ""), form.get("origin", "")
    try:
        started = get_gateway(request).connections.start(session.tenant, subject, origin)
    except CredentialError as exc:
        field = str(exc.details.get("field", "subject"))
        return _render(request, session, status=422, connect={"subject": subject, "origin": origin},
                       connect_errors={field: exc.message})  # fmt: skip
    except BindingNotFound as exc:
        return _render(request, session, status=404, connect={"subject": subject, "origin": origin},
                       connect_errors={"origin": exc.message})  # fmt: skip
    return _render(request, session, started=started)


@router.post(f"{PATH}/connections/revoke")
def revoke_connection(request: Request, session: AdminSessionDep, form: FormDep) -> HTMLResponse:
    subject, origin = form.get("subject", ""), form.get("origin", "")
    revoked = get_gateway(request).connections.revoke(session.tenant, subject, parse_origin(origin).text)
    if revoked is None:
        raise NotFound("connection-not-found", f"no connection of {subject} to {origin}")
    return _render(request, session, revoked=revoked)
