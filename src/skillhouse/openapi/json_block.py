"""Indented ASCII JSON text for the files the wizard writes, as ``json.dumps(..., indent=1, ensure_ascii=True)``.

The standard library encodes indented JSON in pure Python (its C encoder is used only without
``indent``), one generator per container; the schema blocks and ``types.json`` were a large share of
rendering. This writes the same text with one call per container and the C string escaper. Anything
it is not sure to write byte for byte as ``json.dumps`` would (a key that is not a string, a value
of another type, nesting deeper than :data:`_MAX_DEPTH`, which also catches cycles) is handed to
``json.dumps`` itself, so the result, and any error, is always exactly the standard library's.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_MAX_DEPTH = 200
_INFINITY = float("inf")


class _Unsure(Exception):
    pass


def indented_json(value: Any, *, sort_keys: bool = False, end: str = "") -> str:
    """``json.dumps(value, indent=1, ensure_ascii=True, sort_keys=sort_keys) + end``.

    ``end`` is joined with the rest: added afterwards, it would copy a text that can be a megabyte.
    """
    out: list[str] = []
    try:
        if type(value) is dict and value:
            _members(value, sort_keys, out)
        else:
            _value(value, "", sort_keys, out)
    except (_Unsure, TypeError):  # TypeError: keys that do not sort
        return json.dumps(value, indent=1, ensure_ascii=True, sort_keys=sort_keys) + end
    out.append(end)
    return "".join(out)


def _members(value: dict[Any, Any], sort_keys: bool, out: list[str]) -> None:
    """A top-level object, as :func:`_object` writes it, with each member's pieces joined before the next.

    The pieces of a whole ``types.json`` (fifty thousand for OpenAI's spec) held at once took
    more memory than its text, at the end of an import, where its peak is.
    """
    out.append("{\n ")
    for index, key in enumerate(sorted(value) if sort_keys else value):
        if type(key) is not str:
            raise _Unsure
        member = [(",\n " if index else "") + encode_basestring_ascii(key) + ": "]
        _value(value[key], " ", sort_keys, member)
        out.append("".join(member))
    out.append("\n}")


def _value(value: Any, indent: str, sort_keys: bool, out: list[str]) -> None:
    kind = type(value)
    if kind is dict:
        _object(value, indent, sort_keys, out)
    elif kind is list:
        _array(value, indent, sort_keys, out)
    else:
        out.append(_scalar(value, kind))


def _scalar(value: Any, kind: type) -> str:
    if kind is str:
        return str(encode_basestring_ascii(value))
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if value != value:
            return "NaN"
        if value == _INFINITY:
            return "Infinity"
        if value == -_INFINITY:
            return "-Infinity"
        return float.__repr__(value)
    raise _Unsure


def _object(value: dict[Any, Any], indent: str, sort_keys: bool, out: list[str]) -> None:
    if not value:
        out.append("{}")
        return
    if len(indent) >= _MAX_DEPTH:
        raise _Unsure
    inner = indent + " "
    separator = ",\n" + inner
    out.append("{\n" + inner)
    keys = sorted(value) if sort_keys else value
    first = True
    for key in keys:
        if type(key) is not str:
            raise _Unsure
        if not first:
            out.append(separator)
        first = False
        out.append(encode_basestring_ascii(key) + ": ")
        item = value[key]
        kind = type(item)
        if kind is dict:
            _object(item, inner, sort_keys, out)
        elif kind is list:
            _array(item, inner, sort_keys, out)
        else:
            out.append(_scalar(item, kind))
    out.append("\n" + indent + "}")


def _array(value: list[Any], indent: str, sort_keys: bool, out: list[str]) -> None:
    if not value:
        out.append("[]")
        return
    if len(indent) >= _MAX_DEPTH:
        raise _Unsure
    inner = indent + " "
    separator = ",\n" + inner
    out.append("[\n" + inner)
    first = True
    for item in value:
        if not first:
            out.append(separator)
        first = False
        kind = type(item)
        if kind is dict:
            _object(item, inner, sort_keys, out)
        elif kind is list:
            _array(item, inner, sort_keys, out)
        else:
            out.append(_scalar(item, kind))
    out.append("\n" + indent + "]")
