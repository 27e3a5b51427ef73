"""Gemini ``FunctionDeclaration``: its OpenAPI-3.0-flavoured ``Schema`` subset.

Limits relied on, from the Gemini API reference (ai.google.dev/api/caching#FunctionDeclaration and
#Schema, generativelanguage v1beta) and the Firebase AI Logic ``SchemaShared`` reference:

- name: must start with a letter or an underscore; a-z, A-Z, 0-9, underscores, dots and dashes;
  at most 64 characters;
- ``Schema`` fields: ``type``, ``format``, ``title``, ``description``, ``nullable``, ``enum``
  (strings only), ``properties``, ``required``, ``propertyOrdering``, ``minProperties``,
  ``maxProperties``, ``items``, ``minItems``, ``maxItems``, ``minLength``, ``maxLength``,
  ``pattern``, ``minimum``, ``maximum``, ``anyOf``, ``default``, ``example``. No ``$ref``,
  ``additionalProperties``, ``const``, ``oneOf``, ``allOf``, type arrays or exclusive bounds;
- ``format`` on the Gemini Developer API: ``enum`` or ``date-time`` for strings, ``int32``/``int64``
  for integers, ``float``/``double`` for numbers; others fail the request;
- an ``OBJECT`` needs non-empty ``properties``; a function without arguments leaves ``parameters`` out;
- an empty string among ``enum`` values fails the whole request, not only the tool;
- ``parametersJsonSchema`` (exclusive with ``parameters``) takes the arguments as JSON Schema. It is
  used for a tool the ``Schema`` subset would lose part of (a free-form object such as a Kubernetes
  PATCH body, a value of any type), so such a tool is offered whole instead of refused or cut;
- argument (top-level property) names: letters, digits and underscores. A skill maps any other wire
  name to such an argument with ``names:``, as the wizard does (nested property names are sent as
  the API spells them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from skillhouse.compiler.profiles.adaptation import (
    Adaptation,
    Refused,
    Rewrite,
    ToolRules,
    Unexpressible,
    adapt_with,
    pointer,
    verdict_with,
)
from skillhouse.compiler.profiles.objects import (
    normalize,
    required_names,
    rewrite_properties,
    rewrite_root,
    type_list,
)

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.compiler.profiles.adaptation import SchemaRewrite
    from skillhouse.json_types import JsonObject, JsonSchema, ProviderTool, ToolDefinition

RULES = ToolRules(name_pattern=re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*"), name_max=64)
ARGUMENT_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")
JSON_SCHEMA_FORM = "parametersJsonSchema"
KEYWORDS = frozenset(
    {
        "type", "format", "title", "description", "nullable", "enum", "properties", "required",
        "propertyOrdering", "minProperties", "maxProperties", "items", "minItems", "maxItems",
        "minLength", "maxLength", "pattern", "minimum", "maximum", "anyOf", "default", "example",
    }
)  # fmt: skip
FORMATS = {"string": {"enum", "date-time"}, "integer": {"int32", "int64"}, "number": {"float", "double"}}
_STRUCTURE = frozenset(
    {"type", "nullable", "enum", "anyOf", "properties", "required", "items", "format", "additionalProperties"}
)
_KNOWN = KEYWORDS | _STRUCTURE
"""The keywords :func:`_node` keeps or rewrites: any other is removed."""


def gemini_parameters(rw: Rewrite, schema: JsonSchema) -> JsonSchema | None:
    """The declaration's ``parameters``, or ``None`` for a function without arguments."""
    if not schema.get("properties"):
        return None
    out: JsonSchema = rewrite_root(rw, schema, _node)
    # Every argument may have been left out; then the function takes none.
    return out if out.get("properties") else None


