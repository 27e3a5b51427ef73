"""Values and violations: JSON types and equality as jsonschema counts them, paths, and what a schema expects.

Standard library only: this runs inside the WebAssembly guest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

# The names skillhouse.json_types gives the JSON that crosses layers, for the guest's annotations: the
# guest is built into the component with nothing else of skillhouse, so it keeps its own copies
# (tests/guest/test_json_names.py checks they are the same types).
JsonObject: TypeAlias = dict[str, Any]
JsonSchema: TypeAlias = dict[str, Any]
OperationDocument: TypeAlias = dict[str, Any]
ToolDefinition: TypeAlias = dict[str, Any]
FetchRequest: TypeAlias = dict[str, Any]
ChatMessage: TypeAlias = dict[str, Any]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def made_encoder(separators: tuple[str, str], sort_keys: bool, allow_nan: bool) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, separators=..., sort_keys=..., allow_nan=...)``, with CPython's C
    encoder made once: ``json.dumps`` and ``JSONEncoder.encode`` make one per call, which was most of the
    cost of encoding a small answer (in the WebAssembly guest too). The guest encodes decoded JSON and
    values built from it, so the check for circular references is left out."""
    encoder = json.JSONEncoder(ensure_ascii=False, separators=separators, sort_keys=sort_keys, allow_nan=allow_nan)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - a Python built without the _json accelerator
        return encoder.encode
    item_separator, key_separator = separators
    encode = make(None, encoder.default, json.encoder.encode_basestring, None, key_separator, item_separator,
                  sort_keys, False, allow_nan)  # fmt: skip
    return lambda value: "".join(encode(value, 0))


json_dump = made_encoder((", ", ": "), sort_keys=False, allow_nan=True)
"""``json.dumps(value, ensure_ascii=False)``: every such text of the guest."""


@dataclass(frozen=True)
class Violation:
    """One reason a call cannot be sent: where (JSON path), what (a stable code), and what was expected."""

    path: str
    problem: str
    expected: str

    def document(self) -> dict[str, str]:
        return {"path": self.path, "problem": self.problem, "expected": self.expected}


def json_path(parent: str, key: str | int) -> str:
    """``$.a.b[0]``; keys that are not identifiers are quoted: ``$["include[]"]``."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if _IDENTIFIER.match(key):
        return f"{parent}.{key}"
    # JSON string notation, not repr(): repr depends on the interpreter's Unicode database
    return parent + "[" + json_dump(key) + "]"


json_type_names: dict[type, str] = {type(None): "null", bool: "boolean", int: "integer", str: "string", list: "array", dict: "object"}
"""The JSON type names of the exact types decoded JSON is made of (floats need a look at their value)."""


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value (``integer`` for whole numbers, as jsonschema counts them)."""
    name = json_type_names.get(type(value))
    if name is not None:
        return name
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def has_type(value: Any, name: str) -> bool:
    actual = json_type(value)
    return actual == name or (name == "number" and actual == "integer")


def json_equal(one: Any, two: Any) -> bool:
    """JSON equality: ``1 == 1.0``, ``true != 1``, recursing into arrays and objects."""
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(json_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict) and isinstance(two, dict):
        return len(one) == len(two) and all(bool(k in two) and json_equal(v, two[k]) for k, v in one.items())
    if isinstance(one, list | dict) or isinstance(two, list | dict):
        return False
    return bool(one == two)


def describe(schema: Any) -> str:
    """A short human summary of what ``schema`` accepts, for ``expected``."""
    if schema is True or schema == {}:
        return "any value"
    if schema is False:
        return "nothing (this value is not allowed)"
    if not isinstance(schema, dict):
        return "a valid value"
    if "const" in schema:
        return f"exactly {_show(schema['const'])}"
    if "enum" in schema:
        return "one of " + ", ".join(_show(v) for v in schema["enum"])
    types = declared_types(schema)
    if types:
        return " or ".join(article(t) for t in types)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return " or ".join(describe(s) for s in schema[key])
    return "a valid value"


def declared_types(schema: JsonSchema) -> list[str]:
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else list(declared) if isinstance(declared, list) else []
    if types and schema.get("nullable") is True and "null" not in types:
        types.append("null")
    return types


def article(type_name: str) -> str:
    return {"integer": "an integer", "array": "an array", "object": "an object", "null": "null"}.get(
        type_name, f"a {type_name}"
    )


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
