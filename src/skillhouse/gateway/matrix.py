"""Matrix path parameters (OpenAPI ``style: matrix``): the only raw ``;`` a request's path may hold.

A raw ``;`` is refused in a path (``path-parameter``, ``compiler/url_form.py``) because servers that
strip ``;parameters`` would route ``/charges;x=1`` to ``/charges``, past what the gateway decided on.
An operation that declares a matrix parameter needs one, so a ``;`` is accepted at exactly such a
segment of the operation the request is matched to, and only spelled as that parameter, the way the
guest writes it (``guest/translation.py``, RFC 6570 ``{;name}`` and ``{;name*}``):

- the segment starts with ``;``: ``;id=5``, never ``5;id=5`` nor ``..;id=5`` (a server that strips
  parameters must see an empty segment there, not another resource);
- not exploded: one ``;name`` or ``;name=value``, the declared wire name;
- exploded: ``;name=value`` repeated, each with the declared name (an object's ``;key=value``: its keys);
- a value holds no raw ``;`` or ``=`` (the guest percent-encodes them), and an exploded one no raw ``,``
  either: a value never spells another parameter.

The value kept for matching and identity keys (``Match.path``): a single ``;name=value`` without a raw
``,`` is its value percent-decoded (``;id=5`` is ``"5"``, ``;id`` is ``""``), as a ``simple`` segment is;
any other spelling (a list or an object, ``;id=3,4``) is the canonical segment itself, never decoded,
since decoding would make ``;id=a%2Cb`` (one item) and ``;id=a,b`` (two) the same value.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, unquote

from skillhouse.json_types import OperationDocument


@dataclass(frozen=True)
class MatrixParameter:
    """A path argument of style ``matrix``, as the gateway reads its segment."""

    wire: str
    """The name written before ``=`` (``;id=5``), percent-encoded as the guest writes it (``;a%5Bb%5D=5``)."""
    explode: bool
    keyed: bool
    """Exploded and possibly an object: each ``;key=value`` is named by a key, not the wire name."""


def matrix_parameters(document: OperationDocument) -> dict[str, MatrixParameter]:
    """The operation's matrix path arguments, by the name its URL template gives them (``{id}``)."""
    properties = (document.get("schema") or {}).get("properties") or {}
    out: dict[str, MatrixParameter] = {}
    for argument in document.get("arguments", []):
        if argument.get("in") != "path" or argument.get("style") != "matrix":
            continue
        name, explode = str(argument["name"]), bool(argument.get("explode"))
        declared = properties.get(name, {}).get("type") if isinstance(properties.get(name), dict) else None
        may_be_object = declared is None or declared == "object" or (isinstance(declared, list) and "object" in declared)
        wire = quote(str(argument.get("wire", name)), safe="")  # as the guest writes it, in canonical form
        out[name] = MatrixParameter(wire, explode, explode and may_be_object)
    return out


def matrix_value(segment: str, parameter: MatrixParameter) -> str | None:
    """The value ``segment`` carries as ``parameter`` (see the module docstring), or ``None`` when it is not
    spelled as that parameter."""
    if not segment.startswith(";"):
        return None
    pieces = segment[1:].split(";")
    if not parameter.explode and len(pieces) != 1:
        return None
    for piece in pieces:
        name, equals, value = piece.partition("=")
        if not name or "," in name or "=" in value or (parameter.explode and "," in value):
            return None
        if name != parameter.wire and not parameter.keyed:
            return None
    (name, equals, value), single = pieces[0].partition("="), len(pieces) == 1
    if single and name == parameter.wire and "," not in value:
        if equals and not value:
            return segment  # ';id=': a list of one empty item, not the empty value (';id')
        return unquote(value)
    return segment


def without_parameters(path: str) -> str:
    """``path`` as a server that strips ``;parameters`` reads it: each segment cut at its ``;``, and the
    segments left empty dropped (such servers also merge the ``//`` that would leave)."""
    segments = [segment.split(";", 1)[0] for segment in path.split("/")]
    kept = [segments[0], *(s for s in segments[1:-1] if s), segments[-1]] if len(segments) > 1 else segments
    return "/".join(kept) if len(kept) > 1 else "/"