def _node(rw: Rewrite, node: Any, path: str, depth: int = 0) -> JsonSchema:
    """The node in Gemini's subset (``depth`` is unused: Gemini publishes no nesting limit)."""
    if not isinstance(node, dict):
        raise Unexpressible(path, "a schema that is a boolean")
    if "allOf" in node or "const" in node or "oneOf" in node:
        node = normalize(rw, node, path)
    out: JsonSchema = {}
    for key, value in node.items():
        if key in _STRUCTURE:
            continue
        if key not in KEYWORDS:
            rw.change(pointer(path, key), f"{key!r} removed: Gemini's schema has no such field")
        else:
            out[key] = value
    declared = node.get("type")
    types = [declared] if type(declared) is str else type_list(node)
    nullable = node.get("nullable") is True
    if "null" in types:
        types = [t for t in types if t != "null"]
        nullable = True
        rw.change(pointer(path, "type"), "null became nullable: true")
    if len(types) > 1:
        out["anyOf"] = [{"type": t} for t in types]
        rw.change(pointer(path, "type"), "a list of types became anyOf")
    elif types:
        out["type"] = types[0]
    if "anyOf" in node:
        branches, null_branch = _branches(rw, node["anyOf"], path)
        nullable = nullable or null_branch
        out["anyOf"] = branches
    if "enum" in node:
        nullable = _enum(rw, node, out, path) or nullable
    if "format" in node:
        _format(rw, node["format"], out, path)
    if "object" in types or ("properties" in node and not types):
        out["type"] = "object"
        _object(rw, node, out, path)
    if "array" in types and isinstance(node.get("items"), dict):
        out["items"] = _node(rw, node["items"], pointer(path, "items"))
    if "type" not in out and "anyOf" not in out:
        raise Unexpressible(path, "a value of any type (Gemini needs a type)")
    if nullable:
        out["nullable"] = True
    return out


def _object(rw: Rewrite, node: JsonSchema, out: JsonSchema, path: str) -> None:
    if not node.get("properties"):
        raise Unexpressible(path, "an object that lists no properties (Gemini needs them)")
    properties, required = rewrite_properties(rw, node, path, 0, _node)
    if not properties and path != "/parameters":
        raise Unexpressible(path, "an object whose properties Gemini cannot express")
    out["properties"] = properties
    if required:
        out["required"] = required
    if "additionalProperties" in node:
        rw.change(
            pointer(path, "additionalProperties"),
            "removed: Gemini has no additionalProperties (the guest still refuses unknown keys)",
        )


def _branches(rw: Rewrite, branches: Any, path: str) -> tuple[list[JsonSchema], bool]:
    kept: list[JsonSchema] = []
    null_branch = False
    for index, branch in enumerate(branches if isinstance(branches, list) else []):
        where = f"{path}/anyOf/{index}"
        if isinstance(branch, dict) and branch.get("type") == "null":
            null_branch = True
            rw.change(where, "the null alternative became nullable: true")
            continue
        try:
            kept.append(_node(rw, branch, where))
        except Unexpressible as problem:
            rw.change(where, f"alternative left out: {problem.reason}")
    if not kept:
        raise Unexpressible(path, "no alternative Gemini can express")
    return kept, null_branch


def _enum(rw: Rewrite, node: JsonSchema, out: JsonSchema, path: str) -> bool:
    values = list(node["enum"]) if isinstance(node["enum"], list) else []
    has_null = None in values
    values = [v for v in values if v is not None]
    if "" in values:
        values = [v for v in values if v != ""]
        _note(out, 'The empty string "" is also accepted.')
        rw.change(
            pointer(path, "enum"),
            "the empty string moved into the description: Gemini refuses the whole request over an empty enum value",
        )
        if not values:
            out.setdefault("type", "string")
            return has_null
    if all(isinstance(v, str) for v in values) and values:
        out["enum"] = values
        out.setdefault("type", "string")
        if has_null:
            rw.change(pointer(path, "enum"), "null value became nullable: true")
        return has_null
    shown = ", ".join(_show(v) for v in values)
    _note(out, f"One of: {shown}.")
    rw.change(pointer(path, "enum"), "moved into the description: Gemini enums hold strings only")
    return has_null


