"""What crosses between the host and the gateway: a ``fetch_url`` request and its answer, typed.

The guest and the host speak JSON across the component boundary (``fetch_url`` takes and gives JSON
text); the host reads the guest's JSON once, with :func:`read_request`, and writes the answer once, with
:meth:`FetchResponse.document` / :meth:`FetchRefusal.document`. Between the two, :meth:`Gateway.fetch
<skillhouse.gateway.pipeline.Gateway.fetch>` takes a :class:`FetchRequest` and answers a
:data:`FetchAnswer`. The idempotency store keeps an answer as its JSON document and reads it back with
:func:`read_answer`.

A guest that hands ``fetch_url`` something that is not a request at all (a list, a number as the body)
is read as an :class:`UnreadRequest`: the gateway refuses it like any other bad request, and it is on
the audit trail like them.

The JSON forms are exactly those of the ``fetch_url`` contract (:mod:`skillhouse.guest.host`), key for
key and in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeAlias

from skillhouse.gateway.errors import GatewayError
from skillhouse.json_types import FetchAnswerDocument, FetchRequestDocument, JsonObject

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""The methods a request may have (upper-cased)."""


@dataclass(frozen=True)
class FetchRequest:
    """A ``fetch_url`` request as the guest wrote it: nothing checked yet but the types of its parts
    (the gateway's canonical form, ``gateway/canonical.py``, checks the rest)."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    """The guest's headers in its order, names as written."""
    body: str | None = None

    def document(self) -> FetchRequestDocument:
        """The request as JSON: ``{method, url, headers, body}``."""
        return {"method": self.method, "url": self.url, "headers": dict(self.headers), "body": self.body}


@dataclass(frozen=True)
class UnreadRequest:
    """What the guest handed ``fetch_url`` when it is not a request ``{method, url, headers, body}`` of
    strings: why not (``message``, ``field``), and its method when that much can be read (for the audit row)."""

    message: str
    field: str
    method: str | None = None


@dataclass(frozen=True)
class FetchResponse:
    """The upstream's answer as handed back (redacted): ``replayed`` when it is one stored under an
    idempotency key and nothing was sent."""

    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    body: str = ""
    replayed: bool = False

    def document(self) -> FetchAnswerDocument:
        """``{status, headers, body}``, and ``replayed: true`` when it is a stored answer."""
        found: JsonObject = {"status": self.status, "headers": dict(self.headers), "body": self.body}
        return {**found, "replayed": True} if self.replayed else found


@dataclass(frozen=True)
class FetchRefusal:
    """The gateway's refusal or signal (``approval-required``): its stable ``code``, its message and
    its details (``field``, ``reason``, ``approval_id``, ``status``...), in the order they were given."""

    code: str
    message: str
    details: Mapping[str, Any] = field(default_factory=dict)
    replayed: bool = False
    """A refusal stored under an idempotency key (a withheld answer) and replayed."""

    def document(self) -> FetchAnswerDocument:
        """``{"error": {code, message, ...details}}``, and ``replayed: true`` when it is a stored answer."""
        found: JsonObject = {"error": {"code": self.code, "message": self.message, **self.details}}
        return {**found, "replayed": True} if self.replayed else found


FetchAnswer: TypeAlias = FetchResponse | FetchRefusal
"""The answer to a ``fetch_url`` request: the upstream's response, or the gateway's refusal."""


def refusal(error: GatewayError) -> FetchRefusal:
    """The answer a refusal (or signal) of the gateway gives: its code, message and details."""
    return FetchRefusal(error.code, error.message, dict(error.details))


def replayed(answer: FetchAnswer) -> FetchAnswer:
    """A stored answer as a duplicate request gets it."""
    return replace(answer, replayed=True)


def read_request(value: object) -> FetchRequest | UnreadRequest:
    """The guest's decoded JSON as a request; an :class:`UnreadRequest` saying why, when it is none.

    The checks run in the order of ``gateway/canonical.py``'s, with its messages, so a request wrong in
    two ways is refused for the same one whichever reads it."""
    if not isinstance(value, Mapping):
        return UnreadRequest("the request must be an object {method, url, headers, body}", "request")
    method, url = value.get("method"), value.get("url")
    headers, body = value.get("headers") or {}, value.get("body")
    written = method if isinstance(method, str) else None
    if not isinstance(method, str) or method.upper() not in METHODS:
        return UnreadRequest(f"method must be one of {', '.join(sorted(METHODS))}", "method", written)
    if not isinstance(url, str) or not url:
        return UnreadRequest("url must be a non-empty string", "url", written)
    if not isinstance(headers, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        return UnreadRequest("headers must be an object of strings", "headers", written)
    if body is not None and not isinstance(body, str):
        return UnreadRequest("body must be a string or null", "body", written)
    return FetchRequest(method, url, tuple(headers.items()), body)


def read_answer(document: Mapping[str, Any]) -> FetchAnswer:
    """An answer from its JSON document (as the idempotency store keeps it)."""
    again = bool(document.get("replayed"))
    error = document.get("error")
    if isinstance(error, Mapping):
        details = {k: v for k, v in error.items() if k not in ("code", "message")}
        return FetchRefusal(str(error.get("code")), str(error.get("message", "")), details, again)
    headers = document.get("headers") or {}
    return FetchResponse(int(document["status"]), {str(k): str(v) for k, v in headers.items()},
                         str(document.get("body", "")), again)


__all__ = [
    "METHODS",
    "FetchAnswer",
    "FetchRefusal",
    "FetchRequest",
    "FetchResponse",
    "UnreadRequest",
    "read_answer",
    "read_request",
    "refusal",
    "replayed",
]
