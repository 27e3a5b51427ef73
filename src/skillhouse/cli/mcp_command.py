"""``skillhouse mcp``: bind a turn to releases in the local store and serve its tools over MCP.

The turn takes the path an API turn takes: :func:`skillhouse.registry.turns.bind_turn` reads the
releases the tenant sees and records the turn (profile ``mcp``) so approvals and the audit log name
it; :func:`skillhouse.gateway.make_gateway` builds the gateway from the settings; and every call runs
through :func:`skillhouse.host.calls.run_call` (see :mod:`skillhouse.mcp.server`). Every problem
before serving is a :class:`~skillhouse.errors.SkillhouseError` with a stable code (a refusal of the
turn is a :class:`BindError`), which the command prints as ``error: CODE: message`` and exits 2 on:
never a traceback.
"""

from __future__ import annotations

import os
import re
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillhouse.errors import CallerError, SkillhouseError, Unavailable
from skillhouse.gateway import Gateway, make_gateway
from skillhouse.host.calls import GuestUnavailable, run_call
from skillhouse.host.guest_state import Load, Progress
from skillhouse.host.runner import RUNNER_KINDS
from skillhouse.json_types import ProblemDocument
from skillhouse.registry.errors import RegistryError
from skillhouse.registry.tokens import TokenRejected, authenticate
from skillhouse.registry.turns import Turn, bind_turn
from skillhouse.settings import Settings
from skillhouse.store import Database, open_database

if TYPE_CHECKING:
    from skillhouse.host.wasm_runner import LoadedComponent

SKILL_REF = re.compile(r"^(?P<skill>[^@\s]+)@(?P<version>[^@\s]+)$")
PROFILE = "mcp"
_PROBLEM_INDEX = re.compile(r"^skills\.(?P<index>\d+)")


class BindError(CallerError):
    """The turn cannot be bound as asked: ``code`` says why (``invalid-skill``, ``no-tenant``, ``invalid-guest``, or
    the code of the registry's or the token's refusal it passes on: ``invalid-turn``, ``malformed-token``...).

    ``problems`` holds one line per problem when there are several things wrong at once.
    """

    code = "invalid-turn"

    def __init__(self, code: str, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message, code=code)
        self.problems = list(problems)


class StoreUnavailable(Unavailable):
    """The store cannot be opened (``database-unavailable``): a bad URL, an unreachable server, a failed migration."""

    code = "database-unavailable"


@dataclass
class BoundTurn:
    """A turn bound for MCP: the recorded turn, the gateway its calls go through, the guest runner kind."""

    turn: Turn
    gateway: Gateway
    database: Database
    guest: str

    @property
    def turn_id(self) -> str:
        return self.turn.id

    @property
    def tenant(self) -> str:
        return self.turn.tenant

    def instructions(self) -> str:
        """What the client's model is told: the skills' descriptions and where approvals happen."""
        releases = self.turn.releases
        skills = "\n".join(f"- {r['skill']} {r['version']}: {r.get('description', '')}" for r in releases)
        return (
            f"Tools of skillhouse turn {self.turn_id} (tenant {self.tenant}):\n{skills}\n"
            "Every call is checked and sent through the skillhouse gateway. A call held for approval "
            "answers with an approval id; after a person approves it (POST /v1/approvals/{id}/approve, "
            "or the console), repeat the same call once. "
            "Read a skill's instructions and documents with read_object (e.g. 'skill/<name>')."
        )

    def close(self) -> None:
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


def open_turn(settings: Settings, refs: Sequence[str], tenant: str | None = None,
              token: str | None = None, guest: str | None = None, *, load: Load | None = None,
              subject: str | None = None) -> BoundTurn:
    """Bind the turn as the API does, build the settings' gateway, check the guest runner starts.

    A wasm guest is made ready by ``load`` (the agent component from the cache, built first when
    missing), which tells each slow step to the progress lines on stderr.
    """
    wanted = parse_skill_refs(refs)
    kind = guest or settings.guest
    if kind not in RUNNER_KINDS:
        raise BindError("invalid-guest", f"guest runner {kind!r} is not one of {', '.join(RUNNER_KINDS)}")
    try:
        database = open_database(settings.database_url)
    except Exception as exc:  # a bad URL, an unreachable server or a failed migration: all said the same way
        raise StoreUnavailable(f"cannot open the store at {settings.database_url}: {exc}") from None
    try:
        return _open(database, settings, wanted, choose_tenant(database, tenant, token), kind, load, subject)
    except BaseException:
        database.dispose()
        raise


