"""Turning a validated call into the request its declaration describes: ``{method, url, headers, body}``.

The rules (README.md, "How a call travels"): path parameters fill whole segments, percent-encoded
(everything but unreserved characters, so ``? # %``, spaces and non-ASCII are encoded) with ``.``,
``..``, empty, and values holding ``/``, ``\\`` or control characters refused (the gateway refuses
them encoded in a path: servers disagree on them), behind a ``.`` for the ``label`` style; a
``matrix`` path argument is its segment ``;name=value`` (RFC 6570 ``{;name}``, ``{;name*}`` when
``explode``: :func:`matrix_segment`); query parameters in declaration order, lists
repeated unless a ``style`` says otherwise (a delimited list's items cannot hold its separator), an
optional one that is the empty string left out unless ``allow_empty`` names it; an optional argument the
call leaves out takes the operation's ``defaults`` value when it has one; numbers in JSON
notation, booleans ``true``/``false``; a body only when the operation
has body arguments (never for GET and HEAD), with the Content-Type its ``encoding`` implies; fixed
``headers:`` added. Absent optional arguments are not sent. Everything deterministic, so the same call
gives the same bytes (the gateway's approval commitment is over those bytes).

Standard library only: this runs inside the WebAssembly guest.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any
from urllib.parse import quote, quote_plus

from skillhouse.errors import CallerError
from skillhouse.guest.validation import Violation, json_path, validate
from skillhouse.guest.values import FetchRequest, JsonObject, OperationDocument, made_encoder

NO_BODY = ("GET", "HEAD")
_NO_BODY = object()
_STYLE_SEPARATOR = {"comma": ",", "pipeDelimited": "|", "spaceDelimited": " "}
_CONTENT_TYPES = {"json": "application/json", "form": "application/x-www-form-urlencoded"}
_SCALARS = (str, int, float)
_compact = made_encoder((",", ":"), sort_keys=True, allow_nan=False)
"""``json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False)``."""


class InvalidArguments(CallerError):
    """The call cannot be sent (``invalid-arguments``); :attr:`violations` says every reason, and nothing was sent.
    The model fixes them all and calls again."""

    code = "invalid-arguments"

    def __init__(self, violations: list[Violation]) -> None:
        super().__init__(f"{len(violations)} violation(s)")
        self.violations = violations

    def document(self, tool: str) -> dict[str, Any]:
        count = len(self.violations)
        return {
            "error": {
                "code": self.code,
                "message": f"{tool} was not called: {count} problem{'s' if count != 1 else ''} with its arguments; "
                "fix them all and call again",
                "violations": [v.document() for v in self.violations],
            }
        }


def build_request(operation: OperationDocument, arguments: Any) -> FetchRequest:
    """The request for calling ``operation`` (a release operation document) with ``arguments``.

    Raises :class:`InvalidArguments` listing every violation; nothing partial is ever returned.
    """
    defaults = operation.get("defaults")
    if defaults and isinstance(arguments, dict):
        # the skill's defaults (curation.yaml's ``default``) fill what the call leaves out, then are checked like it
        arguments = {**{k: v for k, v in defaults.items() if k not in arguments}, **arguments}
    try:
        violations = validate(operation["schema"], arguments)
        if isinstance(arguments, dict):
            # the wire's reason replaces the schema's for the same value (the schema publishes the
            # same limit, ``compiler/wire_limits.py``, as minLength or a pattern)
            wire = _wire_violations(operation, arguments)
            if wire:
                flagged = {v.path for v in wire}
                violations = [v for v in violations if v.path not in flagged] + wire
        floats = _floats_in(arguments)
        if floats == _NON_FINITE:
            violations += _non_finite(arguments, "$")
    except RecursionError:
        violations = [Violation("$", "too-deep", "arguments nested less deeply")]
    if violations:
        raise InvalidArguments(violations)
    return _translate(operation, arguments, floats)


def translate(operation: OperationDocument, arguments: JsonObject) -> FetchRequest:
    """The request for ``arguments``, which must already be valid for the operation's schema."""
    return _translate(operation, arguments, _floats_in(arguments))


