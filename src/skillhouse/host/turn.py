"""A :class:`~skillhouse.guest.host.Host` for one turn, built from release documents and two callables.

``fetch`` takes the request the guest built, read once into the gateway's typed request
(:func:`skillhouse.gateway.exchange.read_request`) from its JSON (the wasm guest's text) or from the object
that JSON decodes to (the in-process guest's, handed over as it is: ``fetch_request``), and answers a
typed answer, written back as JSON once (the gateway; a fake upstream in tests); ``complete`` takes the neutral completion request and
answers the model's turn. The JSON both sides of the component boundary read follows the contracts in
:mod:`skillhouse.guest.host`.

A host whose guest is kept warm between calls (see :mod:`skillhouse.host.runner_pool`) is bound to
each call's gateway with :meth:`TurnHost.serve` and unbound with :meth:`TurnHost.release`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping

from skillhouse.compiler.eager_tools import EAGER_TOOLS
from skillhouse.gateway.exchange import FetchAnswer, FetchRefusal, FetchRequest, UnreadRequest, read_request
from skillhouse.guest.catalogue import skills_text
from skillhouse.guest.values import json_dump
from skillhouse.json_types import (
    FetchRequestDocument,
    JsonObject,
    ModelAnswer,
    ModelRequest,
    ReleaseDocument,
)

Fetch = Callable[[FetchRequest | UnreadRequest], FetchAnswer]
Complete = Callable[[ModelRequest], ModelAnswer]


def bound_skill(release: ReleaseDocument) -> JsonObject:
    """The ``skill-operations`` entry of a release document: what a turn needs of it, nothing more."""
    return {
        "skill": release["skill"],
        "version": release["version"],
        "description": release.get("description", ""),
        "instructions": release.get("instructions", ""),
        "operations": list(release.get("operations", [])),
        "documents": list(release.get("documents", [])),
    }


def _no_model(request: ModelRequest) -> ModelAnswer:
    return {"error": {"code": "no-model", "message": "this turn has no model bound"}}


def _no_turn(request: FetchRequest | UnreadRequest) -> FetchAnswer:
    return FetchRefusal("no-turn", "this guest serves no call now")


def _no_turn_model(request: ModelRequest) -> ModelAnswer:
    return {"error": {"code": "no-turn", "message": "this guest serves no call now"}}


class TurnHost:
    """The host functions of one turn, answered from memory and the two callables."""

    def __init__(
        self,
        releases: Iterable[ReleaseDocument],
        fetch: Fetch,
        complete: Complete | None = None,
        objects: Mapping[str, str] | None = None,
    ) -> None:
        self._skills = skills_text(bound_skill(r) for r in releases)
        self._eager = json.dumps(EAGER_TOOLS, ensure_ascii=False)
        self._fetch = fetch
        self._complete = complete or _no_model
        self._objects = dict(objects or {})
        self.requests: list[FetchRequestDocument] = []
        """Every request the guest handed to ``fetch_url``, in order, as its JSON."""
        self.logs: list[tuple[str, str]] = []

    def serve(self, fetch: Fetch, complete: Complete | None = None) -> None:
        """Answer ``fetch_url`` and ``complete`` with these from now on, with no requests or logs on record."""
        self._fetch = fetch
        self._complete = complete or _no_model
        self.requests = []
        self.logs = []

    def release(self) -> None:
        """Serve nothing: an idle guest's host keeps no gateway, context or record of its last call."""
        self.serve(_no_turn, _no_turn_model)

    def eager_tools(self) -> str:
        return self._eager

    def skill_operations(self) -> str:
        return self._skills

    def read_object(self, path: str) -> str:
        if path in self._objects:
            return json.dumps({"ok": self._objects[path]}, ensure_ascii=False)
        return json.dumps({"error": {"code": "not-found", "message": f"no object at {path!r}"}})

    def fetch_url(self, request: str) -> str:
        # the one place the guest's request is read from JSON (the wasm guest's, and any host function's caller)
        return self.fetch_request(json.loads(request))

    def fetch_request(self, request: FetchRequestDocument) -> str:
        """:meth:`fetch_url` of the request as decoded JSON: what the in-process guest hands over, sparing
        the text between the two (see :mod:`skillhouse.guest.host`); the answer written as JSON here."""
        self.requests.append(request)
        return json_dump(self._fetch(read_request(request)).document())

    def complete(self, request: str) -> str:
        return json_dump(self._complete(json.loads(request)))

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))
