"""Probes for an orchestrator, open without a token: ``/healthz``, ``/readyz`` and ``/metrics``.

``/healthz`` answers 200 while the process serves at all. ``/readyz`` answers 200 when calls can run:
the database answers, its schema carries every migration this code knows, and the guest is built;
otherwise 503 naming each check that failed. ``/metrics`` is :mod:`skillhouse.api.metrics`. None of
them names a tenant or reads anything a tenant stored (counts only).
"""

from __future__ import annotations

import logging
from typing import Literal

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import BaseModel, Field

from skillhouse.api.metrics import Metrics
from skillhouse.host.guest_state import GuestState
from skillhouse.store import Database

router = APIRouter(tags=["probes"])
log = logging.getLogger("skillhouse.api")


class Check(BaseModel):
    ok: bool
    message: str | None = Field(default=None, description="What is wrong, when not ok.")


class Readiness(BaseModel):
    status: Literal["ready", "not-ready"]
    checks: dict[str, Check] = Field(description="`database`, `migrations`, `guest`.")
    failed: list[str] = Field(description="The checks that failed, in order.")


def _checks(database: Database, guest: GuestState) -> dict[str, Check]:
    checks: dict[str, Check] = {}
    try:
        current = database.schema_is_current()
        checks["database"] = Check(ok=True)
        checks["migrations"] = Check(ok=current, message=None if current else
                                     "the database's schema is not at this version's migrations; run skillhouse serve "
                                     "with this version once to migrate it")
    except Exception as exc:  # the driver's message may quote the URL: the type says enough here
        log.warning("readyz: the database does not answer (%s)", type(exc).__name__)
        checks["database"] = Check(ok=False, message=f"the database does not answer ({type(exc).__name__})")
        checks["migrations"] = Check(ok=False, message="not checked: the database does not answer")
    status = guest.status()
    checks["guest"] = Check(ok=status.state == "ready", message=None if status.state == "ready" else
                            status.message or f"the guest is {status.state} ({status.stage or 'starting'})")
    return checks


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """200 while the process answers (liveness)."""
    return {"status": "alive"}


@router.get("/readyz", responses={503: {"model": Readiness, "description": "A check failed; `failed` names it."}})
def readyz(request: Request, response: Response) -> Readiness:
    """200 when the database answers, migrations are current and the guest is built; else 503."""
    guest: GuestState = request.app.state.guest
    guest.start()
    checks = _checks(request.app.state.database, guest)
    failed = [name for name, check in checks.items() if not check.ok]
    if failed:
        response.status_code = 503
    return Readiness(status="not-ready" if failed else "ready", checks=checks, failed=failed)


@router.get("/metrics", response_class=Response, responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}})
def metrics(request: Request) -> Response:
    """The app's metrics in Prometheus's text format."""
    registry: Metrics = request.app.state.metrics
    return Response(registry.exposition(), media_type=CONTENT_TYPE_LATEST)
