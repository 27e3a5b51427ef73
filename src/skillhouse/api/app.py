"""The FastAPI application: ``create_app(settings)`` wires the database, errors and every router.

Routers live in ``api/routes_*.py``, each exposing ``router``; every route depends on
``deps.TenantDep`` so nothing is reachable without a token.
"""

from __future__ import annotations

from fastapi import FastAPI

from skillhouse.api import (
    console,
    routes_approvals,
    routes_credentials,
    routes_keys,
    routes_runtime,
    routes_skills,
    routes_tokens,
    routes_turns,
)
from skillhouse.api.errors import install_error_handlers
from skillhouse.settings import Settings
from skillhouse.store import Database, open_database

ROUTERS = (routes_skills, routes_tokens, routes_runtime, routes_turns, routes_approvals, routes_credentials, routes_keys,
           console)


def create_app(settings: Settings | None = None, database: Database | None = None) -> FastAPI:
    """The API for ``settings`` (from the environment when ``None``); migrations applied at start.

    ``database`` lets a caller (tests, benchmarks) hand over an already open database.
    """
    settings = settings or Settings.from_env()
    app = FastAPI(
        title="skillhouse",
        version="0.1.0",
        summary="Registry of skills and releases; the runtime contract for tool and skill specs.",
        description="Every route needs `Authorization: Bearer skh_...` and acts for that token's tenant.",
    )
    app.state.settings = settings
    app.state.database = database or open_database(settings.database_url)
    install_error_handlers(app)
    for module in ROUTERS:
        app.include_router(module.router)
    return app
