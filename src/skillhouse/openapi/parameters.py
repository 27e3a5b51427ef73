"""An operation's parameters and request body, read into one list of located fields.

OpenAPI spreads what a call sends over path, query, header and cookie parameters (path-level ones
overridden by the operation's own) and a request body in one of several media types; Swagger 2.0
puts the body and form fields among the parameters. This module reads both into :class:`Field`s
and a :class:`Body`, noting every adaptation; it raises :class:`Skip` when the operation cannot be
offered at all.
"""

from __future__ import annotations

from skillhouse.openapi.document import SpecDocument
from skillhouse.openapi.references import Spot
from skillhouse.openapi.schemas import SchemaConverter
from skillhouse.records import field, record

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonObject, JsonSchema

# Credentials are bound by the gateway and framing belongs to the transport: never model-supplied.
RESERVED_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "content-type", "content-length", "host", "accept"}
)
_SWAGGER_META = frozenset({"name", "in", "required", "description", "collectionFormat", "allowEmptyValue", "x-example"})
_COLLECTION_STYLES = {"csv": "comma", "ssv": "spaceDelimited", "pipes": "pipeDelimited", "tsv": "comma", "multi": None}
JSON_TYPES = ("application/json",)


class Skip(Exception):
    """The operation cannot become a tool; the message says why."""


class Param(tuple[dict[str, "Any"], str]):  # quoted: Any is imported for type checking only
    """A parameter object and the document it is written in (its schema's references are relative to it).

    A pair written out, as :class:`~skillhouse.openapi.references.Spot` is (no ``typing.NamedTuple``)."""

    __slots__ = ()

    def __new__(cls, spec: dict[str, Any], doc: str) -> Param:
        return tuple.__new__(cls, (spec, doc))

    @property
    def spec(self) -> dict[str, Any]:
        return self[0]

    @property
    def doc(self) -> str:
        return self[1]

    def __repr__(self) -> str:
        return f"Param(spec={self[0]!r}, doc={self[1]!r})"


@record
class Field:
    """One value a call sends: where, under which wire name, and its schema."""

    wire: str
    location: str
    """``path``, ``query``, ``header`` or ``body``."""
    schema: Any
    required: bool
    style: str | None = None
    allow_empty: bool = False
    """A query parameter whose empty value is sent (``allowEmptyValue``); others' empty values are not."""
    explode: bool = False
    """A ``matrix`` path parameter whose list items or object properties are each ``;name=value``."""


@record
class Body:
    """The request body: an object's fields, or one value sent whole (``payload``)."""

    encoding: str
    fields: list[Field] = field(default_factory=list)
    payload: Any = None
    """The schema of a body that is not an object with properties."""
    required: bool = False
    content_type: str | None = None
    """The media type of a ``raw`` body."""


def read_parameters(
    conv: SchemaConverter, path_item: dict[str, Any], op: dict[str, Any], item_spot: Spot, op_spot: Spot, notes: list[str]
) -> list[Param]:
    """Path-level then operation-level parameters, dereferenced; the operation's win by (name, in).

    Raises :class:`Unresolved` for a parameter whose reference cannot be followed: without it the
    tool would silently lack an input, perhaps a required one.
    """
    merged: dict[tuple[str, str], Param] = {}
    for level, source, spot in (("path item", path_item.get("parameters"), item_spot), ("operation", op.get("parameters"), op_spot)):
        if source is None:
            continue
        if not isinstance(source, list):
            notes.append("'parameters' is not a list; ignored")
            continue
        for index, raw in enumerate(source):
            # what a parameter is is spelled out only for a reference, which may fail to be followed (with the
            # same for operations, path items and bodies, 0.6% of Jira's import). Its location is still made for
            # each: without it OpenAI's peak RSS was 0.12 MB higher, though nothing was held longer (the heap's layout)
            param_spot = spot.child("parameters", index)
            if isinstance(raw, dict) and "$ref" in raw:
                param, param_spot = conv.spec.follow(raw, param_spot, f"{level} parameter {index + 1}")
            else:
                param = raw
            doc = param_spot.doc
            if not isinstance(param, dict) or not isinstance(param.get("name"), str) or not isinstance(param.get("in"), str):
                ref = f" ($ref {raw['$ref']!r} in {conv.spec.label(spot.doc)})" if isinstance(raw, dict) and "$ref" in raw else ""
                notes.append(f"{level} parameter {index + 1}{ref} has no name or location; ignored")
                continue
            merged[(param["name"], param["in"])] = Param(param, doc)
    return list(merged.values())


