"""The gateway's commands: ``skillhouse approvals list|show|approve|deny``, ``skillhouse credentials set|list|delete``
(and ``credentials connections list|start|revoke``)
and ``skillhouse keys list|clear|clearings``.

They act on the store named by the settings (``SKILLHOUSE_DATABASE_URL`` or the data directory) for
one tenant (``--tenant``, or for approvals the tenant of the ``SKILLHOUSE_TOKEN`` token), through the same gateway stores the API uses, so a decision here counts once with
decisions made in the API or the console. A credential's secret is read from standard input (or a
hidden prompt), never from the command line where shell history and ``ps`` would keep it, and is
never printed. Clearing an unresolved idempotency key records who cleared it (``--by``). Every refusal prints ``error: CODE: message`` and exits 1 (2 for bad settings).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import parse_qsl, urlsplit

import typer

from skillhouse.json_types import JsonObject

if TYPE_CHECKING:
    from skillhouse.gateway import Gateway

approvals_app = typer.Typer(help="Held requests: list them, show one in full, approve or deny.", no_args_is_help=True)
credentials_app = typer.Typer(help="Credentials the gateway injects, per tenant, origin and header.", no_args_is_help=True)
keys_app = typer.Typer(help="Idempotency keys: list them, clear an unresolved one after checking the upstream.",
                       no_args_is_help=True)

Tenant = Annotated[str, typer.Option("--tenant", help="The tenant whose approvals or credentials these are.")]
TenantOrToken = Annotated[
    str | None, typer.Option("--tenant", help="The tenant whose approvals these are (default: SKILLHOUSE_TOKEN's).")
]
States = ("pending", "approved", "denied", "used", "expired")
KeyStates = ("running", "completed", "unresolved")


def _fail(code: str, message: str, status: int = 1) -> typer.Exit:
    print(f"error: {code}: {message}", file=sys.stderr)
    return typer.Exit(status)


@contextmanager
def _gateway() -> Iterator[Gateway]:
    # imported here, not at the top: the gateway and SQLAlchemy would add ~0.4 s to every command's start-up
    from skillhouse.cli.environment import settings_or_exit
    from skillhouse.gateway import GatewayError, make_gateway
    from skillhouse.store import open_database

    settings = settings_or_exit()
    try:
        database = open_database(settings.database_url)
    except ValueError as exc:
        raise _fail("invalid-settings", str(exc), 2) from None
    try:
        gateway = make_gateway(settings, database)
    except GatewayError as exc:
        database.dispose()
        raise _fail(exc.code, exc.message, 2) from None
    try:
        yield gateway
    except GatewayError as exc:
        raise _fail(exc.code, exc.message) from None
    finally:
        gateway.close()
        database.dispose()


def _tenant(gateway: Gateway, tenant: str | None) -> str:
    """``--tenant`` when given, else the tenant of the ``SKILLHOUSE_TOKEN`` token."""
    from skillhouse.registry.tokens import TokenRejected, authenticate  # here: start-up time (see _gateway)

    if tenant:
        return tenant
    from skillhouse.cli.environment import settings_or_exit

    token = settings_or_exit().token
    if not token:
        raise _fail("no-tenant", "give --tenant T or set SKILLHOUSE_TOKEN to one of the tenant's API tokens", 2)
    try:
        with gateway.database.transaction() as session:
            return authenticate(session, token).id
    except TokenRejected as exc:
        raise _fail(exc.code, f"SKILLHOUSE_TOKEN: {exc.message}", 2) from None


def iso_time(seconds: float) -> str:
    """A stored epoch time as ISO 8601 in UTC, to the second: ``2030-05-01T12:00:00Z``."""
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def request_summary(request: JsonObject, most: int = 4) -> str:
    """One line for a held (canonical) request: method, path, and its first few scalar arguments from query and body."""
    parts = urlsplit(str(request.get("url", "")))
    arguments: list[tuple[str, Any]] = parse_qsl(parts.query, keep_blank_values=True)
    body = request.get("body") or {}  # {"text": the body exactly as sent}; approvals held before the canonical request: {"json": value}
    text = str(body.get("text", ""))
    headers = request.get("headers") or {}
    decoded: Any
    if "json" in body:
        decoded = body["json"]
    elif "json" in str(headers.get("content-type", "")).lower():
        try:
            decoded = json.loads(text)
        except ValueError:
            decoded = None
    else:
        decoded = dict(parse_qsl(text, keep_blank_values=True))
    if isinstance(decoded, dict):
        arguments += [(str(k), v) for k, v in decoded.items() if not isinstance(v, dict | list)]
    shown = " ".join(f"{name}={_short(value)}" for name, value in arguments[:most])
    more = f" (+{len(arguments) - most} more)" if len(arguments) > most else ""
    return f"{request.get('method', '?')} {parts.path or '/'}" + (f" {shown}{more}" if shown else "")


def _short(value: Any, width: int = 24) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    text = text if len(text) <= width else text[: width - 1] + "…"
    return json.dumps(text) if isinstance(value, str) and (not text or " " in text or "\t" in text) else text


@approvals_app.command("list")
def approvals_list(
    tenant: TenantOrToken = None,
    state: Annotated[str | None, typer.Option("--state", help=f"Only this state: {', '.join(States)}.")] = None,
) -> None:
    """One line per approval, newest first: id, state, operation, the request in short, created and expiry (UTC)."""
    if state is not None and state not in States:
        raise _fail("invalid-state", f"--state must be one of {', '.join(States)}")
    with _gateway() as gateway:
        for approval in gateway.approvals.list(_tenant(gateway, tenant), state):
            print(f"{approval.id}\t{approval.state}\t{approval.operation or '-'}\t{request_summary(approval.canonical)}"
                  f"\tcreated {iso_time(approval.created_at)}\texpires {iso_time(approval.expires_at)}")


@approvals_app.command("show")
def approvals_show(
    approval_id: Annotated[str, typer.Argument(help="The approval's id (apr_...).")], tenant: TenantOrToken = None
) -> None:
    """The approval as JSON: the exact request held, its commitment, state and expiry."""
    with _gateway() as gateway:
        approval = gateway.approvals.get(_tenant(gateway, tenant), approval_id)
        print(json.dumps(approval.document(), indent=2, ensure_ascii=False))


def _decide(approval_id: str, tenant: str | None, approve: bool, by: str, reason: str | None = None) -> None:
    with _gateway() as gateway:
        approval = gateway.approvals.decide(_tenant(gateway, tenant), approval_id, approve, by[:200], note=reason)
    print(f"{approval.id} {approval.state}", file=sys.stderr)


@approvals_app.command("approve")
def approvals_approve(
    approval_id: Annotated[str, typer.Argument(help="The approval's id (apr_...).")],
    tenant: TenantOrToken = None,
    by: Annotated[str, typer.Option("--by", help="Who decides (recorded).")] = "cli",
) -> None:
    """Approve a pending request: the identical request then runs once."""
    _decide(approval_id, tenant, True, by)


@approvals_app.command("deny")
def approvals_deny(
    approval_id: Annotated[str, typer.Argument(help="The approval's id (apr_...).")],
    tenant: TenantOrToken = None,
    by: Annotated[str, typer.Option("--by", help="Who decides (recorded).")] = "cli",
    reason: Annotated[str | None, typer.Option("--reason", help="Why (at most 500 characters); the model that asks again is told.")] = None,
) -> None:
    """Deny a pending request: it never runs, and retrying it is refused (approval-denied, with the reason)."""
    _decide(approval_id, tenant, False, by, reason)


_ORIGIN_HELP = "https://host[:port], http://host[:port] (with --allow-http), or a bare host[:port] meaning https."


@credentials_app.command("set")
def credentials_set(
    tenant: Tenant,
    origin: Annotated[str, typer.Option("--origin", "--host", help=_ORIGIN_HELP)],
    scheme: Annotated[str, typer.Option(
        "--scheme", help="bearer, basic (user:password), header, oauth2-client-credentials (the secret is the client "
                         "secret; the gateway fetches the access token from --token-url) or oauth2-authorization-code "
                         "(the secret is the client secret; each person connects their account).")] = "bearer",
    header: Annotated[str | None, typer.Option("--header", help="Header name for --scheme header.")] = None,
    allow_http: Annotated[bool, typer.Option("--allow-http", help="Opt in to sending it over plain http.")] = False,
    token_url: Annotated[str | None, typer.Option("--token-url", help="OAuth 2.0: the token endpoint.")] = None,
    client_id: Annotated[str | None, typer.Option("--client-id", help="OAuth 2.0: the client id.")] = None,
    scope: Annotated[list[str] | None, typer.Option("--scope", help="OAuth 2.0: a scope to request (repeat).")] = None,
    audience: Annotated[str | None, typer.Option("--audience", help="Client credentials: the audience to request.")] = None,
    resource: Annotated[str | None, typer.Option("--resource", help="Client credentials: an RFC 8707 resource indicator.")] = None,
    token_auth: Annotated[str, typer.Option(
        "--token-auth", help="OAuth 2.0: client_secret_basic or client_secret_post.")] = "client_secret_basic",
    authorization_url: Annotated[str | None, typer.Option(
        "--authorization-url", help="Authorization code: the provider's authorization endpoint.")] = None,
    redirect_uri: Annotated[str | None, typer.Option(
        "--redirect-uri", help="Authorization code: https://<this deployment>/v1/connections/callback.")] = None,
    revocation_url: Annotated[str | None, typer.Option(
        "--revocation-url", help="Authorization code: the provider's RFC 7009 revocation endpoint.")] = None,
) -> None:  # fmt: skip
    """Bind a secret, read from standard input (or a hidden prompt), to (tenant, origin, header)."""
    from skillhouse.gateway.oauth_client import (
        CODE_GRANT,
        GRANT,
        authorization_code_client,
        client_credentials,
    )

    oauth, code = scheme == GRANT, scheme == CODE_GRANT
    if not (oauth or code) and (token_url or client_id or scope or audience or resource):
        raise _fail("invalid-credential", f"--token-url, --client-id, --scope, --audience and --resource need --scheme {GRANT} "
                                          f"or {CODE_GRANT}")  # fmt: skip
    if not code and (authorization_url or redirect_uri or revocation_url):
        raise _fail("invalid-credential", f"--authorization-url, --redirect-uri and --revocation-url need --scheme {CODE_GRANT}")
    if oauth and not (token_url and client_id):
        raise _fail("invalid-credential", f"--scheme {GRANT} needs --token-url and --client-id")
    if code and not (token_url and client_id and authorization_url and redirect_uri):
        raise _fail("invalid-credential", f"--scheme {CODE_GRANT} needs --authorization-url, --token-url, --client-id and "
                                          "--redirect-uri")  # fmt: skip
    if code and (audience or resource):
        raise _fail("invalid-credential", f"--audience and --resource need --scheme {GRANT}")
    if sys.stdin.isatty():
        secret = typer.prompt("client secret" if oauth or code else "secret", hide_input=True)
    else:
        secret = sys.stdin.readline().rstrip("\r\n")
    with _gateway() as gateway:
        if code:
            coded = authorization_code_client(authorization_url or "", token_url or "", client_id or "", secret,
                                              redirect_uri or "", scope or [], revocation_url, token_auth, allow_http)
            binding = gateway.credentials.put_client(tenant, origin, coded, allow_http)
        elif oauth:
            client = client_credentials(token_url or "", client_id or "", secret, scope or [], audience, resource,
                                        token_auth, allow_http)  # fmt: skip
            binding = gateway.credentials.put_client_credentials(tenant, origin, client, allow_http)
        else:
            binding = gateway.credentials.put(tenant, origin, scheme, secret, header, allow_http)
    print(f"bound {binding.scheme} credential to {binding.origin.text} ({binding.header})", file=sys.stderr)


@credentials_app.command("list")
def credentials_list(tenant: Tenant) -> None:
    """The tenant's bindings: origin, header, scheme (and ``allow-http`` for a plain http one); never a value."""
    with _gateway() as gateway:
        for binding in gateway.credentials.list(tenant):
            opt_in = "\tallow-http" if binding.allow_http else ""
            client = "" if binding.client is None else f"\t{binding.client.token_url}\t{binding.client.client_id}"
            print(f"{binding.origin.text}\t{binding.header}\t{binding.scheme}{opt_in}{client}")


