"""The gateway as the host calls it, for tests that write requests and read answers as the guest does.

:func:`fetch_json` reads a request written as the guest's JSON (a dict) the way the host does
(:func:`~skillhouse.gateway.exchange.read_request`) and hands back the typed answer's JSON document, so
a test states the wire form it means and asserts on what the guest would read. :func:`json_upstream`
turns a fake upstream written in that JSON into the host's typed ``fetch``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from skillhouse.gateway import Gateway, TurnContext
from skillhouse.gateway.exchange import FetchAnswer, FetchRequest, UnreadRequest, read_answer, read_request
from skillhouse.host.turn import Fetch


def fetch_json(gateway: Gateway, turn: TurnContext, request: object) -> dict[str, Any]:
    """``gateway.fetch`` of ``request`` (the guest's JSON, decoded), answered as the guest reads it."""
    return gateway.fetch(turn, read_request(request)).document()


def json_upstream(answer: Callable[[dict[str, Any]], dict[str, Any]]) -> Fetch:
    """A stand-in for the gateway written in the guest's JSON: ``answer`` gets each request as its JSON
    document and answers the JSON the guest would read, which is read back as the host reads an answer."""

    def fetch(request: FetchRequest | UnreadRequest) -> FetchAnswer:
        assert isinstance(request, FetchRequest), request
        return read_answer(answer(request.document()))

    return fetch