def _format(rw: Rewrite, value: Any, out: JsonSchema, path: str) -> None:
    declared = out.get("type")
    if isinstance(declared, str) and value in FORMATS.get(declared, set()):
        out["format"] = value
        return
    _note(out, f"Format: {value}.")
    rw.change(pointer(path, "format"), f"format {value!r} moved into the description: Gemini refuses it")


def _note(out: JsonSchema, text: str) -> None:
    described = out.get("description")
    out["description"] = f"{described} {text}" if isinstance(described, str) and described else text


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def declaration_parameters(rw: Rewrite, schema: JsonSchema) -> tuple[str, JsonSchema | None]:
    """Which declaration field carries the arguments, and its value: ``parameters`` in the ``Schema``
    subset when it holds the whole tool, else ``parametersJsonSchema`` with the declared schema."""
    _check_argument_names(schema)
    whole, subset = _trial(rw, schema, gemini_parameters)
    if not whole:
        return "parameters", subset
    return JSON_SCHEMA_FORM, _without_empty_enum_values(rw, schema, "/parameters")


def declaration_report(rw: Rewrite, schema: JsonSchema) -> None:
    """What :func:`declaration_parameters` records in ``rw`` and refuses, in the same order, without
    building either form: the compatibility report's path (a test holds the two equal)."""
    _check_argument_names(schema)
    whole, _ = _trial(rw, schema, _parameters_report)
    # Whole tools are the largest ones, and their enums rarely hold "": a check that builds no places
    # spares the ordered walk (3.5M of Jira's 140M report instructions)
    if whole and _has_empty_enum_value(schema):
        _empty_enum_values_moved(rw, schema, "/parameters")


def _check_argument_names(schema: JsonSchema) -> None:
    for name in schema.get("properties") or {}:
        if not ARGUMENT_NAME.fullmatch(name):
            raise Refused(
                f"argument name {name!r} is not letters, digits and underscores, as Gemini requires; "
                f"rename the argument and map it with names: {{new_name: {name!r}}} (the wire name stays)"
            )


def _trial(rw: Rewrite, schema: JsonSchema, subset: Callable[[Rewrite, JsonSchema], Any]) -> tuple[bool, Any]:
    """Try ``subset`` (the rewrite into the ``Schema`` subset, or its report-only walk) on a trial
    :class:`Rewrite`: when nothing was left out its changes are the tool's (``False`` and what
    ``subset`` returned), else ``rw`` records why the tool goes whole as JSON Schema (``True``)."""
    trial = Rewrite()
    try:
        result = subset(trial, schema)
        lost = next((c for c in trial.changes if "left out" in c["change"]), None)
    except Refused as refused:
        result, lost = None, {"path": "/parameters", "change": refused.reason}
    if lost is None:
        rw.changes.extend(trial.changes)
        return False, result
    rw.change(
        "/parameters",
        f"sent as {JSON_SCHEMA_FORM} (JSON Schema, whole): Gemini's Schema subset would lose "
        f"{lost['path']} ({lost['change']})",
    )
    return True, None


def _parameters_report(rw: Rewrite, schema: JsonSchema) -> None:
    """:func:`gemini_parameters` without its output."""
    if schema.get("properties"):
        rewrite_root(rw, schema, _checked)


