"""Loading a YAML spec straight from libyaml's events, without PyYAML's node graph.

``yaml.load`` first composes every scalar, sequence and mapping into a node object (with marks), then
constructs the data from the nodes, resolving each plain scalar's type with a Python regex walk. For a
Stripe-sized spec that is about 1.5 s and a node graph as large as the data. Here libyaml's C parser
emits events and the data is built from them directly, with the same resolution rules as
:func:`document.spec_loader` (PyYAML's safe loader without timestamps): ``yes``/``on`` are booleans,
``0o17``-style octals, ``1_000`` and sexagesimal ``1:30`` are integers, ``~`` is null. Anything rarer
(an explicit tag other than the core ones, a merge key ``<<``, a key that is a mapping) raises
:class:`Unsupported`, and the caller falls back to PyYAML for that document. A test holds the two
loaders to the same answers on the corpus and on generated documents.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from skillhouse.json_types import JsonObject

_Parser: Any
try:
    from yaml._yaml import CParser as _Parser  # libyaml's parser, as yaml.CSafeLoader uses it
except ImportError:  # pragma: no cover - a PyYAML built without libyaml
    _Parser = None

_BOOL = {
    **dict.fromkeys(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
}
_NULL = frozenset(("~", "null", "Null", "NULL", ""))
_REFUSED = object()
"""A plain scalar left to PyYAML: the merge key ``<<`` and the value key ``=``."""
_SPECIAL: dict[str, Any] = {**_BOOL, **dict.fromkeys(_NULL), "<<": _REFUSED, "=": _REFUSED}
"""Plain scalars that are not strings and do not start like a number: each with what it resolves to."""
_NO_KEY = object()
"""No mapping key waiting for its value (and, for the root, no document yet)."""
_INT = re.compile(
    r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$"
)
_FLOAT = re.compile(
    r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
# PyYAML only tries a resolver whose first characters include the value's first character.
_NUMBER_START = frozenset("-+0123456789.")
_CORE = "tag:yaml.org,2002:"


class Unsupported(Exception):
    """The document uses YAML this loader leaves to PyYAML."""


def _sexagesimal(text: str) -> tuple[int, list[str]]:
    sign = -1 if text[0] == "-" else 1
    if text[0] in "+-":
        text = text[1:]
    return sign, text.split(":")


def _int(text: str) -> int:
    text = text.replace("_", "")
    if ":" in text:
        sign, digits = _sexagesimal(text)
        value = 0
        for part in digits:
            value = value * 60 + int(part)
        return sign * value
    sign = -1 if text[0] == "-" else 1
    if text[0] in "+-":
        text = text[1:]
    if text == "0":
        return 0
    if text.startswith("0b"):
        return sign * int(text[2:], 2)
    if text.startswith("0x"):
        return sign * int(text[2:], 16)
    if text[0] == "0":
        return sign * int(text, 8)
    return sign * int(text)


def _float(text: str) -> float:
    text = text.replace("_", "").lower()
    sign = -1.0 if text[0] == "-" else 1.0
    if text[0] in "+-":
        text = text[1:]
    if text == ".inf":
        return sign * float("inf")
    if text == ".nan":
        return float("nan")
    if ":" in text:
        parts = text.split(":")
        value = 0.0
        for part in parts:
            value = value * 60 + float(part)
        return sign * value
    return sign * float(text)


def _number(value: str) -> Any:
    """A plain scalar that starts like a number: the number it resolves to, or the string itself."""
    if _INT.match(value):
        return _int(value)
    if _FLOAT.match(value):
        return _float(value)
    return value


def _tagged(tag: str, value: str) -> Any:
    if tag == "!" or tag == _CORE + "str":
        return value
    if tag == _CORE + "int" and _INT.match(value):
        return _int(value)
    if tag == _CORE + "float" and (_FLOAT.match(value) or _INT.match(value)):
        return _float(value)
    if tag == _CORE + "bool" and value in _BOOL:
        return _BOOL[value]
    if tag == _CORE + "null" and value in _NULL:
        return None
    raise Unsupported(tag)


def load(text: str | bytes) -> Any:
    """The first document of ``text`` (or of its UTF-8 bytes) as PyYAML's safe loader (without timestamps) would build it.

    Raises :class:`Unsupported` for what it leaves to PyYAML, and ``yaml.YAMLError`` for malformed YAML.
    """
    if _Parser is None:
        raise Unsupported("libyaml is not available")
    parser = _Parser(text)
    anchors: JsonObject = {}
    # One string per distinct text, keys and values alike: json.loads shares its keys, and a spec also
    # repeats values ("string", "object", a shared description) thousands of times. For OpenAI's spec
    # that is a third of its strings' memory, held through the whole import.
    strings: dict[str, str] = {}
    # The open container is held in locals (``into``; for a mapping, ``key`` is the key waiting for its
    # value, or ``_NO_KEY``); the containers around it wait on ``stack``. This loop runs once per event,
    # over 100,000 times for a large spec, so each event is settled with as few steps as it can be.
    stack: list[tuple[Any, Any]] = []
    into: Any = None
    key: Any = _NO_KEY
    root: Any = _NO_KEY
    done = False
    scalar, mapping_start, sequence_start = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
    mapping_end, sequence_end, alias = yaml.MappingEndEvent, yaml.SequenceEndEvent, yaml.AliasEvent
    document_end, stream_end = yaml.DocumentEndEvent, yaml.StreamEndEvent
    next_event, special, number_start, same = parser.get_event, _SPECIAL.get, _NUMBER_START, strings.setdefault
    try:
        while True:
            event = next_event()
            kind = type(event)
            if kind is scalar:
                value = event.value
                if event.tag is not None:
                    value = _tagged(event.tag, value)
                elif event.implicit[0]:
                    # a plain scalar: most are strings; the few words and numbers YAML 1.1 reads otherwise
                    resolved = special(value, value)
                    if resolved is not value:
                        if resolved is _REFUSED:
                            raise Unsupported(value)
                        value = resolved
                    elif value[0] in number_start:
                        value = _number(value)
                if type(value) is str:
                    value = same(value, value)
                if event.anchor is not None:
                    anchors[event.anchor] = value
            elif kind is mapping_start or kind is sequence_start:
                if event.tag is not None and event.tag not in ("!", _CORE + "map", _CORE + "seq"):
                    raise Unsupported(event.tag)
                container: Any = {} if kind is mapping_start else []
                if event.anchor is not None:
                    anchors[event.anchor] = container
                stack.append((into, key))
                into, key = container, _NO_KEY
                continue
            elif kind is mapping_end or kind is sequence_end:
                value = into
                into, key = stack.pop()
            elif kind is alias:
                if event.anchor not in anchors:
                    raise yaml.composer.ComposerError(None, None, f"found undefined alias {event.anchor!r}", event.start_mark)
                value = anchors[event.anchor]
            elif kind is document_end:
                done = True
                break
            elif kind is stream_end:
                break
            else:
                continue  # stream and document starts
            if type(into) is list:
                into.append(value)
            elif key is not _NO_KEY:
                into[key] = value
                key = _NO_KEY
            elif into is None:
                root = value
            else:
                if type(value) is dict or type(value) is list:
                    raise Unsupported("a key that is a mapping or a sequence")
                key = value
        if done and type(next_event()) is not stream_end:
            # PyYAML's load refuses a stream of several documents; let it say so
            raise Unsupported("more than one document")
    finally:
        parser.dispose()
    return None if root is _NO_KEY else root
