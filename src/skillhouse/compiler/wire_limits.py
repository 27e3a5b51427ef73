"""What translation can send, said in each argument's schema, so a schema-valid call always becomes a request.

The guest refuses values the wire cannot carry unambiguously (``guest/translation.py``): a path
segment that is empty, ``.`` or ``..`` or holds ``/``, ``\\`` or a control character; a header value
outside printable ASCII and tab; an item of a comma-, pipe- or space-delimited query list holding its
separator; a ``matrix`` path argument's texts (value, list items, object keys and values) holding ``/``,
``\\`` or a control character, and its list or object when empty (it would write no segment); and a required query list, or a required list or object of a form body (a list of a
multipart body), or a required raw payload, cannot be empty, since an empty one sends nothing and the
server reads it as absent. Each of these rules is published in the tool's schema here, so a model (and any client
reading the schema) knows it before calling. The constraints are written with ``not`` and unanchored
patterns: ``$`` in a pattern lets a final line break through in Python's regular expressions (the
``jsonschema`` library's), though not in ECMA-262's, and the two must agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SEGMENT_FORBIDDEN = "[/\\\\\\u0000-\\u001f\\u007f]"
"""A character a path segment cannot hold: ``/``, ``\\`` or a control character."""
HEADER_FORBIDDEN = "[^\\t\\u0020-\\u007e]"
"""A character a header value cannot hold: anything but printable ASCII and tab."""
SEPARATORS = {"comma": ",", "pipeDelimited": "\\|", "spaceDelimited": " "}
"""Each delimited query style's separator, as a pattern. These patterns read the same in Python's ``re``
and in ECMA-262 (unanchored, ``\\uXXXX`` escapes), so the compiler checks fixed values with them too."""
_TEXTUAL = frozenset({"string"})


def wire_limited(
    schema: dict[str, Any],
    path: list[str],
    header: list[str],
    styles: dict[str, Any],
    query: Sequence[str] = (),
    body: Sequence[str] = (),
    encoding: str = "json",
    payload: str | None = None,
    matrix: Sequence[str] = (),
) -> dict[str, Any]:
    """``schema`` (a tool's expanded root) with the wire's limits added to its path, header, delimited
    and required list query arguments; the other properties are the same objects."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    out = dict(properties)
    listed = schema.get("required")
    required: list[Any] = listed if isinstance(listed, list) else []
    for name in query:
        if name in out and name in required and _types(out[name]) == {"array"}:
            out[name] = _at_least_one(out[name], "minItems")
    for name in body if encoding in ("form", "multipart") else ():
        if name in out and name in required:
            if _types(out[name]) == {"array"}:
                out[name] = _at_least_one(out[name], "minItems")
            elif _types(out[name]) == {"object"} and encoding == "form":
                out[name] = _at_least_one(out[name], "minProperties")
    if encoding == "raw" and payload in out and payload in required and _types(out[payload]) == {"string"}:
        out[payload] = _at_least_one(out[payload], "minLength")
    for name in path:
        if name in out:
            out[name] = _segment(out[name])
    for name in matrix:
        if name in out:
            out[name] = _matrix(out[name])
    for name in header:
        if name in out:
            out[name] = _each(out[name], lambda node: _excluding(node, HEADER_FORBIDDEN))
    for name, style in styles.items():
        separator = SEPARATORS.get(str(style))
        if name in out and separator is not None and _types(out[name]) == {"array"}:
            out[name] = {**out[name], "items": _excluding(out[name].get("items", True), separator)}
    if out == properties:
        return schema
    return {**schema, "properties": out}


def _at_least_one(node: dict[str, Any], keyword: str) -> dict[str, Any]:
    low = node.get(keyword)
    if isinstance(low, int) and not isinstance(low, bool) and low >= 1:
        return node
    return {**node, keyword: 1}


def _types(node: Any) -> set[str] | None:
    """The node's declared types, or ``None`` when it allows any type."""
    if not isinstance(node, dict) or "type" not in node:
        return None
    declared = node["type"]
    if isinstance(declared, str):
        return {declared}
    return {t for t in declared if isinstance(t, str)} if isinstance(declared, list) else None


def _may_need(node: Any, fine: Callable[[str], bool]) -> bool:
    """Whether ``node`` allows a string that is not ``fine`` (its type and fixed values say otherwise)."""
    if node is False:
        return False
    types = _types(node)
    if types is not None and not types & _TEXTUAL:
        return False
    if isinstance(node, dict):
        fixed = node["enum"] if isinstance(node.get("enum"), list) else [node["const"]] if "const" in node else None
        if fixed is not None and all(fine(v) for v in fixed if isinstance(v, str)):
            return False
    return True


def _fine_segment(text: str) -> bool:
    return text not in ("", ".", "..") and re.search(SEGMENT_FORBIDDEN, text) is None


def _segment(node: Any) -> Any:
    """A path argument: at least one character, not a dot segment, no separator or control character."""
    if not _may_need(node, _fine_segment):
        return node
    base: dict[str, Any] = dict(node) if isinstance(node, dict) else {}
    low = base.get("minLength")
    if not isinstance(low, int) or isinstance(low, bool) or low < 1:
        base["minLength"] = 1
    return _not(base, {"anyOf": [{"enum": [".", ".."]}, {"type": "string", "pattern": SEGMENT_FORBIDDEN}]})


def _matrix(node: Any) -> Any:
    """A matrix path argument: ``;id`` carries the empty string and dots, but no text of it may hold a
    separator or control character; a list's items and an object's values are scalars (RFC 6570 writes
    nothing deeper), its keys not empty, and a list or object has an item to write. ``items`` and the
    object keywords bind only values of their type, so they are added whenever the type allows one."""
    if not isinstance(node, dict) and node is not True:
        return node
    base: dict[str, Any] = dict(node) if isinstance(node, dict) else {}
    types = _types(base)
    if types is None or "array" in types:
        base["items"] = _matrix_member(base.get("items", True))
        base = _at_least_one(base, "minItems")
    if types is None or "object" in types:
        base = _at_least_one(base, "minProperties")
        names = base.get("propertyNames", True)
        base["propertyNames"] = _at_least_one(_excluding(names if isinstance(names, dict) else {"type": "string"},
                                                         SEGMENT_FORBIDDEN), "minLength")  # fmt: skip
        if isinstance(base.get("properties"), dict):
            base["properties"] = {k: _matrix_member(v) for k, v in base["properties"].items()}
        if base.get("additionalProperties", True) is not False:
            base["additionalProperties"] = _matrix_member(base.get("additionalProperties", True))
    return _excluding(base, SEGMENT_FORBIDDEN)


def _matrix_member(node: Any) -> Any:
    """An item or property value of a matrix argument: a scalar whose text a path segment can hold."""
    node = _excluding(node, SEGMENT_FORBIDDEN)
    types = _types(node)
    if (not isinstance(node, dict) and node is not True) or (types is not None and not types & {"array", "object"}):
        return node
    return _not(dict(node) if isinstance(node, dict) else {}, {"type": ["array", "object"]})


def _excluding(node: Any, forbidden: str) -> Any:
    """``node``, whose strings may not hold a character matching ``forbidden``."""
    if not _may_need(node, lambda text: re.search(forbidden, text) is None):
        return node
    base: dict[str, Any] = dict(node) if isinstance(node, dict) else {}
    return _not(base, {"type": "string", "pattern": forbidden})


def _each(node: Any, limit: Callable[[Any], Any]) -> Any:
    """``limit`` applied to ``node``, and to its items when it is a list (a header list is joined)."""
    types = _types(node)
    if types is not None and "array" in types:
        node = {**node, "items": limit(node.get("items", True))}
    return limit(node)



def _not(base: dict[str, Any], excluded: dict[str, Any]) -> dict[str, Any]:
    """``base`` that also refuses what ``excluded`` describes (``not A`` and ``not B`` is ``not (A or B)``)."""
    if "not" in base:
        excluded = {"anyOf": [base["not"], excluded]}
    return {**base, "not": excluded}
