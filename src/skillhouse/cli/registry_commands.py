"""The registry's commands: ``skillhouse publish`` and ``skillhouse tokens`` (``serve`` is in :mod:`skillhouse.cli.serve`).

Kept apart from the package's ``__init__`` so the command module stays small; ``add_registry_commands`` attaches
them to the main Typer app. The store, the registry and the HTTP client are imported inside the commands that
use them, so ``skillhouse --help`` and the offline commands never load the server stack.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from skillhouse.registry.errors import RegistryError
from skillhouse.registry.scopes import DEFAULT_SCOPE, SCOPES

if TYPE_CHECKING:
    from skillhouse.client import ClientError
    from skillhouse.store import Database

tokens_app = typer.Typer(help="Create, list and revoke API tokens.", no_args_is_help=True)


def _store(command: str) -> Database:
    # serve's checks: a bad database setting is one line naming the variable, not a traceback (imported
    # here: serve loads SQLAlchemy, ~0.4 s of every command's start-up)
    from skillhouse.cli.serve import configured_store

    return configured_store(command)


def _fail(message: str, code: int = 1) -> NoReturn:
    print(message, file=sys.stderr)
    raise typer.Exit(code)


@tokens_app.command("create")
def tokens_create(
    tenant: Annotated[str, typer.Option("--tenant", help="The tenant the token acts for (created if new).")],
    label: Annotated[str, typer.Option("--label", help="What the token is for.")] = "",
    scope: Annotated[str, typer.Option("--scope", help=f"What it may do: {' | '.join(SCOPES)}. run: turns, calls, MCP; "
                                       "approve: also decide approvals; admin: also publish, credentials, tokens, policy.")
                     ] = DEFAULT_SCOPE,
) -> None:
    """Create a token of a scope (run unless asked) and print it once (only its hash is stored)."""
    # imported here, not at the top: SQLAlchemy would add ~0.4 s to every command's start-up
    from skillhouse.registry.tokens import create_token

    database = _store("tokens create")
    try:
        with database.transaction() as session:
            secret, info = create_token(session, tenant, label, scope)
    except RegistryError as exc:
        _fail(f"error: {exc.code}: {exc.message}", 2)
    print(secret)
    print(f"token {info.id} ({info.scope}) for tenant {info.tenant}; it is shown only now", file=sys.stderr)


@tokens_app.command("list")
def tokens_list(tenant: Annotated[str | None, typer.Option("--tenant", help="Only this tenant's tokens.")] = None) -> None:
    """List tokens (id, tenant, hint, scope, state, label); never their secrets."""
    from skillhouse.registry.tokens import list_tokens  # here: start-up time (see tokens_create)

    database = _store("tokens list")
    with database.transaction() as session:
        infos = list_tokens(session, tenant)
    for info in infos:
        state = f"revoked {info.revoked_at:%Y-%m-%d %H:%M}" if info.revoked_at else "active"
        print(f"{info.id}\t{info.tenant}\t{info.hint}…\t{info.scope}\t{state}\t{info.label}")


@tokens_app.command("revoke")
def tokens_revoke(token_id: Annotated[int, typer.Argument(help="The token's id (from `tokens list`).")]) -> None:
    """Revoke a token: requests with it are refused from now on, and its console sessions end."""
    from skillhouse.registry.tokens import revoke_token  # here: start-up time (see tokens_create)

    database = _store("tokens revoke")
    try:
        with database.transaction() as session:
            info = revoke_token(session, token_id)
    except RegistryError as exc:
        _fail(f"error: {exc.code}: {exc.message}")
    print(f"revoked token {info.id} of tenant {info.tenant}", file=sys.stderr)


def publish(
    path: Annotated[Path, typer.Argument(help="A skill package directory.")],
    server: Annotated[str, typer.Option("--server", help="The registry's base URL.")] = "http://127.0.0.1:8000",
    version: Annotated[str | None, typer.Option("--version", help="Version (default: SKILL.md metadata.version).")] = None,
) -> None:
    """Upload, validate and publish a skill package (token from SKILLHOUSE_TOKEN); prints the digest."""
    # imported here: start-up time (see tokens_create); the client loads httpx and Pydantic
    from skillhouse.cli.environment import settings_or_exit
    from skillhouse.client import Client, ClientError
    from skillhouse.compiler import compile_dir
    from skillhouse.skill import package_files

    token = settings_or_exit().token
    if not token:
        _fail("error: set SKILLHOUSE_TOKEN to an admin API token (skillhouse tokens create --tenant T --scope admin)", 2)
    compiled, errors = compile_dir(path, version)
    if compiled is None:
        for error in errors:
            print(str(error), file=sys.stderr)
        raise typer.Exit(1)
    name, chosen = str(compiled.document["skill"]), str(compiled.document["version"])
    files = {name: data.decode("utf-8") for name, data in package_files(path).items()}
    # the typed client's upload (draft, validate unless identical content is already published, publish):
    # one implementation of the requests, of when to send again and of reading an error answer
    try:
        with Client(server, token) as client:
            release = client.publish(name, chosen, files=files)
    except ClientError as exc:
        _fail(_refusal(server, exc))
    print(f"published {name} {chosen} {release.digest}")


def _refusal(server: str, error: ClientError) -> str:
    """What ``publish`` prints for an error: its status and code, then each problem where it is."""
    from skillhouse.client import ServerUnreachable

    if isinstance(error, ServerUnreachable):
        return f"error: cannot reach {server}: {error.message}"
    lines = [f"error: {error.status} {error.code}: {error.message}"]
    for problem in error.problems:
        where = f"{problem.file}:{1 if problem.line is None else problem.line}" if problem.file else problem.path or ""
        lines.append(f"{where}: {problem.code}: {problem.message}")
    return "\n".join(lines)


def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
) -> None:
    """Run the API and the console (SQLite in the data directory unless SKILLHOUSE_DATABASE_URL); migrations run first."""
    from skillhouse.cli.serve import serve as run_server  # here: the server stack costs every command ~0.5 s

    run_server(host, port)


def add_registry_commands(app: typer.Typer) -> None:
    app.add_typer(tokens_app, name="tokens")
    app.command()(serve)
    app.command()(publish)