def _checked(rw: Rewrite, node: Any, path: str, depth: int = 0) -> None:
    """:func:`_node` without its output: the same changes in the same order, the same problems raised.

    Of the output it keeps only what decides a change: whether it has a ``type`` (and which) and an
    ``anyOf``. The usual node (known keywords only, one type) skips normalizing and the type list, and
    an object finds its required names only when a property is dropped: 4.5M of the 140M instructions
    of Jira's report."""
    if not isinstance(node, dict):
        raise Unexpressible(path, "a schema that is a boolean")
    if not _KNOWN.issuperset(node):  # allOf, const and oneOf are not known either: the usual node skips both
        if "allOf" in node or "const" in node or "oneOf" in node:
            node = normalize(rw, node, path)
        for key in node:
            if key not in _KNOWN:
                rw.change(pointer(path, key), f"{key!r} removed: Gemini's schema has no such field")
    declared = node.get("type")
    types: tuple[str, ...]
    typed: str | None  # the output's "type"
    if type(declared) is str and declared != "null":  # the usual node: one type, the output's
        types, typed, union = (declared,), declared, False
    else:
        types, typed, union = _listed_types(rw, node, path)
    if "anyOf" in node:
        _checked_branches(rw, node["anyOf"], path)
        union = True
    if "enum" in node and _enum_changes(rw, node["enum"], path) and typed is None:
        typed = "string"
    if "format" in node:
        value = node["format"]
        if not (isinstance(typed, str) and value in FORMATS.get(typed, set())):
            rw.change(pointer(path, "format"), f"format {value!r} moved into the description: Gemini refuses it")
    if "object" in types or ("properties" in node and not types):
        typed = "object"
        _checked_object(rw, node, path)
    if "array" in types and isinstance(node.get("items"), dict):
        _checked(rw, node["items"], pointer(path, "items"))
    if typed is None and not union:
        raise Unexpressible(path, "a value of any type (Gemini needs a type)")


def _listed_types(rw: Rewrite, node: JsonSchema, path: str) -> tuple[tuple[str, ...], str | None, bool]:
    """Of a node whose ``type`` is a list, ``null`` or absent: its types other than ``null``, the output's
    ``type`` and whether the output has an ``anyOf`` (as :func:`_node` makes them)."""
    types = tuple(type_list(node))
    if "null" in types:
        types = tuple(t for t in types if t != "null")
        rw.change(pointer(path, "type"), "null became nullable: true")
    union = len(types) > 1  # whether the output has an "anyOf"
    if union:
        rw.change(pointer(path, "type"), "a list of types became anyOf")
    return types, types[0] if len(types) == 1 else None, union


def _checked_object(rw: Rewrite, node: JsonSchema, path: str) -> None:
    """:func:`_object` without its output."""
    if not node.get("properties"):
        raise Unexpressible(path, "an object that lists no properties (Gemini needs them)")
    kept = False
    base = path + "/properties"
    for name, sub in node["properties"].items():  # as rewrite_properties walks them
        where = pointer(base, name)
        try:
            _checked(rw, sub, where)
        except Unexpressible as problem:
            if name in required_names(node):  # (found only here: a node rarely drops a property)
                raise
            rw.change(where, f"left out (optional): {problem.reason} at {problem.path}")
            continue
        kept = True
    if not kept and path != "/parameters":
        raise Unexpressible(path, "an object whose properties Gemini cannot express")
    if "additionalProperties" in node:
        rw.change(
            pointer(path, "additionalProperties"),
            "removed: Gemini has no additionalProperties (the guest still refuses unknown keys)",
        )


def _checked_branches(rw: Rewrite, branches: Any, path: str) -> None:
    """:func:`_branches` without its output."""
    kept = False
    for index, branch in enumerate(branches if isinstance(branches, list) else []):
        where = f"{path}/anyOf/{index}"
        if isinstance(branch, dict) and branch.get("type") == "null":
            rw.change(where, "the null alternative became nullable: true")
            continue
        try:
            _checked(rw, branch, where)
        except Unexpressible as problem:
            rw.change(where, f"alternative left out: {problem.reason}")
            continue
        kept = True
    if not kept:
        raise Unexpressible(path, "no alternative Gemini can express")


