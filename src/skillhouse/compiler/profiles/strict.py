"""OpenAI strict mode (``strict: true``): the schema subset Structured Outputs accepts.

Limits relied on, from OpenAI's Structured Outputs guide ("Supported schemas",
developers.openai.com/api/docs/guides/structured-outputs#supported-schemas):

- every object lists all its properties in ``required`` and sets ``additionalProperties: false``;
  an optional field is emulated as a required one that may be ``null``;
- the root is an object, not ``anyOf``;
- supported keywords: ``type`` (including type arrays with ``"null"``), ``enum``, ``anyOf``,
  ``description``, ``title``, object ``properties``/``required``/``additionalProperties``, string
  ``pattern`` and ``format`` (date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid),
  number ``multipleOf``/``maximum``/``exclusiveMaximum``/``minimum``/``exclusiveMinimum``, array
  ``items``/``minItems``/``maxItems``; everything else (``oneOf``, ``allOf``, ``not``, ``default``,
  ``minLength``, ``uniqueItems``, ``patternProperties``, ...) is refused;
- at most 5,000 object properties and 10 levels of object nesting; at most 1,000 enum values in
  total, and for one enum of more than 250 string values at most 15,000 characters; at most 120,000
  characters of property names, enum and const values together.

The model answers ``null`` for an optional argument it leaves out; :func:`neutral_arguments` turns
such an answer back into the arguments the declaration describes before the guest validates them.
"""

from __future__ import annotations

from skillhouse.compiler.profiles.adaptation import Refused, Rewrite, Unexpressible, pointer
from skillhouse.compiler.profiles.objects import (
    is_free_form,
    normalize,
    rewrite_properties,
    rewrite_root,
    type_list,
)

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonSchema

KEYWORDS = frozenset(
    {
        "type", "description", "title", "enum", "anyOf", "properties", "required", "additionalProperties",
        "items", "minItems", "maxItems", "pattern", "format",
        "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    }
)  # fmt: skip
FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
MAX_DEPTH = 10
MAX_PROPERTIES = 5_000
MAX_ENUM_VALUES = 1_000
LARGE_ENUM = 250
LARGE_ENUM_CHARACTERS = 15_000
MAX_CHARACTERS = 120_000


def strict_schema(rw: Rewrite, schema: JsonSchema) -> JsonSchema:
    """``schema`` rewritten for strict mode; raises :class:`Refused` where meaning cannot survive."""
    if "anyOf" in schema or "oneOf" in schema:
        raise Refused("strict mode needs an object root, not a union of schemas")
    try:
        out = rewrite_root(rw, schema, _node)
    except Refused as refused:
        # strict mode's own limit, not the tool's: say where the tool can go instead
        raise Refused(f"{refused.reason}; an inherent limit of strict mode: the openai profile offers this tool") from None
    _check_sizes(out)
    return dict(out)


def strict_report(rw: Rewrite, schema: JsonSchema) -> None:
    """What :func:`strict_schema` records in ``rw`` and refuses, in the same order, without building the
    rewritten schema: the compatibility report's path. The size limits apply to the rewritten schema,
    so the walk adds up what that schema would hold (its :func:`_totals`) instead of walking it again.

    A test holds the two walks equal on generated schemas and the corpus. Whatever this walk does not
    model (an enum over the large-enum limit, which the report names in the rewritten schema's own
    order; an ``enum`` or ``anyOf`` that is not a list) is handed to :func:`strict_schema` instead.
    """
    if "anyOf" in schema or "oneOf" in schema:
        raise Refused("strict mode needs an object root, not a union of schemas")
    mark = len(rw.changes)
    try:
        try:
            properties, enum_values, characters, _ = _sized(rw, schema, "/parameters", 0)
        except Unexpressible as problem:
            raise Refused(f"{problem.reason} at {problem.path}, in a required argument") from None
    except Refused as refused:
        raise Refused(f"{refused.reason}; an inherent limit of strict mode: the openai profile offers this tool") from None
    except _Unmodelled:
        del rw.changes[mark:]
        strict_schema(rw, schema)
        return
    _within_limits(properties, enum_values, characters)


class _Unmodelled(Exception):
    """A node :func:`strict_report` leaves to the rewrite that builds the schema."""


_Sizes = tuple[int, int, int, bool]
_NOTHING: _Sizes = (0, 0, 0, False)


def _sized(rw: Rewrite, node: Any, path: str, depth: int) -> _Sizes:
    """:func:`_node` without its output: the changes it records, what it raises, and of the node it
    would return the object properties, enum values and characters (as :func:`_totals` counts them)
    and whether :func:`nullable` would add ``None`` to its enum."""
    if not isinstance(node, dict):
        raise Unexpressible(path, "a schema that is a boolean")
    if "allOf" in node or "const" in node or "oneOf" in node:
        node = normalize(rw, node, path)
    null = "nullable" in node and node["nullable"] is True  # the keyword is left out; true makes it nullable
    if null:
        rw.change(pointer(path, "nullable"), "became a type that allows null")
    if KEYWORDS.issuperset(node):  # the usual node: nothing to remove but maybe its format
        if "format" in node and node["format"] not in FORMATS:
            rw.change(pointer(path, "format"), f"format {node['format']!r} removed: strict mode does not support it")
    else:
        for key, value in node.items():
            if key not in KEYWORDS:
                if key != "nullable":
                    rw.change(pointer(path, key), f"{key!r} removed: strict mode does not support it")
            elif key == "format" and value not in FORMATS:
                rw.change(pointer(path, key), f"format {value!r} removed: strict mode does not support it")
    declared = node.get("type")
    types = [declared] if type(declared) is str else type_list(node)
    properties = enum_values = characters = 0
    extends = False
    if "enum" in node:
        values = node["enum"]
        if type(values) is not list:
            raise _Unmodelled
        if None not in values:
            if null and "anyOf" not in node:
                values = [*values, None]
            else:
                extends = "anyOf" not in node
        if values:
            enum_values = len(values)
            characters = sum(len(v) for v in values if isinstance(v, str))
            if enum_values >= LARGE_ENUM and characters > LARGE_ENUM_CHARACTERS:
                raise _Unmodelled  # (or one short of it: an optional property's null would make it one)
    if "anyOf" in node:
        branches = node["anyOf"]
        if type(branches) is not list:
            raise _Unmodelled
        kept = 0
        for index, branch in enumerate(branches):
            where = f"{path}/anyOf/{index}"
            try:
                p, e, c, _ = _sized(rw, branch, where, depth)
            except Unexpressible as problem:
                rw.change(where, f"alternative left out: {problem.reason}")
                continue
            kept += 1
            properties, enum_values, characters = properties + p, enum_values + e, characters + c
        if null and not any(isinstance(b, dict) and b.get("type") == "null" for b in branches):
            kept += 1  # nullable adds the branch {"type": "null"}: nothing to record or count
        if not kept:
            raise Unexpressible(path, "no alternative strict mode can express")
    if "object" in types or ("properties" in node and not types):
        p, e, c = _sized_object(rw, node, path, depth + 1)
        properties, enum_values, characters = properties + p, enum_values + e, characters + c
    if "array" in types:
        if not isinstance(node.get("items"), dict):
            raise Unexpressible(path, "an array whose items are not described")
        p, e, c, _ = _sized(rw, node["items"], pointer(path, "items"), depth)
        properties, enum_values, characters = properties + p, enum_values + e, characters + c
    if not types and "anyOf" not in node and "enum" not in node and "properties" not in node:
        raise Unexpressible(path, "a value of any type (strict mode needs a type)")
    if not (properties or enum_values or extends):
        return _NOTHING
    return properties, enum_values, characters, extends


def _sized_object(rw: Rewrite, node: JsonSchema, path: str, depth: int) -> tuple[int, int, int]:
    """:func:`_object` without its output (see :func:`_sized`)."""
    if depth > MAX_DEPTH:
        raise Unexpressible(path, f"objects nested deeper than {MAX_DEPTH} levels")
    if is_free_form(node):
        raise Unexpressible(path, "an object whose keys are not listed (strict mode names every key)")
    required = [r for r in node.get("required", []) if isinstance(r, str)]
    properties = enum_values = characters = 0
    optional: list[str] = []
    base = path + "/properties"
    for name, sub in (node.get("properties") or {}).items():  # as rewrite_properties walks them
        where = pointer(base, name)
        try:
            p, e, c, extends = _sized(rw, sub, where, depth)
        except Unexpressible as problem:
            if name in required:
                raise
            rw.change(where, f"left out (optional): {problem.reason} at {problem.path}")
            continue
        properties, enum_values, characters = properties + p + 1, enum_values + e, characters + c + len(name)
        if name not in required:
            optional.append(where)
            if extends:
                enum_values += 1
    for where in optional:
        rw.change(where, "optional: now required and nullable (null leaves it out)")
    if node.get("additionalProperties", True) is not False:
        rw.change(pointer(path, "additionalProperties"), "set to false: strict mode allows no unlisted keys")
    return properties, enum_values, characters


def _node(rw: Rewrite, node: Any, path: str, depth: int) -> Any:
    if not isinstance(node, dict):
        raise Unexpressible(path, "a schema that is a boolean")
    if "allOf" in node or "const" in node or "oneOf" in node:
        node = normalize(rw, node, path)
    if "nullable" in node:
        node = _openapi_nullable(rw, node, path)
    out: JsonSchema = {}
    for key, value in node.items():
        if key not in KEYWORDS:
            rw.change(pointer(path, key), f"{key!r} removed: strict mode does not support it")
        elif key == "format" and value not in FORMATS:
            rw.change(pointer(path, key), f"format {value!r} removed: strict mode does not support it")
        elif key not in ("anyOf", "properties", "required", "additionalProperties", "items"):
            out[key] = value
    declared = node.get("type")
    types = [declared] if type(declared) is str else type_list(node)
    if "anyOf" in node:
        out["anyOf"] = _branches(rw, node["anyOf"], path, depth)
    if "object" in types or ("properties" in node and not types):
        if not types:
            out["type"] = "object"
        _object(rw, node, out, path, depth + 1)
    if "array" in types:
        if not isinstance(node.get("items"), dict):
            raise Unexpressible(path, "an array whose items are not described")
        out["items"] = _node(rw, node["items"], pointer(path, "items"), depth)
    if not types and "anyOf" not in out and "enum" not in out and "properties" not in out:
        raise Unexpressible(path, "a value of any type (strict mode needs a type)")
    return out


def _object(rw: Rewrite, node: JsonSchema, out: JsonSchema, path: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise Unexpressible(path, f"objects nested deeper than {MAX_DEPTH} levels")
    if is_free_form(node):
        raise Unexpressible(path, "an object whose keys are not listed (strict mode names every key)")
    properties, required = rewrite_properties(rw, node, path, depth, _node)
    for name, sub in properties.items():
        if name not in required:
            properties[name] = nullable(sub)
            rw.change(
                pointer(pointer(path, "properties"), name),
                "optional: now required and nullable (null leaves it out)",
            )
    out["properties"] = properties
    out["required"] = list(properties)
    if node.get("additionalProperties", True) is not False:
        rw.change(pointer(path, "additionalProperties"), "set to false: strict mode allows no unlisted keys")
    out["additionalProperties"] = False


def _branches(rw: Rewrite, branches: Any, path: str, depth: int) -> list[Any]:
    kept: list[Any] = []
    for index, branch in enumerate(branches if isinstance(branches, list) else []):
        where = f"{path}/anyOf/{index}"
        try:
            kept.append(_node(rw, branch, where, depth))
        except Unexpressible as problem:
            rw.change(where, f"alternative left out: {problem.reason}")
    if not kept:
        raise Unexpressible(path, "no alternative strict mode can express")
    return kept


def _openapi_nullable(rw: Rewrite, node: JsonSchema, path: str) -> JsonSchema:
    out = {k: v for k, v in node.items() if k != "nullable"}
    if node["nullable"] is True:
        out = nullable(out)
        rw.change(pointer(path, "nullable"), "became a type that allows null")
    return out


def nullable(schema: JsonSchema) -> JsonSchema:
    """``schema`` that also accepts ``null``."""
    out = dict(schema)
    if "anyOf" in out:
        if not any(isinstance(b, dict) and b.get("type") == "null" for b in out["anyOf"]):
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        return out
    types = type_list(out)
    if types and "null" not in types:
        out["type"] = [*types, "null"]
    enum = out.get("enum")
    if isinstance(enum, list) and None not in enum:  # not a list: the metaschema's to refuse, not ours to extend
        out["enum"] = [*enum, None]
    return out


def _check_sizes(schema: JsonSchema) -> None:
    properties, enum_values, characters, large_enum = _totals(schema)
    if large_enum:  # the walk in the declaration's order names the first one, as the report must
        properties, enum_values, characters = _measure(schema)
    _within_limits(properties, enum_values, characters)


def _within_limits(properties: int, enum_values: int, characters: int) -> None:
    if properties > MAX_PROPERTIES:
        raise Refused(f"{properties} object properties; strict mode allows at most {MAX_PROPERTIES}")
    if enum_values > MAX_ENUM_VALUES:
        raise Refused(f"{enum_values} enum values; strict mode allows at most {MAX_ENUM_VALUES}")
    if characters > MAX_CHARACTERS:
        raise Refused(
            f"{characters} characters of names and enum values; strict mode allows {MAX_CHARACTERS}"
        )


def _totals(schema: Any) -> tuple[int, int, int, bool]:
    """What :func:`_measure` adds up, in any order and without a call per node, and whether an enum is
    over the large-enum limit (then :func:`_measure` walks again to refuse the first one)."""
    properties = enum_values = characters = 0
    large_enum = False
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        named = node.get("properties")
        if named:
            properties += len(named)
            for name, sub in named.items():
                characters += len(name)
                stack.append(sub)
        values = node.get("enum")
        if values:
            enum_values += len(values)
            text = sum(len(v) for v in values if isinstance(v, str))
            characters += text
            large_enum = large_enum or (len(values) > LARGE_ENUM and text > LARGE_ENUM_CHARACTERS)
        items = node.get("items")
        if items is not None:
            stack.append(items)
        branches = node.get("anyOf")
        if branches:
            stack.extend(branches)
    return properties, enum_values, characters, large_enum


def _measure(node: Any) -> tuple[int, int, int]:
    properties = enum_values = characters = 0
    if isinstance(node, dict):
        for name, sub in (node.get("properties") or {}).items():
            properties += 1
            characters += len(name)
            p, e, c = _measure(sub)
            properties, enum_values, characters = properties + p, enum_values + e, characters + c
        values = node.get("enum") or []
        enum_values += len(values)
        text = sum(len(v) for v in values if isinstance(v, str))
        characters += text
        if len(values) > LARGE_ENUM and text > LARGE_ENUM_CHARACTERS:
            raise Refused(
                f"an enum of {len(values)} values with {text} characters; strict mode allows {LARGE_ENUM_CHARACTERS}"
            )
        for key in ("items",):
            p, e, c = _measure(node.get(key))
            properties, enum_values, characters = properties + p, enum_values + e, characters + c
        for branch in node.get("anyOf") or []:
            p, e, c = _measure(branch)
            properties, enum_values, characters = properties + p, enum_values + e, characters + c
    return properties, enum_values, characters


def neutral_arguments(schema: JsonSchema, arguments: Any) -> Any:
    """Arguments from a strict-mode call as the declaration describes them: a ``null`` the model sent
    for an optional argument that does not itself allow ``null`` means the argument was left out."""
    if not isinstance(arguments, dict) or not isinstance(schema, dict):
        return arguments
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    out: JsonSchema = {}
    for name, value in arguments.items():
        sub = properties.get(name)
        if value is None and name not in required and not _allows_null(sub):
            continue
        out[name] = _nested(sub, value)
    return out


def _nested(schema: Any, value: Any) -> Any:
    if isinstance(value, dict):
        return neutral_arguments(schema, value)
    if isinstance(value, list) and isinstance(schema, dict) and isinstance(schema.get("items"), dict):
        return [_nested(schema["items"], item) for item in value]
    return value


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return True
    if schema.get("nullable") is True or "null" in type_list(schema):
        return True
    if None in (schema.get("enum") or []):
        return True
    return any(_allows_null(b) for b in (schema.get("anyOf") or schema.get("oneOf") or []))