connections_app = typer.Typer(help="People's own OAuth connections (oauth2-authorization-code bindings): list, start, revoke.",
                              no_args_is_help=True)  # fmt: skip
credentials_app.add_typer(connections_app, name="connections")


@connections_app.command("list")
def connections_list(
    tenant: Tenant,
    subject: Annotated[str | None, typer.Option("--subject", help="Only this person's connections.")] = None,
) -> None:
    """One line per connection: subject, origin, scopes, access token expiry, last used (epoch seconds); never a token."""
    with _gateway() as gateway:
        for c in gateway.connections.list(tenant, subject):
            used = "never" if c.last_used_at is None else f"{c.last_used_at:.0f}"
            refresh = "refreshable" if c.refreshable else "no-refresh-token"
            print(f"{c.subject}\t{c.origin}\t{' '.join(c.scopes) or '-'}\texpires {c.expires_at:.0f}\t{refresh}\tlast used {used}")


@connections_app.command("start")
def connections_start(
    tenant: Tenant,
    subject: Annotated[str, typer.Option("--subject", help="The person who connects (as turns are bound with).")],
    origin: Annotated[str, typer.Option("--origin", help="The origin of an oauth2-authorization-code binding.")],
) -> None:
    """Print the authorization URL for the person to open (valid ten minutes, once)."""
    with _gateway() as gateway:
        started = gateway.connections.start(tenant, subject, origin)
    print(started.authorization_url)


