"""Rendering console pages: the Jinja2 environment, its filters, and the page and error responses.

Autoescaping is on for every template, so nothing a skill, a request or an upstream wrote can become
markup. Header values that look like credentials are shown as ``[hidden]`` even though the gateway
leaves the credentials it injects out of the canonical request: a guest could still have written one.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from skillhouse.api.console.sessions import ConsoleSession
from skillhouse.json_types import JsonObject

HERE = Path(__file__).resolve().parent
STYLESHEET = HERE / "static" / "console.css"
HIDDEN = "[hidden]"
# no script runs, nothing loads from elsewhere, and no other site may frame a page with an Approve button
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
                               "frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
_SECRET_HEADER = re.compile(r"authorization|cookie|token|secret|password|passwd|api[-_]?key|credential|signature", re.I)


def masked_headers(headers: JsonObject) -> list[tuple[str, str]]:
    """Header pairs in name order, credential-looking values replaced by ``[hidden]``."""
    return [(name, HIDDEN if _SECRET_HEADER.search(name) else str(value)) for name, value in sorted(headers.items())]


def body_text(body: Any) -> str:
    """A canonical request body for people: JSON indented, text as sent, or a note that there is none."""
    if body is None:
        return "(no body)"
    if isinstance(body, dict) and "json" in body:
        return json.dumps(body["json"], indent=2, sort_keys=True, ensure_ascii=False)
    if isinstance(body, dict) and "text" in body:
        return str(body["text"])
    return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False)


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def when(value: float | dt.datetime | None) -> str:
    """A UTC timestamp, to the second."""
    if value is None:
        return "—"
    moment = value if isinstance(value, dt.datetime) else dt.datetime.fromtimestamp(value, dt.UTC)
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def remaining(expires_at: float) -> str:
    """How long until ``expires_at`` (epoch seconds), coarsely: "in 23 h 59 min", or "expired"."""
    seconds = int(expires_at - time.time())
    if seconds <= 0:
        return "expired"
    hours, minutes = divmod(seconds // 60, 60)
    return f"in {hours} h {minutes} min" if hours else f"in {max(minutes, 1)} min"


def short_digest(digest: str) -> str:
    algorithm, _, hexdigest = digest.partition(":")
    return f"{algorithm}:{hexdigest[:12]}…" if hexdigest else digest


_environment = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True),
                           trim_blocks=True, lstrip_blocks=True)
_environment.filters.update(when=when, remaining=remaining, pretty_json=pretty_json, body_text=body_text,
                            masked_headers=masked_headers, short_digest=short_digest)


def page(request: Request, template: str, session: ConsoleSession | None, status: int = 200, **values: Any) -> HTMLResponse:
    """``template`` rendered with ``values``, the signed-in session and the current path."""
    html = _environment.get_template(template).render(session=session, path=request.url.path, **values)
    return HTMLResponse(html, status_code=status, headers=PAGE_HEADERS)


def error_page(request: Request, session: ConsoleSession | None, status: int, code: str, message: str) -> HTMLResponse:
    titles = {403: "Refused", 404: "Not found", 409: "Already decided or changed", 413: "Too large", 422: "Not valid",
              500: "Something went wrong"}
    return page(request, "error.html", session, status=status, title=titles.get(status, "Error"), code=code, message=message)
