"""The compiled forms: an operation's declaration and where each of its arguments goes.

These are plain data; the release document is their JSON form (:func:`operation_document`).
"""

from __future__ import annotations

from skillhouse.records import field, record

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from skillhouse.json_types import JsonObject, JsonSchema, OperationDocument

    Location = Literal["path", "query", "header", "body"]

QUERY_STYLES = ("form", "deepObject", "pipeDelimited", "spaceDelimited", "comma")
PATH_STYLES = ("simple", "label", "matrix")
"""``matrix`` (``;name=value``) is the one raw ``;`` the gateway accepts in a path: at a segment whose
template is that parameter, spelled as it (``gateway/matrix.py``)."""
ENCODINGS = ("json", "form", "multipart", "raw")


@record(frozen=True)
class Argument:
    """One tool argument and where it is sent."""

    name: str
    """The argument name the model uses (a property of the tool's schema)."""
    location: Location
    wire: str
    """The name on the wire: the query parameter, header or body field name."""
    style: str | None = None
    """Query serialization other than repeated ``form``, a form field's ``deepObject``, or a path segment's
    ``label`` prefix (``.5``) or ``matrix`` parameter (``;id=5``); ``None`` for the default."""
    allow_empty: bool = False
    """A query argument sent even when it is the empty string (OpenAPI's ``allowEmptyValue``)."""
    explode: bool = False
    """A ``matrix`` path argument whose list items or object properties are each their own ``;name=value``
    (OpenAPI's ``explode``): ``;id=3;id=4`` rather than ``;id=3,4``."""

    def document(self) -> JsonObject:
        doc: JsonObject = {"name": self.name, "in": self.location, "wire": self.wire}
        if self.style is not None:
            doc["style"] = self.style
        if self.allow_empty:
            doc["allow_empty"] = True
        if self.explode:
            doc["explode"] = True
        return doc


@record(frozen=True)
class OperationDecl:
    """An operation as compiled from its file: everything the guest and gateway need."""

    name: str
    """The file stem: the name the skill lists the operation under (``create_booking``)."""
    tool_name: str
    file: str
    description: str
    prose: str
    method: str
    url: str
    """URL template with ``{param}`` path segments."""
    arguments: tuple[Argument, ...]
    schema: JsonSchema
    """The tool's parameters: one JSON Schema object with every reference expanded."""
    encoding: str = "json"
    headers: dict[str, str] = field(default_factory=dict)
    identity: tuple[str, ...] = ()
    approval: JsonObject | None = None
    payload: str | None = None
    """An argument sent as the whole body (a body that is not an object), or ``None``."""
    content_type: str | None = None
    """With ``encoding: raw``: the media type of the payload, sent as it is (``image/jpeg``)."""
    defaults: JsonObject = field(default_factory=dict)
    """Values sent for optional arguments a call leaves out (``defaults:``; ``curation.yaml``'s ``default``)."""

    def document(self) -> OperationDocument:
        doc: OperationDocument = {
            "name": self.name,
            "tool_name": self.tool_name,
            "file": self.file,
            "description": self.description,
            "prose": self.prose,
            "method": self.method,
            "url": self.url,
            "arguments": [a.document() for a in self.arguments],
            "schema": self.schema,
            "encoding": self.encoding,
            "headers": dict(self.headers),
            "identity": list(self.identity),
            "approval": self.approval,
        }
        if self.payload is not None:
            doc["payload"] = self.payload
        if self.content_type is not None:
            doc["content_type"] = self.content_type
        if self.defaults:
            doc["defaults"] = dict(self.defaults)
        return doc
