"""The host functions a guest may call: its only way out (``host/wit/agent.wit``).

Everything crosses as JSON strings, as it does across the WebAssembly boundary, so the in-process
runner and the wasm runner hand the guest exactly the same bytes (a host in the guest's process may
also take the guest's request as the object it would decode: ``fetch_request`` below).

Contracts (JSON shapes):

``eager_tools() -> str``
    JSON list of the eager tool definitions offered from the first step
    (``load_tools``, ``read_object``, ``fetch_url``), each ``{"name", "description", "parameters"}``.

``skill_operations() -> str``
    The skill versions bound to the turn, as :func:`skillhouse.guest.catalogue.skills_text` writes
    them: a JSON line, one entry per skill version::

        {"skill": "hollowbrook", "version": "1.0.0", "description": "...", "instructions": "...",
         "operations": [[tool_name, name, length, length], ...],
         "documents": [{"path": "house_rules.md", "text": "..."}]}

    then, for each operation in that order, two JSON texts of the given lengths (in characters): its
    release operation document (see ``compiler.model.OperationDecl.document``) with ``"schema": null``,
    and its tool definition ``{"name", "description", "parameters": <the schema>}``. The guest decodes
    an operation only when it is used, and lists tools from the definitions' texts as they are.

``read_object(path) -> str``
    JSON ``{"ok": "<text>"}`` or ``{"error": {"code", "message"}}``.

``fetch_url(request) -> str``
    ``request`` is JSON ``{"method", "url", "headers": {...}, "body": str | null}``. The answer is
    JSON ``{"status": int, "headers": {...}, "body": str}`` for a response (``"replayed": true``
    when the gateway answered a duplicate from its store), or ``{"error": {"code", "message", ...}}``
    (codes include ``egress-refused``, ``approval-required`` with ``approval_id``,
    ``idempotency-conflict``, ``idempotency-mismatch``, ``upstream-unresolved``).

``fetch_request(request) -> str`` (optional, in process only)
    ``fetch_url`` for a host that runs in the guest's own process: ``request`` is the decoded JSON object
    ``fetch_url`` would read from its text (``json.loads`` of it gives an equal one), and the answer is
    the same text. A guest whose host has it spares the request's encoding and decoding; the component's
    host has no such function, so the wasm guest hands the text over as the WIT contract says.

``SEND`` (the component's ``call-tool`` export, not a host function)
    A call whose answer is what ``fetch_url`` answers (a bound operation's, or the ``fetch_url`` tool's)
    comes out of the component's ``call-tool`` as its request, unsent (:func:`sent_text`, read back with
    :func:`read_sent`): the host hands it to its ``fetch_url`` and answers the call with what it
    answered. No answer of the guest begins with :data:`SEND` (they are JSON), and the in-process
    guest sends the request itself.

``complete(request) -> str``
    ``request`` is JSON ``{"system": str, "messages": [...], "tools": [<neutral definitions offered>],
    "deferred": [<neutral definitions not yet loaded>]}`` with neutral messages
    ``{"role": "user" | "assistant" | "tool", "content": str | null,
    "tool_calls": [{"id", "name", "arguments": {...}}], "tool_call_id": str}``.
    The answer is JSON ``{"content": str | null, "tool_calls": [...]}`` or
    ``{"error": {"code", "message"}}``.

``log(level, message) -> None``
"""

from __future__ import annotations

import json
import json.encoder
import re
from collections.abc import Callable
from typing import Any, Final, Protocol, cast

from skillhouse.guest.values import FetchRequest, json_dump

SEND: Final = "\x00"
"""What begins a ``call-tool`` answer that is a request for the host to send (see the contracts above)."""

_quoted: Callable[[str], str] = json.encoder.encode_basestring
"""A string as :func:`~skillhouse.guest.values.json_dump` writes it (its encoder quotes strings with this)."""
# the scanner of a decoder as json.loads's (C's when there is one); typeshed does not declare the attribute
_SCAN: Callable[[str, int], tuple[Any, int]] = vars(json.JSONDecoder())["scan_once"]
# ``json.decoder.WHITESPACE.match``, always a match (of nothing, at worst)
_SPACE = cast(Callable[[str, int], "re.Match[str]"], re.compile(r"[ \t\n\r]*").match)


def sent_text(request: FetchRequest) -> str:
    """``request`` as ``call-tool`` hands it to the host: :data:`SEND`, the JSON list ``[method, url,
    headers]``, then a line break and the body as it is when the body is text, else the list ends with
    the body (``null``). A JSON text has no line break of its own, so the first one ends the list; the
    body is not escaped into JSON and read back out of it, which was most of the cost of the crossing."""
    method, url, headers, body = request["method"], request["url"], request["headers"], request["body"]
    if type(body) is str and type(method) is str and type(url) is str:
        # json_dump((method, url, headers)) written out, its two strings quoted as json_dump quotes them, and
        # joined once: a fifth less of what the component's guest pays for this text (2.1 -> 1.6 µs)
        return "".join((SEND, "[", _quoted(method), ", ", _quoted(url), ", ", json_dump(headers), "]\n", body))
    return SEND + json_dump((method, url, headers, body))


def read_sent(text: str) -> Any:
    """The request of a :func:`sent_text`, as ``json.loads`` reads the ``fetch_url`` text of it; what is
    not in that form comes back as its JSON value, for the host to refuse as no request."""
    head, line_break, body = text.partition("\n")
    # json.loads(head[len(SEND):]) by the decoder's scanner, without the slice and the three Python calls
    # around the scanner: this runs on every request a wasm guest hands back. Anything the scanner does
    # not read as exactly one value is left to json.loads itself, for its answer or its very error.
    try:
        parts, end = _SCAN(head, _SPACE(head, len(SEND)).end())
    except (StopIteration, ValueError):
        end = -1
    if end < 0 or _SPACE(head, end).end() != len(head):
        parts = json.loads(head[len(SEND) :])
    if not isinstance(parts, list) or len(parts) != (3 if line_break else 4):
        return parts
    return {"method": parts[0], "url": parts[1], "headers": parts[2], "body": body if line_break else parts[3]}


class Host(Protocol):
    """The WIT host functions as the guest sees them (and, optionally, ``fetch_request``: the guest looks it up)."""

    def eager_tools(self) -> str: ...

    def skill_operations(self) -> str: ...

    def read_object(self, path: str) -> str: ...

    def fetch_url(self, request: str) -> str: ...

    def complete(self, request: str) -> str: ...

    def log(self, level: str, message: str) -> None: ...

