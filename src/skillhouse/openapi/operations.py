"""One OpenAPI operation to one operation block in schema form.

The block's arguments are every path, query and header parameter and every body field, each under
a name providers accept; where that name differs from the wire name, or two locations share a name,
``names`` maps it back. Query serialization goes in ``style``, the body's media type in ``encoding``,
a body that is not an object with fields becomes one ``payload`` argument, and a required header
with a single allowed value becomes a fixed header.
"""

from __future__ import annotations

import re

from skillhouse.openapi.document import SpecDocument
from skillhouse.openapi.naming import argument_name, unique_argument
from skillhouse.openapi.parameters import (
    Body,
    Field,
    Skip,
    credential_parameters,
    drop_credentials,
    parameter_field,
    read_body,
    read_parameters,
)
from skillhouse.openapi.references import RefProblem, Spot
from skillhouse.openapi.schemas import SchemaConverter
from skillhouse.records import field, record

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonObject, JsonSchema

NO_BODY = ("GET", "HEAD")
_TEMPLATE = re.compile(r"\{([^{}]*)\}")
_COLON_PARAMETER = re.compile(r"(?<=/):([A-Za-z_][A-Za-z0-9_]*)")


@record
class BuiltOperation:
    """An operation block ready to be written (its schema may still refer to ``#/types``)."""

    method: str
    url: str
    schema: JsonSchema
    query: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    style: dict[str, str] = field(default_factory=dict)
    allow_empty: list[str] = field(default_factory=list)
    explode: list[str] = field(default_factory=list)
    defaults: dict[str, Any] = field(default_factory=dict)
    encoding: str = "json"
    payload: str | None = None
    content_type: str | None = None
    notes: list[str] = field(default_factory=list)

    def block(self) -> JsonObject:
        """The ``operation`` mapping without its schema, in the order a person reads it."""
        out: JsonObject = {"method": self.method, "url": self.url}
        for key in ("query", "header", "headers", "names", "style", "allow_empty", "explode", "defaults"):
            value = getattr(self, key)
            if value:
                out[key] = value
        if self.encoding != "json":
            out["encoding"] = self.encoding
        if self.payload is not None:
            out["payload"] = self.payload
        if self.content_type is not None:
            out["content_type"] = self.content_type
        return out


def build_operation(
    conv: SchemaConverter,
    method: str,
    path: str,
    op: JsonObject,
    path_item: JsonObject,
    base_url: str,
    consumes: list[Any],
    item_spot: Spot,
    op_spot: Spot,
) -> BuiltOperation:
    """Build the block for ``method path``; raises :class:`Skip` (or :class:`Unresolved`) with the reason when it cannot be.

    ``item_spot`` and ``op_spot`` say where the path item and the operation are (in other files when
    they are ``$ref``s): references in them are relative to their documents, and located there.
    """
    notes: list[str] = []
    swagger = conv.spec.version == "2.0"
    template = path.split("#", 1)[0]
    if template != path:
        notes.append(f"fragment {path[len(template):]!r} dropped from the path")
    params = read_parameters(conv, path_item, op, item_spot, op_spot, notes)
    credentials = conv.credentials
    if credentials is None:
        known = len(conv.spec.problems)
        credentials = credential_parameters(conv.spec)
        if len(conv.spec.problems) == known:  # a scheme that cannot be read is met again by every operation, as always
            conv.credentials = credentials
    params = drop_credentials(params, credentials, notes)
    fields: list[Field] = []
    for param in params:
        built = parameter_field(conv, param, swagger, notes)
        if built is not None:
            fields.append(built)
    body: Body | None = read_body(conv, op, params, swagger, op_spot, consumes, notes)
    if body is not None and method in NO_BODY:
        if body.required:
            raise Skip(f"{method} with a required request body cannot be sent (HTTP gives {method} no body)")
        notes.append(f"optional request body of a {method} left out (HTTP gives {method} no body)")
        body = None

    # each check only where it can apply (a colon in the path; a required header for a fixed value): run
    # for every path and field, the checks that could not were 0.5% of Jira's import
    for colon in _COLON_PARAMETER.findall(template) if ":" in template else ():
        notes.append(
            f"path segment ':{colon}' looks like a parameter written Express-style; OpenAPI writes '{{{colon}}}' "
            "(a spec bug): it is sent literally as written"
        )
    in_template: list[str] = _TEMPLATE.findall(template)
    declared = {f.wire for f in fields if f.location == "path"}
    for name in in_template:
        if name not in declared:
            fields.append(Field(name, "path", {"type": "string"}, True))
    kept = []
    for item in fields:
        if item.location == "path" and item.wire not in in_template:
            notes.append(f"path parameter {item.wire!r} is not in the path; dropped")
        else:
            kept.append(item)
    order = {"path": 0, "query": 1, "header": 2}
    kept.sort(key=lambda f: (order[f.location], in_template.index(f.wire) if f.location == "path" else 0))
    return _assemble(method, base_url + template, kept, body, notes)


