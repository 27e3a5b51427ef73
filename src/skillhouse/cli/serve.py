"""``skillhouse serve``: check the configuration, say what is where, then run the API.

Before anything listens, each setting a bad environment can spoil is checked once: the settings parse
(``SKILLHOUSE_RESOLVE``, the durations), the database is a kind skillhouse knows, is reachable and
migrates, the guest kind is known, and the secret key and upstream CA (when set) are usable. A problem
is one line on stderr naming the variable and what to do, and exit status 2; never a traceback.

Then serve prints where its data is, the database, the console's URL, the guest's state, what is
disabled without a secret key and the model the agent loop uses (none unless ``SKILLHOUSE_MODEL``
names one), and starts the guest's build in the background: its progress goes to the same log, and
calls answer ``guest-building`` until it is ready.
"""

from __future__ import annotations

import logging
import sys
from typing import NoReturn

import typer
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

from skillhouse.errors import Unavailable
from skillhouse.gateway import Gateway, GatewayError, make_gateway
from skillhouse.host import UnknownRunner
from skillhouse.host.guest_state import GuestState, GuestStatus
from skillhouse.settings import Settings, sqlite_url
from skillhouse.store import Database, open_database
from skillhouse.store.database import SchemaAhead, parse_database_url

NEW_KEY = "python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'"


class BadConfiguration(Unavailable):
    """A setting that keeps serve from starting (``bad-configuration``, or the code of the refusal it passes on:
    ``secret-key-invalid``...); the message names the variable and what to do."""

    code = "bad-configuration"


def _first_line(exc: BaseException) -> str:
    cause = getattr(exc, "orig", None) or exc  # the driver's own words, not SQLAlchemy's wrapper
    lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
    return lines[0] if lines else type(cause).__name__


def open_store(settings: Settings) -> Database:
    """The migrated database of ``settings``, or :class:`BadConfiguration` naming the variable at fault."""
    in_data_dir = settings.database_url == sqlite_url(settings.data_dir)
    variable = "SKILLHOUSE_DATA_DIR" if in_data_dir else "SKILLHOUSE_DATABASE_URL"
    try:
        url = parse_database_url(settings.database_url)
    except ArgumentError:
        raise BadConfiguration(f"{variable} is not a database URL; use sqlite:///PATH or postgresql://USER@HOST/DB") from None
    shown = make_url(settings.database_url).render_as_string(hide_password=True)
    try:
        return open_database(settings.database_url)
    except SchemaAhead as exc:
        raise BadConfiguration(f"{variable}: {shown}: {exc.message}", code=exc.code) from None
    except (ValueError, NoSuchModuleError):
        raise BadConfiguration(f"{variable}: {shown} is not a database skillhouse knows; "
                               "use sqlite:///PATH or postgresql://USER@HOST/DB") from None
    except (DBAPIError, OSError) as exc:
        if url.get_backend_name() == "sqlite":
            advice = "check that its directory can be created and written"
        else:
            advice = "check that the server is up, the database exists and the user may use it"
        raise BadConfiguration(f"{variable}: cannot open {shown} ({_first_line(exc)}); {advice}") from None


def check_gateway(settings: Settings, database: Database) -> Gateway:
    """The deployment's gateway, built now so a malformed secret key or CA file stops start-up."""
    try:
        return make_gateway(settings, database)
    except GatewayError as exc:
        advice = f"make one with {NEW_KEY}" if exc.code == "secret-key-invalid" else "fix it"
        raise BadConfiguration(f"{exc.message}; {advice} or unset it", code=exc.code) from None


def _console_url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/console"


def _guest_line(status: GuestStatus, settings: Settings) -> str:
    if status.kind == "inprocess":
        return "in process (SKILLHOUSE_GUEST=inprocess: no sandbox)"
    where = f"cache {settings.guest_cache_dir()}"
    if status.state == "ready":
        return f"WebAssembly component, ready ({where})"
    if status.state == "failed":
        return f"WebAssembly component FAILED to build: {status.message}; calls answer 503 guest-unavailable"
    return (f"WebAssembly component, building in the background ({status.stage or 'reading the cache'}; {where}); "
            "calls answer 503 guest-building until it is ready")


