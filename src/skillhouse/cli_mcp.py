"""``skillhouse mcp``: bind a turn to releases in the local store and serve its tools over MCP.

The turn is bound the way every turn is: the releases are read from the registry store for one
tenant, a turn row is recorded (profile ``mcp``) so approvals and the audit log name it, every
request the guest builds goes through the gateway (egress, credentials, approvals, idempotency),
and the guest runs in the runner the settings choose. Every problem before serving is a
:class:`BindError` with a stable code, which the command prints and exits 2 on: never a traceback.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from skillhouse.gateway import BoundReleases, Gateway, GatewayConfig, TurnContext
from skillhouse.host import TurnHost, make_runner
from skillhouse.host.runner import RUNNER_KINDS, GuestRunner
from skillhouse.registry.errors import RegistryError
from skillhouse.registry.releases import get_release
from skillhouse.registry.tokens import TokenRejected, authenticate
from skillhouse.settings import Settings
from skillhouse.store import Database, open_database
from skillhouse.store.gateway_tables import TurnRow

SKILL_REF = re.compile(r"^(?P<skill>[^@\s]+)@(?P<version>[^@\s]+)$")
PROFILE = "mcp"


class BindError(Exception):
    """The turn cannot be bound: ``code`` says why (``invalid-skill``, ``no-tenant``, ``not-found``...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class BoundTurn:
    """A turn bound for MCP: its id and tenant, the release documents, the guest and the gateway."""

    turn_id: str
    tenant: str
    releases: list[dict[str, Any]]
    runner: GuestRunner
    gateway: Gateway
    database: Database
    closing: list[Any] = field(default_factory=list)

    def instructions(self) -> str:
        """What the client's model is told: the skills' descriptions and where approvals happen."""
        skills = "\n".join(f"- {r['skill']} {r['version']}: {r.get('description', '')}" for r in self.releases)
        return (
            f"Tools of skillhouse turn {self.turn_id} (tenant {self.tenant}):\n{skills}\n"
            "Every call is checked and sent through the skillhouse gateway. A call held for approval "
            "answers with an approval id; after a person approves it, repeat the same call once. "
            "Read a skill's instructions and documents with read_object (e.g. 'skill/<name>')."
        )

    def close(self) -> None:
        for resource in self.closing:
            resource.close()
        self.gateway.close()
        self.database.dispose()


def parse_skill_refs(refs: Sequence[str]) -> list[tuple[str, str]]:
    """``NAME@VERSION`` strings to pairs; every malformed one is named at once."""
    if not refs:
        raise BindError("invalid-skill", "give at least one --skill NAME@VERSION")
    parsed = [SKILL_REF.match(ref.strip()) for ref in refs]
    bad = [ref for ref, match in zip(refs, parsed, strict=True) if match is None]
    if bad:
        raise BindError("invalid-skill", f"--skill must be NAME@VERSION (e.g. hollowbrook@1.0.0); not {', '.join(map(repr, bad))}")
    return [(m["skill"], m["version"]) for m in parsed if m is not None]


def choose_tenant(database: Database, tenant: str | None, token: str | None) -> str:
    """``--tenant`` when given, else the tenant of the ``SKILLHOUSE_TOKEN`` token."""
    if tenant:
        return tenant
    if not token:
        raise BindError("no-tenant", "give --tenant T or set SKILLHOUSE_TOKEN to one of the tenant's API tokens")
    with database.transaction() as session:
        try:
            return authenticate(session, token).id
        except TokenRejected as exc:
            raise BindError(exc.code, f"SKILLHOUSE_TOKEN: {exc.message}") from None


def bind_turn(settings: Settings, refs: Sequence[str], tenant: str | None = None,
              token: str | None = None, guest: str | None = None) -> BoundTurn:
    """Read the releases, record the turn row, put the gateway in front, start the guest runner."""
    wanted = parse_skill_refs(refs)
    kind = guest or settings.guest
    if kind not in RUNNER_KINDS:
        raise BindError("invalid-guest", f"guest runner {kind!r} is not one of {', '.join(RUNNER_KINDS)}")
    try:
        database = open_database(settings.database_url)
    except Exception as exc:  # a bad URL, an unreachable server or a failed migration: all said the same way
        raise BindError("database-unavailable", f"cannot open the store at {settings.database_url}: {exc}") from None
    try:
        return _bind(database, settings, wanted, choose_tenant(database, tenant, token), kind)
    except BaseException:
        database.dispose()
        raise


def _bind(database: Database, settings: Settings, wanted: list[tuple[str, str]], tenant: str, kind: str) -> BoundTurn:
    turn_id = "turn_" + secrets.token_hex(12)
    with database.transaction() as session:
        releases = []
        for skill, version in wanted:
            try:
                releases.append(get_release(session, tenant, skill, version))
            except RegistryError as exc:
                raise BindError(exc.code, f"{skill}@{version}: {exc.message} for tenant {tenant}") from None
        session.add(TurnRow(id=turn_id, tenant_id=tenant, profile=PROFILE, created_at=time.time(),
                            releases=[{"skill": r.skill, "version": r.version, "digest": r.digest} for r in releases]))
    documents = [r.document for r in releases]
    gateway = Gateway(database, GatewayConfig(resolve=settings.resolve), secret_key=settings.secret_key)
    context = TurnContext(tenant, turn_id, BoundReleases(documents))
    host = TurnHost(documents, fetch=lambda request: gateway.fetch(context, request))
    try:
        runner = make_runner(host, kind)
    except Exception as exc:  # the wasm component could not be built or loaded
        gateway.close()
        code = getattr(exc, "code", "guest-unavailable")
        raise BindError(str(code), f"the {kind} guest runner cannot start: {exc} (try --guest inprocess)") from None
    closing = [runner] if hasattr(runner, "close") else []
    return BoundTurn(turn_id, tenant, documents, runner, gateway, database, closing)


def run_mcp(refs: Sequence[str], tenant: str | None, http_port: int | None, guest: str | None) -> int:
    """The command: bind, announce on stderr, serve until the client leaves or Ctrl-C; the exit status."""
    import anyio

    from skillhouse.host.mcp_server import TurnTools, listening_socket, mcp_server, serve_http, serve_stdio

    try:
        settings = Settings.from_env()
    except ValueError as exc:
        print(f"error: invalid-settings: {exc}", file=sys.stderr)
        return 2
    try:
        turn = bind_turn(settings, refs, tenant, os.environ.get("SKILLHOUSE_TOKEN"), guest)
    except BindError as exc:
        print(f"error: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    # SIGTERM ends the server the way Ctrl-C does, so the turn's gateway and store are closed (uvicorn
    # re-raises the signal it caught once it has shut down, which lands here too)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    previous_interrupt = signal.getsignal(signal.SIGINT)
    try:
        tools = TurnTools(turn.runner, turn.releases)
        server = mcp_server(tools, "skillhouse", turn.instructions())
        names = ", ".join(f"{r['skill']}@{r['version']}" for r in turn.releases)
        if http_port is None:
            print(f"skillhouse mcp: turn {turn.turn_id} ({turn.tenant}): {len(tools.definitions)} tools of {names} on stdio",
                  file=sys.stderr, flush=True)
            # the stdio transport reads stdin in a worker thread that no signal unblocks, so an
            # orderly shutdown would wait for a line that never comes: on a signal, leave at once.
            # Nothing is lost: the gateway's state is in the store, and a request cut off mid-flight
            # leaves its idempotency key unresolved, never resent.
            signal.signal(signal.SIGTERM, _leave)
            signal.signal(signal.SIGINT, _leave)
            anyio.run(serve_stdio, server)
            return 0
        try:
            listening = listening_socket(http_port)
        except OSError as exc:
            print(f"error: port-unavailable: cannot listen on 127.0.0.1:{http_port}: {exc.strerror}", file=sys.stderr)
            return 2
        port = listening.getsockname()[1]
        print(f"skillhouse mcp: turn {turn.turn_id} ({turn.tenant}): {len(tools.definitions)} tools of {names} "
              f"at http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
        with listening:
            anyio.run(serve_http, server, listening)
        return 0
    except KeyboardInterrupt:
        return 0
    except BaseExceptionGroup as group:  # an interrupt that reached a task group comes out wrapped
        if group.split(KeyboardInterrupt)[1] is None:
            return 0
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_interrupt)
        turn.close()


def _interrupt(_signal: int, _frame: Any) -> None:
    raise KeyboardInterrupt


def _leave(_signal: int, _frame: Any) -> None:
    os._exit(0)