def _translate(operation: OperationDocument, arguments: JsonObject, floats: int) -> FetchRequest:
    method = str(operation["method"]).upper()
    if floats != _NO_FLOATS:
        # whole floats print as integers (2, not 2.0); done once here, so encoders need not
        arguments = normalized(arguments)
    by_location: dict[str, list[JsonObject]] = {"path": [], "query": [], "header": [], "body": []}
    for argument in operation["arguments"]:
        by_location[argument["in"]].append(argument)

    url = str(operation["url"])
    for argument in by_location["path"]:
        value = arguments[argument["name"]]
        if argument.get("style") == "matrix":
            segment = matrix_segment(str(argument["wire"]), value, bool(argument.get("explode")))
        else:
            segment = quote(scalar_text(value), safe="")
            if argument.get("style") == "label":
                segment = "." + segment
        url = url.replace("{" + argument["name"] + "}", segment)
    pairs: list[str] = []
    required = (operation.get("schema") or {}).get("required") or ()
    for argument in by_location["query"]:
        value = arguments.get(argument["name"])
        if value is None or (value == "" and argument["name"] not in required and not argument.get("allow_empty")):
            continue  # an optional empty value is not sent, unless the parameter allows empty values
        pairs.extend(_query_pairs(argument["wire"], value, argument.get("style")))
    if pairs:
        url += ("&" if "?" in url else "?") + "&".join(pairs)

    headers: dict[str, str] = dict(operation.get("headers") or {})
    for argument in by_location["header"]:
        value = arguments.get(argument["name"])
        if value is not None:
            headers[argument["wire"]] = (
                ",".join(scalar_text(v) for v in value) if isinstance(value, list) else scalar_text(value)
            )

    body: str | None = None
    fields = _body_fields(operation, by_location["body"], arguments)
    if method not in NO_BODY and fields is not _NO_BODY:
        encoding = operation.get("encoding") or "json"
        if encoding == "raw":
            # a string payload sent as it is, under the media type the operation declares
            body, content_type = str(arguments[operation["payload"]]), str(operation["content_type"])
        elif encoding == "multipart":
            body, content_type = _multipart(fields)
        elif encoding == "form":
            deep = {a["wire"] for a in by_location["body"] if a.get("style") == "deepObject"}
            body, content_type = _form(fields, deep), _CONTENT_TYPES["form"]
        else:
            # fields come from the arguments, normalized above: json_text's own check is not needed
            body, content_type = _compact(fields), _CONTENT_TYPES["json"]
        headers["Content-Type"] = content_type
    return {"method": method, "url": url, "headers": headers, "body": body}


def _wire_violations(operation: JsonObject, arguments: JsonObject) -> list[Violation]:
    out: list[Violation] = []
    for argument in operation["arguments"]:
        value = arguments.get(argument["name"])
        location = argument["in"]
        if location == "body":
            continue  # the wire limits nothing in a body: the encoder writes any JSON value
        if location == "path" and argument.get("style") == "matrix":
            if argument["name"] in arguments and not _matrix_sendable(value, bool(argument.get("explode"))):
                out.append(
                    Violation(
                        json_path("$", argument["name"]),
                        "invalid-path-segment",
                        "values and keys without '/', '\\' or control characters; a list or an object not empty, "
                        "of scalars (not lists or objects)"
                        + ("; keys not empty" if argument.get("explode") else ""),
                    )
                )
        elif location == "path" and isinstance(value, _SCALARS) and not isinstance(value, bool):
            text = scalar_text(value)
            if text in ("", ".", "..") or any(c in "/\\" or ord(c) < 0x20 or ord(c) == 0x7F for c in text):
                out.append(
                    Violation(
                        json_path("$", argument["name"]),
                        "invalid-path-segment",
                        "a value other than '', '.' or '..', without '/', '\\' or control characters",
                    )
                )
        elif location == "query" and isinstance(value, list):
            separator = _STYLE_SEPARATOR.get(argument.get("style") or "")
            if separator is not None and any(isinstance(v, str) and separator in v for v in value):
                # the server splits the joined list on the separator, whatever its encoding
                out.append(
                    Violation(
                        json_path("$", argument["name"]),
                        "separator-in-item",
                        f"items without {separator!r}, which separates them on the wire",
                    )
                )
        elif location == "header":
            values = value if isinstance(value, list) else [value]
            if any(isinstance(v, str) and not _header_text(v) for v in values):
                out.append(
                    Violation(
                        json_path("$", argument["name"]),
                        "invalid-header-value",
                        "printable ASCII text without line breaks or control characters",
                    )
                )
    return out


