"""Signing in and out of the console (sign-out ends the session on the server), its home (also the site's:
``/`` leads here), its stylesheet, and the "not found" page of every other ``/console`` path
(:data:`not_found_router`, included last)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse

from skillhouse.api.console.pages import STYLESHEET, page
from skillhouse.api.console.routing import ConsoleRoute, safe_next
from skillhouse.api.console.sessions import (
    ConsoleRefusal,
    FieldsDep,
    FormDep,
    RunSessionDep,
    end_session,
    new_sign_in_token,
    read_session,
    remember_sign_in_token,
    sign_in_token_matches,
    start_session,
)
from skillhouse.registry.tokens import TokenRejected, authenticate
from skillhouse.settings import Settings
from skillhouse.store import Database

router = APIRouter(route_class=ConsoleRoute)


def _sign_in_form(request: Request, next_path: str, status: int = 200, problem: str | None = None) -> HTMLResponse:
    settings: Settings = request.app.state.settings
    csrf = new_sign_in_token()
    response = page(request, "sign_in.html", None, status=status, next=next_path, problem=problem, csrf=csrf)
    remember_sign_in_token(request, response, settings, csrf)
    return response


@router.get("/")
def site_home() -> RedirectResponse:
    # the API has no page of its own; a person opening the server's address wants the console
    return RedirectResponse("/console", status_code=303)


@router.get("/console")
def console_home() -> RedirectResponse:
    return RedirectResponse("/console/approvals", status_code=303)


@router.get("/console/static/console.css")
def stylesheet() -> Response:
    return Response(STYLESHEET.read_text(encoding="utf-8"), media_type="text/css",
                    headers={"Cache-Control": "public, max-age=3600"})


@router.get("/console/sign-in")
def sign_in_page(request: Request, next: str | None = None) -> Response:
    if read_session(request) is not None:
        return RedirectResponse(safe_next(next), status_code=303)
    return _sign_in_form(request, safe_next(next))


@router.post("/console/sign-in")
def sign_in(request: Request, form: FieldsDep) -> Response:
    """Check the form's double-submit token, then the API token; the token is never shown back."""
    next_path = safe_next(form.get("next"))
    settings: Settings = request.app.state.settings
    if not sign_in_token_matches(request, settings, form.get("csrf", "")):
        return _sign_in_form(request, next_path, 403, "The sign-in form had expired or was not this site's. Try again.")
    database: Database = request.app.state.database
    try:
        with database.sessions() as session:
            tenant = authenticate(session, form.get("token", "").strip())
    except TokenRejected as exc:
        return _sign_in_form(request, next_path, 401, f"That token was refused ({exc.code}): {exc.message}.")
    response = RedirectResponse(next_path, status_code=303)
    start_session(request, response, settings, tenant.token_id)
    return response


@router.post("/console/sign-out")
def sign_out(request: Request, session: RunSessionDep, form: FormDep) -> Response:
    """End the session on the server, so a copy of the cookie signs no one in any more."""
    response = RedirectResponse("/console/sign-in", status_code=303)
    end_session(request, response)
    return response


not_found_router = APIRouter(route_class=ConsoleRoute)


@not_found_router.api_route("/console/{_rest:path}", methods=["GET", "HEAD", "POST"])
def not_found(_rest: str) -> Response:
    """People who mistype a console address get the console's page, not the API's JSON."""
    raise ConsoleRefusal("There is no console page at this address.", code="not-found")