# Parameters that carry the caller's credentials under a name APIs use for nothing else. A model must
# never be asked for them: the gateway binds the secret to the host and injects it as a header.
CREDENTIAL_NAMES = frozenset({"token", "access_token", "auth_token", "api_key", "apikey", "api-key", "x-api-key", "authorization"})


def credential_parameters(spec: SpecDocument) -> set[tuple[str, str]]:
    """(location, lower-cased name) of the spec's ``apiKey`` security schemes' parameters (a scheme may be a ``$ref``)."""
    root = spec.root
    schemes = root.get("components", {}).get("securitySchemes") if isinstance(root.get("components"), dict) else None
    schemes = schemes or root.get("securityDefinitions") or {}
    found: set[tuple[str, str]] = set()
    for raw in schemes.values() if isinstance(schemes, dict) else []:
        scheme, _ = spec.deref(raw, "")
        if isinstance(scheme, dict) and scheme.get("type") == "apiKey" and isinstance(scheme.get("name"), str):
            found.add((str(scheme.get("in")), scheme["name"].lower()))
    return found


def drop_credentials(params: list[Param], declared: set[tuple[str, str]], notes: list[str]) -> list[Param]:
    """``params`` without those that carry credentials (an apiKey scheme's, or a credential's name)."""
    kept = []
    for entry in params:
        param = entry.spec
        name = str(param.get("name", ""))
        by_name = param.get("in") != "path" and name.lower() in CREDENTIAL_NAMES  # /tokens/{token} is an id
        if (str(param.get("in")), name.lower()) in declared or by_name:
            notes.append(
                f"{param.get('in')} parameter {name!r} carries a credential: not offered to the model; "
                "bind the secret to the host in the gateway (it is injected as a header)"
            )
            continue
        kept.append(entry)
    return kept


def parameter_field(conv: SchemaConverter, entry: Param, swagger: bool, notes: list[str]) -> Field | None:
    """The field for a path, query or header parameter; ``None`` (noted) for what cannot be sent."""
    param, doc = entry
    name, where = param["name"], param["in"]
    if where == "cookie":
        notes.append(f"cookie parameter {name!r} dropped (cookies are not sent)")
        return None
    if where == "header" and name.lower() in RESERVED_HEADERS:
        notes.append(f"header {name!r} dropped (credentials and framing are set by the gateway)")
        return None
    if where not in ("path", "query", "header"):
        return None
    if swagger:
        schema = conv.convert({k: v for k, v in param.items() if k not in _SWAGGER_META}, doc)
    elif "schema" in param:
        schema = conv.convert(param["schema"], doc)
    elif isinstance(param.get("content"), dict) and param["content"]:
        media = next(iter(param["content"].values()))
        schema = conv.convert(media.get("schema", {}) if isinstance(media, dict) else {}, doc)
    else:
        schema = {"type": "string"}
    schema = _described(schema, param.get("description"))
    required = where == "path" or param.get("required") is True
    style = _query_style(conv, param, schema, swagger, notes) if where == "query" else None
    explode = False
    if where == "path" and param.get("style") == "matrix":
        # the guest writes ';name=value' (lists and objects too) and the gateway accepts that ';' here only
        style, explode = "matrix", param.get("explode") is True
    elif where == "path":
        kind = conv.type_of(schema)
        if isinstance(kind, dict) and kind.get("type") in ("object", "array"):
            notes.append(f"path parameter {name!r} is a {kind['type']}; taken as a string the caller serializes")
            schema = _described({"type": "string"}, param.get("description"))
        if param.get("style") == "label":
            style = "label"  # the guest writes the segment's '.' prefix, as the spec says: not an adaptation
    allow_empty = where == "query" and param.get("allowEmptyValue") is True
    if where == "query" and required and not allow_empty:
        schema = _not_empty(schema)
    return Field(name, where, schema, required, style, allow_empty, explode)