def matrix_segment(wire: str, value: Any, explode: bool) -> str:
    """A ``matrix`` path argument's segment, as OpenAPI writes it: ``;id=5``, ``;id`` for the empty
    string; a list ``;id=3,4`` (exploded ``;id=3;id=4``); an object ``;id=role,admin,name,Alex``
    (exploded ``;role=admin;name=Alex``, keys in sorted order). Every name, key and value is
    percent-encoded, so a ``;``, ``=``, ``,`` or ``/`` inside one never spells another parameter or segment."""
    name = quote(wire, safe="")
    if isinstance(value, list):
        items = [_matrix_text(item) for item in value]
        if explode:
            return "".join(f";{name}={item}" if item else f";{name}" for item in items)
        return f";{name}=" + ",".join(items)
    if isinstance(value, dict):
        pairs = [(quote(key, safe=""), _matrix_text(value[key])) for key in sorted(value)]
        if explode:
            return "".join(f";{key}={text}" if text else f";{key}" for key, text in pairs)
        return f";{name}=" + ",".join(f"{key},{text}" for key, text in pairs)
    text = _matrix_text(value)
    return f";{name}={text}" if text else f";{name}"


def _matrix_text(value: Any) -> str:
    """One item, property value or primitive of a matrix argument, percent-encoded (a nested one as JSON)."""
    return quote(json_text(value) if isinstance(value, list | dict) else scalar_text(value), safe="")


def _matrix_sendable(value: Any, explode: bool) -> bool:
    """Whether a matrix argument's segment can be sent: no text the gateway refuses in a path (``/``,
    ``\\``, control characters, even encoded), a list or object with something to write, an exploded
    object's keys not empty (``;=5`` names nothing)."""
    members = value if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else [value]
    if isinstance(value, list | dict) and any(isinstance(member, list | dict) for member in members):
        return False  # RFC 6570 writes a list's items and an object's values as text, nothing deeper
    try:
        texts = [json_text(v) if isinstance(v, list | dict) else scalar_text(v) for v in members]
    except ValueError:  # NaN or an infinity: refused as not-a-json-number
        return True
    if isinstance(value, dict):
        texts += list(value)
        if explode and "" in value:
            return False
    if isinstance(value, list | dict) and not value:
        return False
    return not any(c in "/\\" or ord(c) < 0x20 or ord(c) == 0x7F for text in texts for c in text)


def _header_text(text: str) -> bool:
    """What the gateway accepts in a header value: printable ASCII, space and tab."""
    return all(c == "\t" or 0x20 <= ord(c) < 0x7F for c in text)


_NO_FLOATS, _FINITE, _NON_FINITE = 0, 1, 2


def _floats_in(value: Any) -> int:
    """Whether ``value`` holds floats (which need normalizing) and whether any is NaN or infinite."""
    found = _NO_FLOATS
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind is str or kind is int:  # most of what arguments hold: settled by their exact type
            continue
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                return _NON_FINITE
            found = _FINITE
    return found


def _non_finite(value: Any, path: str) -> list[Violation]:
    """NaN and infinities, which Python reads but JSON has no notation for."""
    if isinstance(value, float) and not math.isfinite(value):
        return [Violation(path, "not-a-json-number", "a finite number")]
    if isinstance(value, list):
        return [v for index, item in enumerate(value) for v in _non_finite(item, json_path(path, index))]
    if isinstance(value, dict):
        return [v for key, item in value.items() for v in _non_finite(item, json_path(path, str(key)))]
    return []


def _body_fields(
    operation: JsonObject, body_args: list[JsonObject], arguments: JsonObject
) -> Any:
    """The body value before encoding, or ``_NO_BODY``.

    A JSON payload that is ``null`` is sent as ``null`` when the body is required (its schema allowed
    it); an optional one that is ``null`` is taken as left out.
    """
    payload = operation.get("payload")
    if payload is not None:
        value = arguments.get(payload)
        if value is None and not (payload in ((operation.get("schema") or {}).get("required") or ()) and (operation.get("encoding") or "json") == "json"):
            return _NO_BODY
        return value
    if not body_args:
        return _NO_BODY
    return {a["wire"]: arguments[a["name"]] for a in body_args if a["name"] in arguments}


