"""The one HTTP mapping: every :class:`~skillhouse.errors.SkillhouseError` to a status and the one error body.

Every error answer has one shape, ``{"error": {"code", "message", "problems": [...]}}``, so a client
can always find what went wrong and where. A route never translates an error itself: what the
registry, the gateway, the host or a dependency raises reaches :func:`install_error_handlers`, which
answers the status of its family (:data:`FAMILY_STATUS`) unless its code says otherwise
(:data:`CODE_STATUS`). Request validation failures become 422 with every problem's path; nothing
that a client sends can produce a 500. The console answers the same statuses as HTML pages
(:func:`status_for`).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from skillhouse.errors import (
    CallerError,
    ConflictError,
    ExternalFailure,
    Forbidden,
    NotFoundError,
    RunFailure,
    Signal,
    SkillhouseError,
    Unauthenticated,
    Unavailable,
)
from skillhouse.gateway.errors import GatewayError, RateLimited
from skillhouse.host.guest_state import GuestNotReady
from skillhouse.registry.errors import RegistryError, problem
from skillhouse.registry.tokens import InsufficientScope
from skillhouse.wire.errors import ErrorBody, ErrorDetail, Problem

FAMILY_STATUS: dict[type[SkillhouseError], int] = {
    Unauthenticated: 401,
    Forbidden: 403,
    NotFoundError: 404,
    ConflictError: 409,
    CallerError: 422,
    ExternalFailure: 502,
    Unavailable: 503,
    RunFailure: 500,
    Signal: 503,  # "not yet": come back later (guest-building, with Retry-After)
    SkillhouseError: 500,  # a module base raised as itself: nothing should, so it is the server's fault
}
"""The status of each family; the nearest family in an error's class hierarchy decides."""

CODE_STATUS: dict[str, int] = {
    # one class, several statuses: an approval that does not exist, or one decided or expired
    "approval-not-found": 404,
    "approval-not-pending": 409,
    "approval-expired": 409,
    # the tenant's own share of upstream connections is taken: this deployment's limit, not the upstream's failure
    "tenant-busy": 503,
    # a rate limit of the tenant's, or an upstream's own Retry-After for the host: come back after Retry-After
    "rate-limited": 429,
    # the HTTP layer's own and the console's
    "not-found": 404,
    "capability-not-declared": 501,
    "csrf-refused": 403,
    "form-too-large": 413,
    "unknown-profile": 404,
    "tool-not-found": 404,
    "unknown-view": 404,
    # signals that are part of an answer rather than an error answer; listed so that every code has a status
    "approval-required": 202,
    "connection-required": 202,
    "sign-in-required": 401,
}
"""Codes whose status is not their family's."""


def status_for(error: SkillhouseError) -> int:
    """The HTTP status ``error`` is answered with: its code's (:data:`CODE_STATUS`), else its family's."""
    return status_of(type(error), error.code)


def status_of(kind: type[SkillhouseError], code: str) -> int:
    """The status of an error of class ``kind`` carrying ``code`` (:func:`status_for` without an instance)."""
    if code in CODE_STATUS:
        return CODE_STATUS[code]
    return next(FAMILY_STATUS[base] for base in kind.__mro__ if base in FAMILY_STATUS)


def _headers_for(error: SkillhouseError) -> dict[str, str] | None:
    if isinstance(error, InsufficientScope):
        # RFC 6750's challenge for a token that is valid but not enough
        return {"WWW-Authenticate": f'Bearer error="insufficient_scope", scope="{error.needed}"'}
    if isinstance(error, Unauthenticated):
        return {"WWW-Authenticate": "Bearer"}
    if isinstance(error, GuestNotReady) and error.retry_after is not None:
        return {"Retry-After": str(error.retry_after)}
    if isinstance(error, RateLimited):
        return {"Retry-After": str(error.retry_after)}
    return None


def _problems_of(error: SkillhouseError) -> list[dict[str, Any]]:
    if isinstance(error, RegistryError):
        return error.problems
    field = error.details.get("field") if isinstance(error, GatewayError) else None
    return [problem(str(field), error.code, error.message)] if field else []


class ApiError(CallerError):
    """An error only the HTTP layer knows (``capability-not-declared``, a body that is valid JSON but asks
    for nothing); its status comes from :data:`CODE_STATUS` or its family like every other error's."""


def error_response(status: int, code: str, message: str, problems: list[dict[str, Any]] | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    body = ErrorBody(error=ErrorDetail(code=code, message=message, problems=[Problem(**p) for p in problems or []]))
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status, headers=headers)


def _responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    meanings = {
        400: "The body could not be read.",
        401: "Bearer token missing, malformed, unknown or revoked.",
        403: "The token's scope does not allow this (`insufficient-scope`).",
        404: "No such resource for this tenant.",
        409: "Conflicts with stored state (published content, a state transition).",
        413: "Upload too large.",
        422: "Invalid request; every problem with its path.",
        501: "Not implemented yet.",
    }
    return {status: {"model": ErrorBody, "description": meanings[status]} for status in statuses}


STANDARD_ERRORS = _responses(401, 403, 422)
"""Every authenticated route can answer these."""


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for the given error statuses plus 401, 403 and 422."""
    return _responses(*sorted({401, 403, 422, *statuses}))


def _location(loc: tuple[int | str, ...]) -> str:
    # FastAPI prefixes where the value came from (body, query, path, header)
    parts = [str(p) for p in loc]
    return ".".join(parts[1:] if parts and parts[0] in ("body", "query", "path", "header") and len(parts) > 1 else parts)


def _validation_problems(exc: RequestValidationError) -> list[dict[str, Any]]:
    problems = []
    for error in exc.errors():
        problems.append({"path": _location(tuple(error.get("loc", ()))), "code": str(error.get("type", "invalid")),
                         "message": str(error.get("msg", "invalid value"))})
    return problems


def install_error_handlers(app: FastAPI) -> None:
    """Map every skillhouse error and validation failure to the one error shape, in this one place."""

    @app.exception_handler(SkillhouseError)
    async def skillhouse_error(_request: Request, exc: SkillhouseError) -> JSONResponse:
        return error_response(status_for(exc), exc.code, exc.message, _problems_of(exc), _headers_for(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = _validation_problems(exc)
        return error_response(422, "invalid-request", f"the request has {len(problems)} problem(s); see problems", problems)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not-found", 405: "method-not-allowed"}.get(exc.status_code, "http-error")
        return error_response(exc.status_code, code, str(exc.detail), headers=getattr(exc, "headers", None))
