"""What the gateway's routes share: the app's one gateway, and its refusals as API errors.

The gateway is built once per app from the settings (:func:`skillhouse.gateway.make_gateway`) on
first use, so an app that never runs a call never needs ``SKILLHOUSE_SECRET_KEY``. Its errors map to
the API's one error shape: a field problem is 422 with its path, an unknown approval or binding 404,
a decision that came too late 409, a deployment without a usable secret key 503.
"""

from __future__ import annotations

import threading
from typing import Annotated

from fastapi import Depends, Request

from skillhouse.api.errors import ApiError, ErrorBody, error_responses
from skillhouse.gateway import Gateway, GatewayError, make_gateway
from skillhouse.json_types import JsonObject
from skillhouse.registry.errors import Conflict, Invalid, NotFound, RegistryError, problem

_BUILDING = threading.Lock()
_UNAVAILABLE = {"secret-key-missing", "secret-key-invalid", "credential-undecryptable", "guest-unavailable",
                "upstream-ca-invalid"}
_NOT_FOUND = {"approval-not-found", "credential-not-found"}
_CONFLICT = {"approval-not-pending", "approval-expired"}


def get_gateway(request: Request) -> Gateway:
    """The app's gateway, built from its settings on first use."""
    state = request.app.state
    gateway: Gateway | None = getattr(state, "gateway", None)
    if gateway is None:
        with _BUILDING:
            gateway = getattr(state, "gateway", None)
            if gateway is None:
                try:
                    gateway = make_gateway(state.settings, state.database)
                except GatewayError as exc:
                    raise api_error(exc) from None
                state.gateway = gateway
    return gateway


GatewayDep = Annotated[Gateway, Depends(get_gateway)]


def api_error(exc: GatewayError) -> RegistryError | ApiError:
    """The API error for a gateway refusal (raise it)."""
    if exc.code in _UNAVAILABLE:
        return ApiError(503, exc.code, exc.message)
    if exc.code in _NOT_FOUND:
        return NotFound(exc.code, exc.message)
    if exc.code in _CONFLICT:
        return Conflict(exc.code, exc.message)
    field = exc.details.get("field")
    problems = [problem(str(field), exc.code, exc.message)] if field else []
    return Invalid(exc.code, exc.message, problems)


def gateway_responses(*statuses: int) -> dict[int | str, JsonObject]:
    """OpenAPI responses for a gateway route: the given error statuses, 401, 422 and 503."""
    return {**error_responses(*statuses),
            503: {"model": ErrorBody, "description": "The deployment cannot do this now: the guest is still being built "
                  "(`guest-building`, with `Retry-After`), or there is no usable secret key or guest."}}