def _not_empty(schema: Any) -> Any:
    """A required query string's schema refusing ``""``: OpenAPI sends no empty value unless ``allowEmptyValue``."""
    if isinstance(schema, dict) and schema.get("type") == "string" and "minLength" not in schema and "enum" not in schema and "const" not in schema:
        return {**schema, "minLength": 1}
    return schema


def _query_style(conv: SchemaConverter, param: JsonObject, schema: Any, swagger: bool, notes: list[str]) -> str | None:
    kind = conv.type_of(schema)
    kind = kind.get("type") if isinstance(kind, dict) else None
    if swagger:
        if kind != "array":
            return None
        fmt = param.get("collectionFormat", "csv")
        return _COLLECTION_STYLES.get(fmt, "comma") if isinstance(fmt, str) else "comma"
    style = param.get("style", "form")
    explode = param.get("explode", style == "form")
    if style == "deepObject":
        return "deepObject"
    if style in ("pipeDelimited", "spaceDelimited") and kind == "array":
        return str(style)
    if style == "form" and explode is False and kind in ("array", "object"):
        return "comma"
    if kind == "object" and style == "form":
        notes.append(f"query object {param['name']!r} (form, exploded) is sent as one parameter per property by the guest")
    return None


def _described(schema: Any, description: Any) -> Any:
    if not isinstance(description, str) or not description or not isinstance(schema, dict) or "description" in schema:
        return schema
    return {**schema, "description": description}


def read_body(conv: SchemaConverter, op: dict[str, Any], params: list[Param], swagger: bool, spot: Spot, consumes: list[Any], notes: list[str]) -> Body | None:
    """The operation's request body, or ``None`` when it sends none; :class:`Unresolved` when its reference fails."""
    if swagger:
        return _swagger_body(conv, params, consumes, notes)
    raw = op.get("requestBody")
    if raw is None:
        return None
    if isinstance(raw, dict) and "$ref" in raw:
        body, body_spot = conv.spec.follow(raw, spot.child("requestBody"), "request body")
        body_doc = body_spot.doc
    else:
        body, body_doc = raw, spot.doc
    if not isinstance(body, dict):
        return None
    required = body.get("required") is True
    content = body.get("content")
    if not isinstance(content, dict) or not content:
        return None
    media_types = {str(k).split(";")[0].strip().lower(): v for k, v in content.items()}
    chosen = _choose(media_types)
    if chosen is None:
        listed = ", ".join(sorted(media_types))[:120]
        if required:
            raise Skip(f"the request body is only offered as {listed}, which is not supported yet")
        notes.append(f"optional request body ({listed}) left out: not supported yet")
        return None
    encoding, media = chosen
    schema = conv.convert(media.get("schema", {}) if isinstance(media, dict) else {}, body_doc)
    if encoding == "raw":
        return _raw_body(conv, schema, media_types, required, notes)
    split = _split_body(conv, schema, encoding, required, notes)
    if encoding == "form" and isinstance(media, dict) and isinstance(media.get("encoding"), dict):
        _deep_form_fields(conv, split, media["encoding"])
    return split


def _deep_form_fields(conv: SchemaConverter, body: Body, encodings: dict[str, Any]) -> None:
    """Form fields the spec encodes as ``deepObject`` that may hold a list: written in brackets, a list's items
    indexed (``expand[0]=a``) as bracket-reading servers (Stripe's) read a list; an object always is."""
    for item in body.fields:
        how = encodings.get(item.wire)
        if isinstance(how, dict) and how.get("style") == "deepObject" and _may_be_list(conv, item.schema):
            item.style = "deepObject"  # as the spec says: not an adaptation, so not a note


