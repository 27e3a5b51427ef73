"""Error bodies and the mapping from registry errors (and bad requests) to HTTP status codes.

Every error answer has one shape, ``{"error": {"code", "message", "problems": [...]}}``, so a client
can always find what went wrong and where. Request validation failures become 422 with every
problem's path; nothing that a client sends can produce a 500.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from skillhouse.registry.errors import Conflict, Invalid, NotFound, RegistryError


class Problem(BaseModel):
    """One thing wrong with a request: a field (``path``) or a line of a skill package file."""

    code: str = Field(description="Stable code to match on.")
    message: str = Field(description="What is wrong and what to do about it.")
    path: str | None = Field(default=None, description="Dotted path of the request field (`tool_spec.version`).")
    file: str | None = Field(default=None, description="Skill package file the problem is in.")
    line: int | None = Field(default=None, description="1-based line in `file`.")


class ErrorDetail(BaseModel):
    code: str = Field(description="Stable error code (`not-found`, `release-conflict`, `invalid-request`, ...).")
    message: str
    problems: list[Problem] = Field(default_factory=list, description="Every problem found, all at once.")


class ErrorBody(BaseModel):
    """The body of every error response."""

    error: ErrorDetail


class ApiError(Exception):
    """An error only the HTTP layer knows (authentication, not implemented); carries its status."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers


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
    """Map registry errors, API errors and validation failures to the one error shape."""
    statuses: dict[type[RegistryError], int] = {NotFound: 404, Conflict: 409, Invalid: 422}

    @app.exception_handler(RegistryError)
    async def registry_error(_request: Request, exc: RegistryError) -> JSONResponse:
        return error_response(statuses.get(type(exc), 422), exc.code, exc.message, exc.problems)

    @app.exception_handler(ApiError)
    async def api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = _validation_problems(exc)
        return error_response(422, "invalid-request", f"the request has {len(problems)} problem(s); see problems", problems)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not-found", 405: "method-not-allowed"}.get(exc.status_code, "http-error")
        return error_response(exc.status_code, code, str(exc.detail), headers=getattr(exc, "headers", None))
