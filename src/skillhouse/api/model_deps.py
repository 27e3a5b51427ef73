"""The app's one model client: built from the settings on the first run that needs it, closed with the app.

A provider model (``openai:``, ``anthropic:``) holds an HTTP client with a connection pool; building one
per ``POST /v1/turns/{id}/run`` opened a pool per request and never closed it. One per app reuses the
provider's connections across runs (the client is safe to share between the threads that serve requests)
and :func:`close_model` closes it when the app stops. A deployment whose model cannot be built is asked
again on the next run: only a built model is kept.
"""

from __future__ import annotations

import threading

from starlette.datastructures import State

from skillhouse.host.models.base import ChatModel
from skillhouse.host.models.factory import model_from_settings

_BUILDING = threading.Lock()


def app_model(state: State) -> ChatModel:
    """The app's model (``state.settings.model``), built on first use; :class:`ModelConfigError` when it cannot be."""
    model: ChatModel | None = getattr(state, "model", None)
    if model is None:
        with _BUILDING:
            model = getattr(state, "model", None)
            if model is None:
                model = model_from_settings(state.settings)  # ModelConfigError: 503 model-not-configured / -unavailable
                state.model = model
    return model


def close_model(state: State) -> None:
    """Close the app's model client, if one was built; the next run builds a new one."""
    with _BUILDING:
        model: ChatModel | None = getattr(state, "model", None)
        state.model = None
    if model is not None:
        model.close()
