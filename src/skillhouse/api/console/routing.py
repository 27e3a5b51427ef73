"""The console's route class: refusals become HTML pages, a missing session a redirect to sign-in.

The API's own error handlers answer JSON; console pages answer people, so every console route runs
through :class:`ConsoleRoute`, which turns what a page (or one of its dependencies) raises into the
page a browser should get: ``303`` to the sign-in page when there is no session, and for every other
skillhouse error an error page with the status the API's one mapping gives it
(:func:`skillhouse.api.errors.status_for`). Another tenant's row is "not found" (404) like a row that does not exist. Anything else a page raises is the console's
own failure: a 500 page for the person (no traceback, the type only in the log).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import quote

from fastapi import HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse
from fastapi.routing import APIRoute

from skillhouse.api.console.pages import error_page
from skillhouse.api.console.sessions import SignInRequired, read_session
from skillhouse.api.errors import status_for
from skillhouse.errors import SkillhouseError

SIGN_IN_PATH = "/console/sign-in"
log = logging.getLogger("skillhouse.console")


def safe_next(target: str | None) -> str:
    """Where to go after signing in: a console path only, never another site."""
    if target and target.startswith("/console") and not target.startswith("//") and "\\" not in target:
        return target
    return "/console/approvals"


def sign_in_redirect(request: Request) -> RedirectResponse:
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    # a form's target is a POST-only URL; come back to the page that showed it instead
    back = here if request.method == "GET" else "/console/approvals"
    return RedirectResponse(f"{SIGN_IN_PATH}?next={quote(back, safe='')}", status_code=303)


class ConsoleRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def run(request: Request) -> Response:
            try:
                return await handler(request)
            except SignInRequired:
                return sign_in_redirect(request)
            except SkillhouseError as exc:
                return error_page(request, read_session(request), status_for(exc), exc.code, exc.message)
            except RequestValidationError as exc:
                where = "; ".join(f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg', '')}" for e in exc.errors())
                return error_page(request, read_session(request), 422, "invalid-request", where or "the request is not valid")
            except HTTPException as exc:
                return error_page(request, read_session(request), exc.status_code, "http-error", str(exc.detail))
            except Exception as exc:
                # the type only: a message may carry SQL values
                log.error("console page %s failed: %s", request.url.path, type(exc).__name__)
                return error_page(request, None, 500, "console-failure",
                                  "This page failed on the server; nothing was changed by showing it. Try again, "
                                  "and if it keeps failing the server's log names the fault.")

        return run