def banner(settings: Settings, database: Database, guest: GuestStatus, host: str, port: int) -> list[str]:
    """What serve says at start: where things are and what works."""
    shown = make_url(database.url).render_as_string(hide_password=True)
    if settings.secret_key:
        credentials = "enabled (SKILLHOUSE_SECRET_KEY is set)"
    else:
        credentials = ("DISABLED: SKILLHOUSE_SECRET_KEY is not set, so storing or injecting a credential answers "
                       f"503 secret-key-missing (calls without credentials work); set it to the output of {NEW_KEY}")
    model = settings.model or ("none: SKILLHOUSE_MODEL is not set, so POST /v1/turns/{id}/run answers "
                               "503 model-not-configured (tool calls work); set it to openai:MODEL or anthropic:MODEL")
    return [
        f"skillhouse serve on http://{host}:{port}",
        f"  data:        {settings.data_dir}",
        f"  database:    {shown} ({database.dialect})",
        f"  console:     {_console_url(host, port)} (sign in with a token: skillhouse tokens create --tenant NAME)",
        f"  guest:       {_guest_line(guest, settings)}",
        f"  credentials: {credentials}",
        f"  model:       {model}",
    ]


def _log_to_stderr(settings: Settings) -> dict[str, object] | None:
    """Send skillhouse's log lines to stderr; uvicorn's logging configuration (``None``: ours, JSON lines)."""
    # imported here: uvicorn and the app's stack load only when a server starts
    from uvicorn.config import LOGGING_CONFIG
    from uvicorn.logging import DefaultFormatter

    from skillhouse.telemetry import JsonLines

    handler = logging.StreamHandler(sys.stderr)
    json_lines = settings.log_format == "json"
    handler.setFormatter(JsonLines() if json_lines else DefaultFormatter("%(levelprefix)s %(message)s", use_colors=False))
    logger = logging.getLogger("skillhouse")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    if not json_lines:
        # uvicorn's access log says the same for people; the JSON line per request is for collectors
        logging.getLogger("skillhouse.requests").setLevel(logging.WARNING)
        return LOGGING_CONFIG
    for name in ("uvicorn", "uvicorn.error"):
        server_logger = logging.getLogger(name)
        server_logger.handlers[:] = [handler]
        server_logger.setLevel(logging.INFO)
        server_logger.propagate = False
    logging.getLogger("uvicorn.access").disabled = True
    return None


def start_telemetry(settings: Settings) -> None:
    """With ``SKILLHOUSE_TELEMETRY=otlp``, record spans and metrics and export them as the ``OTEL_*`` variables say."""
    if settings.telemetry == "otlp":
        from skillhouse.telemetry import (
            otlp_meter_provider,
            otlp_provider,
            use_meter_provider,
            use_tracer_provider,
        )

        use_tracer_provider(otlp_provider(), propagate=settings.trace_upstreams)
        use_meter_provider(otlp_meter_provider())


def _refuse(message: str, command: str = "serve") -> NoReturn:
    print(f"skillhouse {command}: {message}", file=sys.stderr)
    raise typer.Exit(2)


def configured_store(command: str) -> Database:
    """The database the environment names, for a command that needs nothing else; a bad setting exits 2 with one line."""
    try:
        return open_store(Settings.from_env())
    except (ValueError, BadConfiguration) as exc:
        _refuse(str(exc), command)


def serve(host: str, port: int) -> None:
    """``skillhouse serve``'s work (its options are declared in :mod:`skillhouse.cli.registry_commands`)."""
    # imported here: uvicorn and the app's stack load only when a server starts
    import uvicorn

    from skillhouse.api import create_app

    try:
        settings = Settings.from_env()
        guest = GuestState(settings.guest, settings.guest_cache_dir())
        database = open_store(settings)
        gateway = check_gateway(settings, database)
    except (ValueError, UnknownRunner, BadConfiguration) as exc:
        _refuse(str(exc))
    log_config = _log_to_stderr(settings)
    start_telemetry(settings)
    app = create_app(settings, database, guest)
    app.state.gateway = gateway
    for line in banner(settings, database, guest.settle(), host, port):
        if settings.log_format == "json":
            logging.getLogger("skillhouse.serve").info(line.strip())
        else:
            print(line, file=sys.stderr, flush=True)
    # on SIGTERM uvicorn stops accepting, lets requests in flight finish for shutdown_seconds, then
    # cancels the rest; the API logs each one it cancelled (api/metrics.py)
    uvicorn.run(app, host=host, port=port, log_level="info", log_config=log_config,
                access_log=settings.log_format != "json", timeout_graceful_shutdown=int(max(1, settings.shutdown_seconds)))