def response_problems(spec: SpecDocument, op: dict[str, Any], spot: Spot) -> list[str]:
    """A note for each response (or response schema) reference that cannot be followed.

    Tools do not use responses, so such a reference changes nothing that is written; it is still
    reported, being a broken spec the user should hear about. (Pointers are built only for a reference
    that fails: a spec's responses are mostly the same few references, followed once each.)
    """
    responses = op.get("responses")
    out: list[str] = []
    for status, raw in responses.items() if isinstance(responses, dict) else ():
        if isinstance(raw, dict) and "$ref" in raw:
            found = spec.locate(raw["$ref"], spot.doc)
            if isinstance(found, RefProblem):
                problem = spec.locate(raw["$ref"], spot.doc, spot.child("responses", str(status)).at)
                assert isinstance(problem, RefProblem)
                spec.problems.append(problem)
                out.append(f"response {status!r}: {problem.text()} (responses are not used by the tool)")
                continue
            response, response_doc, key = found
            response_at = key.partition("#")[2]
        else:
            response, response_doc, response_at = raw, spot.doc, None
        if not isinstance(response, dict):
            continue
        media = response.get("content")
        schemas = [(t, m.get("schema")) for t, m in media.items() if isinstance(m, dict)] if isinstance(media, dict) else []
        if "schema" in response:
            schemas.append((None, response["schema"]))
        for media_type, schema in schemas:
            ref = schema.get("$ref") if isinstance(schema, dict) else None
            if ref is None or not isinstance(spec.locate(ref, response_doc), RefProblem):
                continue
            at = response_at if response_at is not None else spot.child("responses", str(status)).at
            under = "/schema" if media_type is None else f"/content/{_escaped(media_type)}/schema"
            problem = spec.locate(ref, response_doc, at + under)
            assert isinstance(problem, RefProblem)
            spec.problems.append(problem)
            out.append(f"response {status!r} schema: {problem.text()} (responses are not used by the tool)")
    return out


def _escaped(token: Any) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def _assemble(method: str, url: str, fields: list[Field], body: Body | None, notes: list[str]) -> BuiltOperation:
    built = BuiltOperation(method=method, url=url, schema={}, notes=notes)
    properties: dict[str, JsonSchema] = {}
    required: list[str] = []
    taken: set[str] = set()
    body_fields = body.fields if body is not None else []
    for item in [*fields, *body_fields]:
        fixed = _single_value(item) if item.location == "header" and item.required else None
        if fixed is not None:
            built.headers[item.wire] = fixed
            notes.append(f"header {item.wire!r} fixed to its only allowed value")
            continue
        name = unique_argument(argument_name(item.wire), item.location, taken)
        taken.add(name)
        if item.location == "path":
            if name != item.wire:
                built.url = built.url.replace("{" + item.wire + "}", "{" + name + "}")
                notes.append(f"path parameter {item.wire!r} is called {name!r}")
            if item.style is not None:
                built.style[name] = item.style
            if item.style == "matrix" and name != item.wire:
                built.names[name] = item.wire  # ';id=' names the spec's parameter, whatever the argument is called
            if item.explode:
                built.explode.append(name)
        elif name != item.wire:
            built.names[name] = item.wire
            notes.append(f"{item.location} {item.wire!r} is offered as {name!r}")
        if item.location == "query":
            built.query.append(name)
            if item.style is not None:
                built.style[name] = item.style
            if item.allow_empty:
                built.allow_empty.append(name)
        elif item.location == "header":
            built.header.append(name)
        elif item.location == "body" and item.style is not None:
            built.style[name] = item.style
        properties[name] = item.schema
        if item.required:
            required.append(name)
    if body is not None:
        built.encoding = body.encoding
        built.content_type = body.content_type
        if body.payload is not None:
            name = unique_argument("body", "body", taken)
            built.payload = name
            properties[name] = body.payload
            if body.required:
                required.append(name)
    schema: JsonSchema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    built.schema = schema
    return built


def _single_value(item: Field) -> str | None:
    schema = item.schema if isinstance(item.schema, dict) else {}
    if "const" in schema and isinstance(schema["const"], str):
        return str(schema["const"])
    enum = schema.get("enum")
    if isinstance(enum, list) and len(enum) == 1 and isinstance(enum[0], str):
        return enum[0]
    return None
