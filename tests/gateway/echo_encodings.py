"""An upstream on loopback that echoes the credential it received, spelled by one encoder of a table.

``GET /encoded?enc=NAME&seed=N`` takes the ``X-Api-Key`` header the gateway injected and answers with it
encoded by ``ENCODERS[NAME]`` inside a larger body of filler, and, where the spelling can be a header
value, in ``Location``, ``Set-Cookie`` and ``X-Echo``. ``seed`` drives the encoders that choose (partial
percent-encoding, mixed entities, the bytes around a secret in a base64 blob) so the test can compute
the same spelling. The table is the issue's: raw, JSON (``ensure_ascii`` on/off, ``\\/``, every character
``\\uXXXX``), HTML (named, decimal, hex), hex, base64/base64url padded or not and at offsets 0/1/2 in a
blob, percent-encoding full and partial in both cases, ``+`` for space.
"""

from __future__ import annotations

import base64
import html
import json
import random
import threading
from collections.abc import Callable
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, quote_plus, urlsplit

Spelling = tuple[str, str]
"""(text placed in the answer, the part of it that must not reach the guest)."""


def _whole(text: str) -> Spelling:
    return text, text


def _every(secret: str, each: Callable[[str], str]) -> str:
    return "".join(each(c) for c in secret)


def _mixed(secret: str, rng: random.Random, each: Callable[[str], str], always: str) -> Spelling:
    """Some characters escaped, the rest left alone (the first escaped, the last not, so no whole-secret
    encoder covers it); ``always`` are escaped wherever they are, as any real encoder of the kind does
    (a raw ``\\`` in JSON, ``&`` in HTML or ``%`` in a URL would make the text mean something else)."""
    chosen = [rng.random() < 0.5 or c in always for c in secret]
    chosen[0] = True
    chosen[-1] = secret[-1] in always
    return _whole("".join(each(c) if pick else c for c, pick in zip(secret, chosen, strict=True)))


def _u_escape(secret: str, upper: bool) -> str:
    units = secret.encode("utf-16-be")
    escaped = "".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}" for i in range(0, len(units), 2))
    return escaped.upper().replace("\\U", "\\u") if upper else escaped


def _percent_partial(secret: str, rng: random.Random, lower: bool) -> Spelling:
    def one(c: str) -> str:
        encoded = "".join(f"%{b:02X}" for b in c.encode())
        return encoded.lower() if lower else encoded

    return _mixed(secret, rng, one, always="%+")


def _blob(secret: str, rng: random.Random, offset: int, urlsafe: bool) -> Spelling:
    """The secret inside a larger base64 blob, at ``offset`` within its 3-byte group; the needle is the
    run of characters whose bits all come from the secret."""
    raw = secret.encode()
    before = rng.randbytes(3 * rng.randint(1, 20) + offset)
    blob = before + raw + rng.randbytes(rng.randint(1, 40))
    text = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(blob).decode()
    first, end = -(-8 * len(before) // 6), (8 * (len(before) + len(raw))) // 6
    return text, text[first:end]


def _b64(secret: str, urlsafe: bool, padded: bool) -> Spelling:
    text = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(secret.encode()).decode()
    return _whole(text if padded else text.rstrip("="))


ENCODERS: dict[str, Callable[[str, random.Random], Spelling]] = {
    "raw": lambda s, r: _whole(s),
    "json-ascii": lambda s, r: _whole(json.dumps(s, ensure_ascii=True)[1:-1]),
    "json-utf8": lambda s, r: _whole(json.dumps(s, ensure_ascii=False)[1:-1]),
    "json-slash": lambda s, r: _whole(json.dumps(s)[1:-1].replace("/", "\\/")),
    "json-u-lower": lambda s, r: _whole(_u_escape(s, upper=False)),
    "json-u-upper": lambda s, r: _whole(_u_escape(s, upper=True)),
    "json-u-mixed": lambda s, r: _mixed(s, r, lambda c: _u_escape(c, upper=False), always='\\"'),
    "html-named": lambda s, r: _whole(html.escape(s, quote=True)),
    "html-decimal": lambda s, r: _whole(_every(s, lambda c: f"&#{ord(c)};")),
    "html-hex-lower": lambda s, r: _whole(_every(s, lambda c: f"&#x{ord(c):x};")),
    "html-hex-upper": lambda s, r: _whole(_every(s, lambda c: f"&#x{ord(c):X};")),
    "html-mixed": lambda s, r: _mixed(s, r, lambda c: f"&#{ord(c)};", always="&<>\"'"),
    "hex-lower": lambda s, r: _whole(s.encode().hex()),
    "hex-upper": lambda s, r: _whole(s.encode().hex().upper()),
    "base64": lambda s, r: _b64(s, urlsafe=False, padded=True),
    "base64-unpadded": lambda s, r: _b64(s, urlsafe=False, padded=False),
    "base64url": lambda s, r: _b64(s, urlsafe=True, padded=True),
    "base64url-unpadded": lambda s, r: _b64(s, urlsafe=True, padded=False),
    **{f"base64-blob-{k}": partial(_blob, offset=k, urlsafe=False) for k in (0, 1, 2)},
    **{f"base64url-blob-{k}": partial(_blob, offset=k, urlsafe=True) for k in (0, 1, 2)},
    "percent-full-upper": lambda s, r: _whole(_every(s, lambda c: "".join(f"%{b:02X}" for b in c.encode()))),
    "percent-full-lower": lambda s, r: _whole(_every(s, lambda c: "".join(f"%{b:02x}" for b in c.encode()))),
    "percent-quote": lambda s, r: _whole(quote(s, safe="")),
    "percent-quote-path": lambda s, r: _whole(quote(s)),
    "percent-partial-upper": lambda s, r: _percent_partial(s, r, lower=False),
    "percent-partial-lower": lambda s, r: _percent_partial(s, r, lower=True),
    "form-plus": lambda s, r: _whole(quote_plus(s)),
}


def spell(name: str, secret: str, seed: int) -> Spelling:
    return ENCODERS[name](secret, random.Random(seed))


def _header_safe(text: str) -> bool:
    return text.isascii() and text.isprintable() and text == text.strip()


def _handler() -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            query = parse_qs(urlsplit(self.path).query)
            secret = self.headers.get("X-Api-Key", "")
            text, _ = spell(query["enc"][0], secret, int(query["seed"][0]))
            rng = random.Random(int(query["seed"][0]) + 1)
            filler = "".join(rng.choice("abcdefghij KLMNOP 0123456789\n") for _ in range(rng.randint(0, 300)))
            data = f'{filler}{{"echo": "{text}"}}{filler[::-1]}'.encode()
            self.send_response(302 if _header_safe(text) else 200)
            if _header_safe(text):
                self.send_header("Location", f"https://elsewhere.example/callback?token={text}&next=/home")
                self.send_header("Set-Cookie", f"sid={text}; Path=/; HttpOnly")
                self.send_header("X-Echo", f"seen {text} here")
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


class EchoUpstream:
    """The encoding echo server on a loopback port (``port``), for ``with``."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler())
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> EchoUpstream:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
