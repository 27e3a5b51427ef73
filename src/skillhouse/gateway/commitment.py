"""A canonical request's commitment, and the idempotency key read from it.

The commitment is SHA-256 over the RFC 8785 canonical JSON of the request as the gateway sends it
(:meth:`~skillhouse.gateway.canonical.CanonicalRequest.document`): method, canonical URL, headers
(names lower-cased; the credential headers the gateway injects left out) and the body's exact text.
An approval is bound to it; an idempotency key's payload is compared by it.

The idempotency key is derived on the host from the request, not from anything the guest claims: the
tenant, the operation and the values of the operation's ``identity`` fields, read from wherever the
declaration says they travel (JSON or form body, query, path, header).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any
from urllib.parse import parse_qs

from skillhouse.compiler import canonical_json
from skillhouse.gateway.canonical import CanonicalRequest
from skillhouse.gateway.errors import InvalidRequest
from skillhouse.gateway.matching import Match
from skillhouse.json_types import JsonObject


def commitment(canonical: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the canonical JSON of a canonical request."""
    return "sha256:" + hashlib.sha256(canonical_json(dict(canonical))).hexdigest()


def _form_fields(request: CanonicalRequest) -> dict[str, list[str]]:
    content_type = request.header("content-type") or ""
    body = request.body
    if body is None:
        return {}
    if content_type.lower().startswith("application/x-www-form-urlencoded"):
        return parse_qs(body, keep_blank_values=True)
    if content_type.lower().startswith("multipart/form-data"):
        raw = f"Content-Type: {content_type}\r\n\r\n".encode() + body.encode()
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


def identity_values(match: Match, request: CanonicalRequest) -> JsonObject:
    """Each ``identity`` field's value as the request carries it (``None`` where it is absent)."""
    document = match.operation.document
    places = {str(arg["name"]): (str(arg["in"]), str(arg["wire"])) for arg in document.get("arguments", [])}
    parsed_body = request.json_body
    form = _form_fields(request)
    params = parse_qs(request.url.query, keep_blank_values=True)
    values: JsonObject = {}
    for name in document.get("identity", []):
        where, wire = places.get(str(name), ("body", str(name)))
        if where == "path":
            values[name] = match.path.get(wire)
        elif where == "query":
            values[name] = _single(params.get(wire))
        elif where == "header":
            values[name] = request.header(wire)
        elif isinstance(parsed_body, dict):
            values[name] = parsed_body.get(wire)
        else:
            values[name] = _single(form.get(wire))
    return values


def idempotency_key(tenant: str, match: Match, values: Mapping[str, Any]) -> str:
    """The key for (tenant, operation, identity values); also sent upstream as ``Idempotency-Key``."""
    material = {"tenant": tenant, "operation": match.operation.qualified, "identity": dict(values)}
    try:
        encoded = canonical_json(material)
    except (ValueError, TypeError, UnicodeError):
        # a number beyond JSON's exact range or a lone surrogate: no one spelling to key it by
        raise InvalidRequest(
            f"the identity of {match.operation.qualified} holds a value with no canonical JSON form "
            "(a number beyond 2**53 or a lone surrogate)", field="body", reason="identity-not-canonical",
        ) from None
    return "skh-" + hashlib.sha256(encoded).hexdigest()[:48]
