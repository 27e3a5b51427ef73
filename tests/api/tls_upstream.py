"""A loopback HTTPS server that answers as api.github.com and api.resend.com, with its own test CA.

The gateway reaches it through a fixed resolution (``api.github.com:443`` to the server's port) and
verifies its certificate against the CA written here (``SKILLHOUSE_UPSTREAM_CA``), so the built-in
operations run exactly as declared, TLS and all, without the internet. Every request is recorded;
an issue's answer echoes the Authorization header back, as a careless API might.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

NAMES = ("api.github.com", "api.resend.com")


def _certificate(subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name | None,
                 issuer_key: ec.EllipticCurvePrivateKey, names: tuple[str, ...] = ()) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = dt.datetime.now(dt.UTC)
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer or name).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(hours=1))
               .not_valid_after(now + dt.timedelta(days=1)))
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False)
    else:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        builder = builder.add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                                      content_commitment=False, key_encipherment=False,
                                                      data_encipherment=False, key_agreement=False,
                                                      encipher_only=False, decipher_only=False), critical=True)
    return builder.sign(issuer_key, hashes.SHA256())


def write_test_pki(directory: Path, names: tuple[str, ...] = NAMES) -> tuple[Path, Path, Path]:
    """A CA and a leaf for ``names`` (:data:`NAMES`) signed by it: (ca.pem, leaf.pem, leaf.key)."""
    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _certificate(f"skillhouse test CA for {names[0]}", ca_key, None, ca_key)  # two CAs may share a bundle
    leaf = _certificate(names[0], leaf_key, ca.subject, ca_key, names)
    paths = directory / "ca.pem", directory / "leaf.pem", directory / "leaf.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()))
    return paths


@dataclass
class Received:
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def emails(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == "POST" and r["path"] == "/emails"]


def _handler(received: Received) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _reply(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode() if length else ""
            seen = {"method": self.command, "host": self.headers.get("Host"), "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
            with received.lock:
                received.requests.append(seen)
                count = len(received.emails())
            issue = re.fullmatch(r"/repos/([^/]+)/([^/]+)/issues/(\d+)", self.path)
            if issue and self.command == "GET":
                self._reply(200, {"number": int(issue[3]), "title": "Crash on start", "state": "open",
                                  "debug_authorization": self.headers.get("Authorization")})
            elif self.path == "/emails" and self.command == "POST":
                self._reply(200, {"id": f"em_{count}"})
            else:
                self._reply(404, {"message": "Not Found"})

        do_GET = do_POST = _handle

    return Handler


@contextmanager
def running_tls_upstream(directory: Path) -> Iterator[tuple[int, Path, Received]]:
    """The HTTPS server on a loopback port: (port, the CA file that verifies it, what it received)."""
    ca, leaf, key = write_test_pki(directory)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(leaf, key)
    received = Received()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(received))
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1]), ca, received
    finally:
        server.shutdown()
        server.server_close()
