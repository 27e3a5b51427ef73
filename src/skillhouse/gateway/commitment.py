"""The canonical form of a request, its commitment, and the idempotency key read from it.

The commitment is SHA-256 over the RFC 8785 canonical JSON of the request as the gateway sees it:
method, URL, headers (names lowercased; credential headers, which the gateway injects, left out) and
body (parsed when it is JSON, so key order and spacing do not change it). An approval is bound to it;
an idempotency key's payload is compared by it.

The idempotency key is derived on the host from the request, not from anything the guest claims: the
tenant, the operation and the values of the operation's ``identity`` fields, read from wherever the
declaration says they travel (JSON or form body, query, path, header).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any
from urllib.parse import parse_qs

from skillhouse.compiler import canonical_json
from skillhouse.gateway.matching import Match

# set by the gateway on the way out, or by the transport: never part of what was approved
UNCOMMITTED_HEADERS = frozenset({"idempotency-key", "content-length", "host", "connection", "transfer-encoding"})


def header(headers: Mapping[str, str], name: str) -> str | None:
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None


def _json_body(headers: Mapping[str, str], body: str | None) -> Any:
    content_type = (header(headers, "content-type") or "").lower()
    if body is None or "json" not in content_type:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def canonical_request(
    method: str, url: str, headers: Mapping[str, str], body: str | None, credential_headers: Iterable[str] = ()
) -> dict[str, Any]:
    """The request as a JSON value that does not depend on spelling the body or header names differently."""
    left_out = UNCOMMITTED_HEADERS | {name.lower() for name in credential_headers}
    kept = {name.lower(): value for name, value in headers.items() if name.lower() not in left_out}
    parsed = _json_body(headers, body)
    content: dict[str, Any] | None
    if body is None:
        content = None
    elif parsed is not None or body.strip() == "null":
        content = {"json": parsed}
    else:
        content = {"text": body}
    return {"method": method.upper(), "url": url, "headers": kept, "body": content}


def commitment(canonical: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the canonical JSON of a canonical request."""
    return "sha256:" + hashlib.sha256(canonical_json(dict(canonical))).hexdigest()


def _form_fields(headers: Mapping[str, str], body: str | None) -> dict[str, list[str]]:
    content_type = (header(headers, "content-type") or "").lower()
    if body is None:
        return {}
    if content_type.startswith("application/x-www-form-urlencoded"):
        return parse_qs(body, keep_blank_values=True)
    if content_type.startswith("multipart/form-data"):
        raw = f"Content-Type: {header(headers, 'content-type')}\r\n\r\n".encode() + body.encode()
        message = BytesParser(policy=HTTP).parsebytes(raw)
        fields: dict[str, list[str]] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if isinstance(name, str):
                payload = part.get_payload(decode=True)
                text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
                fields.setdefault(name, []).append(text)
        return fields
    return {}


def _single(values: list[str] | None) -> Any:
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def identity_values(match: Match, query: str, headers: Mapping[str, str], body: str | None) -> dict[str, Any]:
    """Each ``identity`` field's value as the request carries it (``None`` where it is absent)."""
    document = match.operation.document
    places = {str(arg["name"]): (str(arg["in"]), str(arg["wire"])) for arg in document.get("arguments", [])}
    parsed_body = _json_body(headers, body)
    form = _form_fields(headers, body)
    params = parse_qs(query, keep_blank_values=True)
    values: dict[str, Any] = {}
    for name in document.get("identity", []):
        where, wire = places.get(str(name), ("body", str(name)))
        if where == "path":
            values[name] = match.path.get(wire)
        elif where == "query":
            values[name] = _single(params.get(wire))
        elif where == "header":
            values[name] = header(headers, wire)
        elif isinstance(parsed_body, dict):
            values[name] = parsed_body.get(wire)
        else:
            values[name] = _single(form.get(wire))
    return values


def idempotency_key(tenant: str, match: Match, values: Mapping[str, Any]) -> str:
    """The key for (tenant, operation, identity values); also sent upstream as ``Idempotency-Key``."""
    material = {"tenant": tenant, "operation": match.operation.qualified, "identity": dict(values)}
    return "skh-" + hashlib.sha256(canonical_json(material)).hexdigest()[:48]