def normalized(value: Any) -> Any:
    """``value`` with whole floats as integers, so numbers print in JSON notation (``2``, not ``2.0``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, list):
        return [normalized(v) for v in value]
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items()}
    return value


def json_text(value: Any) -> str:
    """Compact JSON with sorted keys: the same value always gives the same bytes."""
    if _floats_in(value) != _NO_FLOATS:
        value = normalized(value)
    return _compact(value)


def scalar_text(value: Any) -> str:
    """A scalar as it appears in a URL, header or form field: strings as they are, the rest as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("not a JSON number")
    return json_text(value)


def _query_pairs(wire: str, value: Any, style: str | None) -> list[str]:
    key = quote(wire, safe="")
    if isinstance(value, dict):
        # deepObject is the only meaningful style for an object; use it whatever was declared
        return [f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in _flatten(wire, value)]
    if isinstance(value, list):
        items = [scalar_text(v) if not isinstance(v, list | dict) else json_text(v) for v in value]
        separator = _STYLE_SEPARATOR.get(style or "")
        if separator is not None:
            return [f"{key}={quote(separator.join(items), safe=',')}"] if items else []
        return [f"{key}={quote(item, safe='')}" for item in items]
    return [f"{key}={quote(scalar_text(value), safe='')}"]


def _flatten(prefix: str, value: Any) -> list[tuple[str, str]]:
    """Bracket notation for nested values, as Stripe and deepObject read it: ``a[b]=c``, ``a[0][b]=c``."""
    if isinstance(value, dict):
        out: list[tuple[str, str]] = []
        for key in sorted(value):
            out.extend(_flatten(f"{prefix}[{key}]", value[key]))
        return out
    if isinstance(value, list):
        return [pair for index, item in enumerate(value) for pair in _flatten(f"{prefix}[{index}]", item)]
    # an explicit null is sent empty, which form-reading APIs such as Stripe take as "unset"
    return [(prefix, "" if value is None else scalar_text(value))]


def _form_pairs(fields: Any, deep: set[str] | frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    if not isinstance(fields, dict):
        return [("value", scalar_text(fields))]
    pairs: list[tuple[str, str]] = []
    for wire, value in fields.items():
        if wire in deep:
            pairs.extend(_flatten(wire, value))  # deepObject: brackets throughout, a list's items indexed
        elif isinstance(value, list) and not any(isinstance(v, list | dict) for v in value):
            # a top-level list of scalars is repeated (OpenAPI's form default); a wire name such as
            # ``expand[]`` gives Stripe's spelling
            pairs.extend((wire, "" if v is None else scalar_text(v)) for v in value)
        else:
            pairs.extend(_flatten(wire, value))
    return pairs


def _form(fields: Any, deep: set[str] | frozenset[str] = frozenset()) -> str:
    return "&".join(f"{quote_plus(k, safe='*')}={quote_plus(v, safe='*')}" for k, v in _form_pairs(fields, deep))


def _multipart(fields: Any) -> tuple[str, str]:
    parts: list[tuple[str, str, str | None]] = []
    items = fields.items() if isinstance(fields, dict) else [("value", fields)]
    for wire, value in items:
        values = (
            value
            if isinstance(value, list) and not any(isinstance(v, list | dict) for v in value)
            else [value]
        )
        for item in values:
            if isinstance(item, dict | list):
                parts.append((wire, json_text(item), "application/json"))
            else:
                parts.append((wire, "" if item is None else scalar_text(item), None))
    content = "\n".join(f"{name}\n{text}" for name, text, _ in parts)
    # derived from the content, so the same call gives the same bytes, and checked not to occur in it
    counter = 0
    while True:
        boundary = "skillhouse-" + hashlib.sha256(f"{counter}:{content}".encode()).hexdigest()[:24]
        if boundary not in content:
            break
        counter += 1
    chunks: list[str] = []
    for name, text, part_type in parts:
        escaped = name.replace("\\", "\\\\").replace('"', '\\"')
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{escaped}"\r\n'
        if part_type is not None:
            head += f"Content-Type: {part_type}\r\n"
        chunks.append(f"{head}\r\n{text}\r\n")
    body = "".join(chunks) + f"--{boundary}--\r\n"
    return body, f"multipart/form-data; boundary={boundary}"