def _enum_changes(rw: Rewrite, declared: Any, path: str) -> bool:
    """:func:`_enum`'s changes; whether it gives the output the ``type`` string where it has none."""
    values = [v for v in declared if v is not None] if isinstance(declared, list) else []
    if "" in values:
        values = [v for v in values if v != ""]
        rw.change(
            pointer(path, "enum"),
            "the empty string moved into the description: Gemini refuses the whole request over an empty enum value",
        )
        if not values:
            return True
    if values and all(isinstance(v, str) for v in values):
        if None in declared:
            rw.change(pointer(path, "enum"), "null value became nullable: true")
        return True
    rw.change(pointer(path, "enum"), "moved into the description: Gemini enums hold strings only")
    return False


def _without_empty_enum_values(rw: Rewrite, node: Any, path: str) -> Any:
    """``node`` with ``""`` taken out of every enum (into the description), as in the ``Schema`` form.

    The declared schema itself when no enum holds ``""`` (the usual case): found by a walk that builds
    neither copies nor pointers; only a schema that has one is copied, with the place of each change.
    """
    if path == "/parameters" and not _has_empty_enum_value(node):
        return node
    if isinstance(node, list):
        return [_without_empty_enum_values(rw, item, f"{path}/{index}") for index, item in enumerate(node)]
    if not isinstance(node, dict):
        return node
    out = {key: _without_empty_enum_values(rw, value, pointer(path, key)) for key, value in node.items()}
    values = node.get("enum")
    if isinstance(values, list) and "" in values:
        kept = [v for v in values if v != ""]
        if kept:
            out["enum"] = kept
        else:
            del out["enum"]
        _note(out, 'The empty string "" is also accepted.')
        rw.change(
            pointer(path, "enum"),
            "the empty string moved into the description: Gemini refuses the whole request over an empty enum value",
        )
    return out


def _empty_enum_values_moved(rw: Rewrite, node: Any, at: _Place) -> None:
    """The changes :func:`_without_empty_enum_values` records, in its order, without the copy. The
    place of a node is its parent's place and its key: a pointer is spelled only for a change."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            if isinstance(item, (dict, list)):
                _empty_enum_values_moved(rw, item, (at, str(index)))
        return
    for key, value in node.items():
        if isinstance(value, (dict, list)):
            _empty_enum_values_moved(rw, value, (at, key))
    values = node.get("enum")
    if isinstance(values, list) and "" in values:
        rw.change(
            _pointer((at, "enum")),
            "the empty string moved into the description: Gemini refuses the whole request over an empty enum value",
        )


if TYPE_CHECKING:
    _Place = tuple[Any, str] | str
    """Where a node is: its parent's place and its key, or the root's pointer."""


def _pointer(at: _Place) -> str:
    keys: list[str] = []
    while not isinstance(at, str):
        at, key = at
        keys.append(key)
    for key in reversed(keys):
        at = pointer(at, key)
    return at


def _has_empty_enum_value(schema: Any) -> bool:
    """Whether any object anywhere in ``schema`` (as :func:`_without_empty_enum_values` walks it) has an
    ``enum`` list holding ``""``."""
    stack = [schema]
    push = stack.append  # loops rather than generators: cheaper than the walk it spares (see declaration_report)
    while stack:
        node = stack.pop()
        if type(node) is dict:
            values = node.get("enum")
            if type(values) is list and "" in values:
                return True
            node = node.values()
        elif type(node) is not list:
            continue
        for item in node:
            kind = type(item)
            if kind is dict or kind is list:
                push(item)
    return False


def adapt(tool: ToolDefinition) -> Adaptation:
    def wire(name: str, description: str, parameters: Any, neutral: ToolDefinition) -> ProviderTool:
        declaration: ProviderTool = {"name": name, "description": description}
        field, value = parameters
        if value is not None:
            declaration[field] = value
        return declaration

    return adapt_with("gemini", tool, RULES, declaration_parameters, wire)


REPORT: tuple[ToolRules, SchemaRewrite] = (RULES, declaration_report)
"""The rules and the schema walk of this profile's compatibility report entry (:func:`verdict`)."""


def verdict(tool: ToolDefinition) -> JsonObject:
    """``adapt(tool).report()``, without building the wire form."""
    return verdict_with(tool, *REPORT)