@connections_app.command("revoke")
def connections_revoke(
    tenant: Tenant,
    subject: Annotated[str, typer.Option("--subject", help="Whose connection.")],
    origin: Annotated[str, typer.Option("--origin", help="The binding's origin.")],
) -> None:
    """Delete the connection and revoke it at the provider's revocation endpoint when the binding names one."""
    from skillhouse.gateway.credential_input import parse_origin

    with _gateway() as gateway:
        revoked = gateway.connections.revoke(tenant, subject, parse_origin(origin).text)
    if revoked is None:
        raise _fail("connection-not-found", f"no connection of {subject} to {origin} in tenant {tenant}")
    print(f"revoked the connection of {subject} to {revoked.connection.origin}: {revoked.provider_message}", file=sys.stderr)


@credentials_app.command("delete")
def credentials_delete(
    tenant: Tenant,
    origin: Annotated[str, typer.Option("--origin", "--host", help=_ORIGIN_HELP)],
    header: Annotated[str, typer.Option("--header", help="The binding's header.")] = "authorization",
) -> None:
    """Remove a binding; the gateway stops injecting it at once."""
    with _gateway() as gateway:
        if not gateway.credentials.delete(tenant, origin, header):
            raise _fail("credential-not-found", f"no credential for {origin} ({header.lower()}) of tenant {tenant}")
    print(f"deleted the credential for {origin} ({header.lower()})", file=sys.stderr)


