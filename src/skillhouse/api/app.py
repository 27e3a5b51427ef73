"""The FastAPI application: ``create_app(settings)`` wires the database, errors and every router.

Routers live in ``api/routes_*.py``, each exposing ``router``; every route takes one of
``deps.RunDep``, ``deps.ApproveDep`` or ``deps.AdminDep``, so nothing is reachable without a token of
the scope it needs (the console's pages take its session equivalents). Every answer carries the
headers of :mod:`skillhouse.api.response_headers`. The app owns its guest
(:class:`~skillhouse.host.guest_state.GuestState`), whose build starts with the app.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.types import ASGIApp

from skillhouse.api import (
    console,
    routes_approvals,
    routes_connections,
    routes_credentials,
    routes_guest,
    routes_health,
    routes_keys,
    routes_limits,
    routes_runtime,
    routes_skills,
    routes_tokens,
    routes_turns,
)
from skillhouse.api.errors import install_error_handlers
from skillhouse.api.metrics import Metrics, Observed
from skillhouse.api.model_deps import close_model
from skillhouse.api.response_headers import EveryAnswer
from skillhouse.gateway.waiting import waiting
from skillhouse.host.guest_state import GuestState
from skillhouse.settings import Settings
from skillhouse.store import Database, open_database

ROUTERS = (routes_skills, routes_tokens, routes_runtime, routes_turns, routes_approvals, routes_credentials,
           routes_connections, routes_keys, routes_limits, routes_guest, routes_health, console)


class SkillhouseApp(FastAPI):
    """FastAPI with :class:`EveryAnswer` outermost, where even the server-error page passes through it,
    and :class:`~skillhouse.api.metrics.Observed` (span, metrics, log line) just inside it."""

    def build_middleware_stack(self) -> ASGIApp:
        return EveryAnswer(Observed(super().build_middleware_stack(), self.state.metrics))


def _gauges(app: FastAPI) -> list[tuple[str, str, float]]:
    counts = waiting(app.state.database)
    return [
        ("skillhouse_approvals_pending", "Held requests waiting for a person's decision, over every tenant.",
         counts.approvals_pending),
        ("skillhouse_idempotency_keys_unresolved", "Keys whose request's outcome is unknown until someone clears them.",
         counts.keys_unresolved),
        ("skillhouse_guest_pool_idle", "Warm guests in this process waiting for a call.", app.state.guest.pool.idle_total()),
    ]


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    guest: GuestState = app.state.guest
    guest.start()  # in the background: the server answers at once, calls wait for the guest
    try:
        yield
    finally:
        guest.close()
        close_model(app.state)


def create_app(settings: Settings | None = None, database: Database | None = None,
               guest: GuestState | None = None) -> FastAPI:
    """The API for ``settings`` (from the environment when ``None``); migrations applied at start.

    ``database`` lets a caller (tests, benchmarks) hand over an already open database; ``guest`` a
    guest other than the one ``settings`` name (raises :class:`~skillhouse.host.UnknownRunner` for
    an unknown ``settings.guest``).
    """
    settings = settings or Settings.from_env()
    guest = guest or GuestState(settings.guest, settings.guest_cache_dir())
    app = SkillhouseApp(
        lifespan=_lifespan,
        title="skillhouse",
        version="0.1.0",
        summary="Registry of skills and releases; the runtime contract for tool and skill specs.",
        description="Every route needs `Authorization: Bearer skh_...` and acts for that token's tenant; "
                    "its scope (`run`, `approve`, `admin`) decides which routes it may call (403 `insufficient-scope`).",
    )
    app.state.settings = settings
    app.state.guest = guest
    app.state.database = database or open_database(settings.database_url)
    app.state.metrics = Metrics(lambda: _gauges(app))
    install_error_handlers(app)
    for module in ROUTERS:
        app.include_router(module.router)
    return app
