"""Headers every answer of the app carries, whatever produced it.

``X-Content-Type-Options: nosniff`` tells a browser to take each answer as the type it is labelled,
so nothing a skill or an upstream wrote (a release's text, an error message quoting a request) can be
sniffed into HTML or script. :class:`EveryAnswer` wraps the whole ASGI stack, outside Starlette's
server-error middleware, so JSON, console pages, redirects, static files, 404s, 405s and even an
unexpected 500 carry it.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

HEADERS: tuple[tuple[bytes, bytes], ...] = ((b"x-content-type-options", b"nosniff"),)


class EveryAnswer:
    """ASGI middleware adding :data:`HEADERS` to every HTTP response start (replacing any same-named)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in HEADERS}
                kept = [(name, value) for name, value in message.get("headers", []) if name.lower() not in names]
                message["headers"] = [*kept, *HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)
