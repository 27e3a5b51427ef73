"""What the gateway's routes share: the app's one gateway, and the error statuses their OpenAPI lists.

The gateway is built once per app from the settings (:func:`skillhouse.gateway.make_gateway`) on
first use, so an app that never runs a call never needs ``SKILLHOUSE_SECRET_KEY``. Its errors reach
the API's one mapping (``api/errors.py``) as they are: a field problem is 422 with its path, an
unknown approval or binding 404, a decision that came too late 409, a deployment without a usable
secret key 503.
"""

from __future__ import annotations

import threading
from typing import Annotated

from fastapi import Depends, Request

from skillhouse.api.errors import error_responses
from skillhouse.gateway import Gateway, make_gateway
from skillhouse.json_types import JsonObject
from skillhouse.wire.errors import ErrorBody

_BUILDING = threading.Lock()


def get_gateway(request: Request) -> Gateway:
    """The app's gateway, built from its settings on first use."""
    state = request.app.state
    gateway: Gateway | None = getattr(state, "gateway", None)
    if gateway is None:
        with _BUILDING:
            gateway = getattr(state, "gateway", None)
            if gateway is None:
                gateway = make_gateway(state.settings, state.database)  # GatewayUnavailable: 503
                state.gateway = gateway
    observe = state.metrics.observe_decision
    if observe not in gateway.observers:  # also a gateway handed over by serve or a test
        with _BUILDING:
            if observe not in gateway.observers:
                gateway.observers.append(observe)
    return gateway


GatewayDep = Annotated[Gateway, Depends(get_gateway)]


def gateway_responses(*statuses: int) -> dict[int | str, JsonObject]:
    """OpenAPI responses for a gateway route: the given error statuses, 401, 422 and 503."""
    return {**error_responses(*statuses),
            503: {"model": ErrorBody, "description": "The deployment cannot do this now: the guest is still being built "
                  "(`guest-building`, with `Retry-After`), or there is no usable secret key or guest."}}
