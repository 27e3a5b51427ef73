"""A tool's answer as a model reads it best: the JSON body parsed, transport headers left out.

``fetch_url`` answers ``{"status", "headers", "body": str}`` (``guest/host.py``): exact, for callers
that check bytes. A model gains nothing from a JSON document quoted inside a string, nor from
``date``, ``server`` or ``content-length``; it does need the status and the headers that say what to
do next (``Location``, ``Retry-After``, rate-limit and pagination headers). :func:`model_result` is
that view; the agent loop's tool messages and the MCP server's results (``structuredContent``) use it.
Refusals and signals (``{"error": ...}``) are already plain JSON and pass unchanged.

Standard library only: this runs inside the WebAssembly guest.
"""

from __future__ import annotations

import json
from typing import Any

from skillhouse.guest.depth import nests_deeper_than
from skillhouse.guest.values import json_dump

TRANSPORT_HEADERS = frozenset(
    {
        # the connection and the message's framing
        "connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding", "trailer",
        "upgrade", "proxy-connection", "te", "accept-ranges",
        # which machine answered, and when
        "date", "server", "via", "age", "x-powered-by", "x-served-by", "x-cache", "x-cache-hits", "x-timer",
        "cf-ray", "cf-cache-status", "alt-svc", "nel", "report-to", "server-timing",
        # what a browser should do with the page
        "strict-transport-security", "content-security-policy", "x-content-type-options", "x-frame-options",
        "x-xss-protection", "referrer-policy", "permissions-policy", "cross-origin-opener-policy",
        "cross-origin-resource-policy", "cross-origin-embedder-policy", "vary", "cache-control", "pragma",
        "expires", "set-cookie", "p3p",
    }
)  # fmt: skip
"""Headers left out of what a model reads (compared case-insensitively); all others are kept."""
_BROWSER_PREFIXES = ("access-control-",)
MAX_DEPTH = 128
"""A body nested deeper stays text: parsed, it would depend on the interpreter's recursion limit."""


def model_result(answer: Any) -> Any:
    """``answer`` (a ``fetch_url`` answer) with a JSON body parsed and transport headers left out.

    Anything that is not a response (a refusal, a signal, another tool's answer) is returned as it is.
    """
    if not isinstance(answer, dict) or not isinstance(answer.get("status"), int) or "error" in answer:
        return answer
    body = answer.get("body")
    given = answer.get("headers")
    headers: dict[str, Any] = given if isinstance(given, dict) else {}
    media_type = next((str(v) for k, v in headers.items() if str(k).lower() == "content-type"), None)
    parsed, is_json = _json_body(body, media_type)
    kept = {
        name: value
        for name, value in headers.items()
        if not _transport(str(name).lower()) and not (is_json and str(name).lower() == "content-type")
    }
    out = dict(answer)
    out["headers"] = kept
    if is_json:
        out["body"] = parsed
    return out


def model_text(answer_text: str) -> str:
    """The JSON text of :func:`model_result` of a JSON answer; other text as it is."""
    if nests_deeper_than(answer_text, MAX_DEPTH):
        return answer_text
    try:
        answer = json.loads(answer_text)
    except ValueError:
        return answer_text
    shaped = model_result(answer)
    return answer_text if shaped is answer else json_dump(shaped)


def _transport(name: str) -> bool:
    return name in TRANSPORT_HEADERS or name.startswith(_BROWSER_PREFIXES)


def _json_body(body: Any, media_type: str | None) -> tuple[Any, bool]:
    """The body parsed, and whether it is JSON: declared so (or undeclared) and parsing."""
    if not isinstance(body, str) or not body.strip():
        return body, False
    if media_type is not None:
        essence = media_type.split(";", 1)[0].strip().lower()
        if not (essence == "application/json" or essence.endswith("+json") or essence == "text/json"):
            return body, False
    if nests_deeper_than(body, MAX_DEPTH):
        return body, False
    try:
        return json.loads(body, parse_constant=_not_json), True
    except ValueError:  # not JSON, or NaN and infinities, which JSON has no notation for
        return body, False


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