def _open(database: Database, settings: Settings, wanted: list[tuple[str, str]], tenant: str, kind: str,
          load: Load | None, subject: str | None = None) -> BoundTurn:
    gateway = make_gateway(settings, database)  # GatewayUnavailable: said by its code like the rest
    try:
        with database.transaction() as session:
            turn = bind_turn(session, tenant, wanted, PROFILE, subject)
    except RegistryError as exc:
        gateway.close()
        refs = [f"{skill}@{version}" for skill, version in wanted]
        raise BindError(exc.code, f"{exc.message} (tenant {tenant})", [_problem_line(p, refs) for p in exc.problems]) from None
    bound = BoundTurn(turn, gateway, database, kind)
    # fail before serving rather than at the first call when the guest cannot start (the wasm
    # component cannot be built or loaded): one call that sends nothing, on the path every call takes
    skill = turn.releases[0]["skill"]
    try:
        if kind == "wasm":
            _prepare_wasm_guest(load or _load_agent)
        run_call(gateway, turn.tenant, turn.id, turn.releases, "read_object", {"path": f"skill/{skill}"}, guest=kind)
    except GuestUnavailable:
        gateway.close()
        raise
    return bound


def _prepare_wasm_guest(load: Load) -> None:
    """Load (or first build, for minutes) the wasm guest before serving, saying so on stderr, not stdout."""
    # imported here so wasmtime loads only when the wasm guest serves
    from skillhouse.host.wasm_build import GuestBuildError

    def progress(step: str) -> None:
        print(f"skillhouse mcp: {step}", file=sys.stderr, flush=True)

    try:
        load(progress)
    except GuestBuildError as exc:
        raise GuestUnavailable("wasm", exc.message) from None


def _load_agent(progress: Progress) -> LoadedComponent:
    """The agent component from the default cache, built and compiled first when it is not there."""
    from skillhouse.host.wasm_runner import loaded_component

    return loaded_component(progress=progress)


def _problem_line(problem: ProblemDocument, refs: Sequence[str]) -> str:
    """A problem of :func:`bind_turn` said as the command line said it: ``skills.1`` is the second --skill."""
    path = str(problem.get("path", ""))
    match = _PROBLEM_INDEX.match(path)
    where = f"--skill {refs[int(match['index'])]}" if match and int(match["index"]) < len(refs) else path or "--skill"
    return f"{where}: {problem.get('code', 'invalid')}: {problem.get('message', '')}"


def run_mcp(refs: Sequence[str], tenant: str | None, http_port: int | None, guest: str | None,
            subject: str | None = None) -> int:
    """The command: bind, announce on stderr, serve until the client leaves or Ctrl-C; the exit status."""
    # imported here: start-up time, the MCP SDK loads only when a turn is bound and served
    import anyio

    from skillhouse.mcp.server import TurnTools, listening_socket, mcp_server, serve_http, serve_stdio

    try:
        settings = Settings.from_env()
    except ValueError as exc:
        print(f"error: invalid-settings: {exc}", file=sys.stderr)
        return 2
    from skillhouse.cli.serve import start_telemetry

    start_telemetry(settings)  # SKILLHOUSE_TELEMETRY=otlp: a span per MCP request, exported over OTLP
    try:
        turn = open_turn(settings, refs, tenant, settings.token, guest, subject=subject)
    except SkillhouseError as exc:
        hint = " (try --guest inprocess)" if isinstance(exc, GuestUnavailable) else ""
        print(f"error: {exc.code}: {exc.message}{hint}", file=sys.stderr)
        for line in exc.problems if isinstance(exc, BindError) else ():
            print(f"  {line}", file=sys.stderr)
        return 2
    # SIGTERM ends the server the way Ctrl-C does, so the turn's gateway and store are closed (uvicorn
    # re-raises the signal it caught once it has shut down, which lands here too)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    previous_interrupt = signal.getsignal(signal.SIGINT)
    try:
        tools = TurnTools(turn.gateway, turn.turn, turn.guest)
        server = mcp_server(tools, "skillhouse", turn.instructions())
        names = ", ".join(f"{r['skill']}@{r['version']}" for r in turn.turn.releases)
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
        # A signal before uvicorn has put in its own handlers (it starts after the banner, which a
        # supervisor may answer at once) must still stop it: raised as KeyboardInterrupt at that point,
        # inside the event loop's start, it could be lost and the server serve on. So in this mode a
        # signal only asks the server to exit, as uvicorn's own handlers do once it runs.
        stopping = _Stopping()
        signal.signal(signal.SIGTERM, stopping.ask)
        signal.signal(signal.SIGINT, stopping.ask)
        with listening:
            anyio.run(serve_http, server, listening, None, stopping.attach)
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


class _Stopping:
    """A signal to the HTTP server, asked for before or after uvicorn exists (its ``should_exit``)."""

    def __init__(self) -> None:
        self.asked = False
        self.server: Any = None

    def ask(self, _signal: int, _frame: Any) -> None:
        self.asked = True
        if self.server is not None:
            self.server.should_exit = True

    def attach(self, server: Any) -> None:
        self.server = server
        if self.asked:
            server.should_exit = True


def _leave(_signal: int, _frame: Any) -> None:
    os._exit(0)
