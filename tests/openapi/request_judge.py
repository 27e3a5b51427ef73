"""An independent judge of translated requests: openapi-core against the original OpenAPI 3.x spec.

:func:`judge_of` reads the spec as the user wrote it (not the wizard's import of it) and returns a
function that takes the guest's request (``{method, url, headers, body}``, what ``build_request``
returns) and raises openapi-core's error when a server implementing the spec would refuse it.

The request object is werkzeug's, built from the method, the full URL, the headers and the body, so
openapi-core parses the query string, the headers and the body itself. Two things in the spec are not
the guest's to satisfy and are taken out before judging: ``security`` (credentials are added by the
gateway) and, per :data:`JUDGE_LIMITS`, what openapi-core itself cannot read.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

# What openapi-core 0.23 cannot judge, each with the reason; these are the judge's limits, not the guest's.
JUDGE_LIMITS: dict[str, str] = {
    "optional deepObject parameters": "openapi-core 0.23 raises KeyError ('deepObject', name) deserializing an "
    "object-typed deepObject parameter, even when the request leaves it out",
    "per-field body encodings": "openapi-core 0.23 applies a form or multipart 'encoding' map only to the media "
    "types it knows and fails on the rest; the body's own schema still judges every field",
    "deepObject form fields": "openapi-core 0.23 reads one level of brackets only ('Failed to cast value to "
    "object type' on Stripe's billing[address][city]=...): a form body field encoded as deepObject is left to the "
    "server, and the body's other fields (scalars, enums, their wire form) are judged",
}


# Where a spec contradicts itself, the judge reads it as the wizard does (the author's evident intent), each with the reason.
SPEC_REPAIRS: dict[str, str] = {
    "nullable in OpenAPI 3.1": "3.1 dropped 3.0's 'nullable: true', yet specs written as 3.1 keep it (openai.yaml, "
    "readme-3.1-schema-types.json); the wizard honours it (type [T, 'null']) and so does the judge (anyOf the "
    "schema or null: openapi-core's parameter and multipart readers take a type list for an error), where "
    "openapi-core would ignore it and refuse null",
    "discriminator over inline schemas": "a discriminator without a mapping names the schema by the property's value, "
    "so over inline oneOf branches (openai.yaml's RealtimeTurnDetection: type 'server_vad') it names none and "
    "openapi-core refuses every value; the judge leaves such a discriminator out (the branches' own 'const' decide)",
}


def _without_unnamable_discriminators(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _without_unnamable_discriminators(item)
        return
    if not isinstance(node, dict):
        return
    found = node.get("discriminator")
    branches = [b for key in ("oneOf", "anyOf") for b in node.get(key) or [] if isinstance(node.get(key), list)]
    if isinstance(found, dict) and "mapping" not in found and branches and not any(isinstance(b, dict) and "$ref" in b for b in branches):
        del node["discriminator"]
    for value in node.values():
        _without_unnamable_discriminators(value)


def _nullable_as_31(node: Any) -> Any:
    if isinstance(node, list):
        return [_nullable_as_31(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _nullable_as_31(v) for k, v in node.items()}
    if out.pop("nullable", None) is True:
        return {"anyOf": [out, {"type": "null"}]}
    return out


def _without_judge_limits(op: dict[str, Any]) -> None:
    params = op.get("parameters")
    if isinstance(params, list):
        op["parameters"] = [p for p in params if not (isinstance(p, dict) and p.get("style") == "deepObject" and not p.get("required"))]
    body = op.get("requestBody")
    if isinstance(body, dict) and isinstance(body.get("content"), dict):
        for media in body["content"].values():
            if isinstance(media, dict):
                encoding = media.pop("encoding", None)
                deep = [name for name, how in (encoding or {}).items() if isinstance(how, dict) and how.get("style") == "deepObject"]
                schema = media.get("schema")
                if deep and isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
                    media["schema"] = {
                        **schema,
                        "properties": {k: v for k, v in schema["properties"].items() if k not in deep},
                        "required": [r for r in schema.get("required", []) if r not in deep],
                        "additionalProperties": True,
                    }
                    if not media["schema"]["required"]:
                        del media["schema"]["required"]


def judge_of(spec: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """A function that raises when ``spec`` (OpenAPI 3.x, as loaded) refuses the request it is given."""
    from openapi_core import Config, OpenAPI

    relaxed = copy.deepcopy(spec)
    if str(relaxed.get("openapi", "")).startswith("3.1"):
        relaxed = _nullable_as_31(relaxed)
    _without_unnamable_discriminators(relaxed)
    # credentials are the gateway's to add; the judge checks the request the guest builds
    relaxed["security"] = []
    for item in relaxed.get("paths", {}).values():
        for op in item.values() if isinstance(item, dict) else []:
            if isinstance(op, dict):
                op.pop("security", None)
                _without_judge_limits(op)
    # several real specs break the OpenAPI metaschema in places no request touches: judge requests, not the spec
    openapi = OpenAPI.from_dict(relaxed, config=Config(spec_validator_cls=None))

    def judge(request: dict[str, Any]) -> None:
        read = werkzeug_request(request)
        with contextlib.suppress(Exception):  # a request no path fits is refused by validate_request itself
            found = openapi.request_validator._find_path(read)[3]
            read.parameters.path = _matrix_names(_as_sent(found.pattern, found.variables, request["url"]))
        openapi.validate_request(read)

    return judge


def _matrix_names(variables: dict[str, str]) -> dict[str, str]:
    """The path's variables also under the names openapi-core 0.23's matrix reader looks up (``;id``, ``;id*``,
    RFC 6570's spelling), where its path finder files them under ``id``: without them it finds no matrix
    parameter in any request (``Missing required path parameter``), however it is written. An empty value,
    which OpenAPI and RFC 6570 write ``;id`` (an exploded object's empty member ``;key``, an exploded list's
    empty item ``;id``), is handed over as ``;id=``: openapi-core's reader only knows that."""
    spelled = {k: _empty_spelled_out(v) for k, v in variables.items()}
    return {**variables, **{f";{k}": v for k, v in spelled.items()}, **{f";{k}*": v for k, v in spelled.items()}}


def _as_sent(pattern: str, variables: dict[str, str], url: str) -> dict[str, str]:
    """The path's variables as the request's URL has them, percent-escapes kept.

    openapi-core's path finder decodes each before its matrix reader splits it at ``;``, ``=`` and ``,``: a
    value holding one of them (which the guest escapes, ``%3B``) would be misread. Only a variable whose
    segment the pattern's segments place is taken as sent; the rest are left as found."""
    templates = pattern.strip("/").split("/")
    segments = urlsplit(url).path.strip("/").split("/")[-len(templates):]  # after the server's own path
    sent = dict(variables)
    if len(segments) == len(templates):
        for template, segment in zip(templates, segments, strict=True):
            name = template[1:-1] if template.startswith("{") and template.endswith("}") else None
            if name in sent:
                sent[name] = segment
    return sent


def _empty_spelled_out(value: str) -> str:
    """A matrix value with each ``;name`` that has no ``=`` (an empty value, as RFC 6570 writes it) as ``;name=``."""
    if not value.startswith(";"):
        return value
    return ";".join(part if "=" in part or not part else f"{part}=" for part in value.split(";"))


def werkzeug_request(request: dict[str, Any]) -> Any:
    """openapi-core's request object for the guest's request: method, full URL, headers and body."""
    from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest
    from werkzeug.test import EnvironBuilder

    parts = urlsplit(request["url"])
    body = request["body"]
    builder = EnvironBuilder(
        method=request["method"],
        base_url=f"{parts.scheme}://{parts.netloc}",
        path=parts.path,
        query_string=parts.query,
        headers=request["headers"],
        data=body.encode("utf-8") if isinstance(body, str) else b"",
    )
    return WerkzeugOpenAPIRequest(builder.get_request())