@keys_app.command("list")
def keys_list(
    tenant: Tenant,
    state: Annotated[str | None, typer.Option("--state", help=f"Only this state: {', '.join(KeyStates)}.")] = None,
) -> None:
    """One line per key, newest first: key, state, operation, created, expires (epoch seconds)."""
    if state is not None and state not in KeyStates:
        raise _fail("invalid-state", f"--state must be one of {', '.join(KeyStates)}")
    with _gateway() as gateway:
        for key in gateway.key_review.list(tenant, state):
            print(f"{key.key}\t{key.state}\t{key.operation}\tcreated {key.created_at:.0f}\texpires {key.expires_at:.0f}")


@keys_app.command("clear")
def keys_clear(
    key: Annotated[str, typer.Argument(help="The unresolved key (skh-...).")],
    tenant: Tenant,
    by: Annotated[str, typer.Option("--by", help="Who clears it (recorded).")] = "cli",
) -> None:
    """Clear an unresolved key once the upstream was checked: the identical request may then run again."""
    with _gateway() as gateway:
        clearing = gateway.key_review.clear(tenant, key, f"cli: {by}")
    print(f"cleared {clearing.key} ({clearing.operation}) by {clearing.cleared_by}", file=sys.stderr)


@keys_app.command("clearings")
def keys_clearings(tenant: Tenant) -> None:
    """Every clearing of the tenant's keys, newest first: key, operation, who, when (epoch seconds)."""
    with _gateway() as gateway:
        for clearing in gateway.key_review.clearings(tenant):
            print(f"{clearing.key}\t{clearing.operation}\t{clearing.cleared_by}\t{clearing.cleared_at:.0f}")


def add_gateway_commands(app: typer.Typer) -> None:
    app.add_typer(approvals_app, name="approvals")
    app.add_typer(credentials_app, name="credentials")
    app.add_typer(keys_app, name="keys")