def _may_be_list(conv: SchemaConverter, schema: Any) -> bool:
    view = conv.type_of(schema)
    if not isinstance(view, dict):
        return False
    kind = view.get("type")
    if kind == "array" or (isinstance(kind, list) and "array" in kind) or "items" in view:
        return True
    return any(_may_be_list(conv, branch) for key in ("anyOf", "oneOf") for branch in view.get(key) or [] if isinstance(view.get(key), list))


def _raw_body(conv: SchemaConverter, schema: Any, media_types: JsonObject, required: bool, notes: list[str]) -> Body:
    """A body in a media type other than JSON or forms (``image/jpeg``, ``text/plain``): one string sent as is."""
    media_type = next(m for m in media_types if "/" in m and "*" not in m)
    view = conv.type_of(schema)
    described = view.get("description") if isinstance(view, dict) else None
    payload: JsonSchema = {"type": "string"}
    if isinstance(described, str) and described:
        payload["description"] = described
    if isinstance(view, dict) and view.get("format") == "binary":
        notes.append(f"{media_type} body is sent as text (binary upload is not supported yet)")
    notes.append(f"body sent as {media_type} text")
    return Body("raw", [], payload, required, media_type)


def _choose(media_types: JsonObject) -> tuple[str, Any] | None:
    for test, encoding in (
        (lambda m: m == "application/json" or m.endswith("+json"), "json"),
        (lambda m: m == "application/x-www-form-urlencoded", "form"),
        (lambda m: m.startswith("multipart/"), "multipart"),
        (lambda m: m in ("*/*", "application/*", "text/json"), "json"),
        (lambda m: "/" in m and "*" not in m, "raw"),
    ):
        for media_type, media in media_types.items():
            if test(media_type):
                return encoding, media if isinstance(media, dict) else {}
    return None


def _split_body(conv: SchemaConverter, schema: Any, encoding: str, required: bool, notes: list[str]) -> Body:
    view = conv.type_of(schema)
    properties = view.get("properties") if isinstance(view, dict) else None
    if isinstance(properties, dict) and properties and view.get("type", "object") == "object" and not any(
        k in view for k in ("oneOf", "anyOf")
    ):
        wanted = set(view.get("required", []))
        fields = [Field(name, "body", sub, name in wanted) for name, sub in properties.items()]
        if view.get("additionalProperties") not in (None, False):
            notes.append("body properties beyond the listed ones are not offered")
        if encoding == "multipart":
            _files_as_text(conv, fields, notes)
        return Body(encoding, fields, None, required)
    if encoding != "json":
        notes.append(f"{encoding} body has no listed fields; sent as one value")
    return Body(encoding, [], schema, required)


def _files_as_text(conv: SchemaConverter, fields: list[Field], notes: list[str]) -> None:
    for item in fields:
        kind = conv.type_of(item.schema)
        if isinstance(kind, dict) and kind.get("format") == "binary":
            notes.append(f"file part {item.wire!r} is sent as text content (binary file upload is not supported yet)")
        elif isinstance(kind, dict) and kind.get("type") == "array" and isinstance(kind.get("items"), dict) and kind["items"].get("format") == "binary":
            notes.append(f"file parts {item.wire!r} are sent as text content (binary file upload is not supported yet)")


def _swagger_body(conv: SchemaConverter, params: list[Param], consumes: list[Any], notes: list[str]) -> Body | None:
    for param, doc in params:
        if param["in"] == "body":
            schema = conv.convert(param.get("schema", {}), doc)
            return _split_body(conv, schema, "json", param.get("required") is True, notes)
    form = [p for p in params if p.spec["in"] == "formData"]
    if not form:
        return None
    multipart = any(p.spec.get("type") == "file" for p in form) or any(str(c).startswith("multipart/") for c in consumes)
    encoding = "multipart" if multipart else "form"
    fields = []
    for param, doc in form:
        schema = conv.convert({k: v for k, v in param.items() if k not in _SWAGGER_META}, doc)
        fields.append(Field(param["name"], "body", _described(schema, param.get("description")), param.get("required") is True))
    if multipart:
        _files_as_text(conv, fields, notes)
    return Body(encoding, fields, None, any(f.required for f in fields))
