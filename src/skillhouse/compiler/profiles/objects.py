"""Walking an object schema's properties for the profiles that must rewrite schemas (strict, Gemini).

When a provider cannot express some node (an open object, a value of any type, nesting past its
limit), the meaning of the rest of the tool survives if the nearest *optional* property holding that
node is left out: the model simply cannot send it. A required property cannot be left out, so the
problem travels up to the next optional ancestor, and at the root it refuses the tool.
"""

from __future__ import annotations

from collections.abc import Callable

from skillhouse.compiler.profiles.adaptation import Refused, Rewrite, Unexpressible, pointer

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonSchema

    NodeRewrite = Callable[[Rewrite, Any, str, int], Any]
    """Rewrites the schema node at a JSON Pointer and object depth, recording changes in the
    :class:`Rewrite`; may raise :class:`Unexpressible`."""


def rewrite_properties(
    rw: Rewrite, node: JsonSchema, path: str, depth: int, rewrite: NodeRewrite
) -> tuple[JsonSchema, list[str]]:
    """The node's properties rewritten, optional ones the provider cannot express left out.

    Returns the new properties and the names of the required ones, in declaration order.
    """
    properties = node.get("properties") or {}
    required = required_names(node)
    out: JsonSchema = {}
    base = path + "/properties"
    for name, sub in properties.items():
        where = pointer(base, name)
        try:
            out[name] = rewrite(rw, sub, where, depth)
        except Unexpressible as problem:
            if name in required:
                raise
            rw.change(where, f"left out (optional): {problem.reason} at {problem.path}")
    kept_required = [r for r in required if r in out]
    return out, kept_required


def rewrite_root(rw: Rewrite, schema: JsonSchema, rewrite: NodeRewrite) -> Any:
    """Rewrite the parameters root; a problem that reaches it refuses the tool."""
    try:
        return rewrite(rw, schema, "/parameters", 0)
    except Unexpressible as problem:
        raise Refused(f"{problem.reason} at {problem.path}, in a required argument") from None


def required_names(node: JsonSchema) -> list[str]:
    """The names the node's ``required`` lists (its strings, in order)."""
    return [r for r in node.get("required", []) if isinstance(r, str)]


def type_list(node: JsonSchema) -> list[str]:
    """The node's ``type`` as a list (empty when absent)."""
    declared = node.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    return []


def is_free_form(node: JsonSchema) -> bool:
    """An object that lists no properties yet allows keys: a map or anything at all."""
    return not node.get("properties") and node.get("additionalProperties", True) is not False


def normalize(rw: Rewrite, node: JsonSchema, path: str) -> JsonSchema:
    """``const`` as an enum of one, ``oneOf`` as ``anyOf``, ``allOf`` merged: forms both rewriting
    profiles accept, with every change recorded. The guest still validates against the declaration.

    A node with none of those is returned as it is (the profiles build their own copy from it)."""
    if "allOf" not in node and "const" not in node and "oneOf" not in node:
        return node
    out = dict(node)
    if "allOf" in out and isinstance(out["allOf"], list) and all(isinstance(b, dict) for b in out["allOf"]):
        merged: JsonSchema = {}
        for branch in out.pop("allOf"):
            merged = _merge(merged, branch)
        out = _merge(merged, out)
        rw.change(pointer(path, "allOf"), "merged into one schema (the provider has no allOf)")
    if "const" in out:
        value = out.pop("const")
        out["enum"] = [value]
        rw.change(pointer(path, "const"), "became an enum of one value")
    if "oneOf" in out and "anyOf" not in out:
        out["anyOf"] = out.pop("oneOf")
        rw.change(
            pointer(path, "oneOf"),
            "became anyOf (the provider has no oneOf; the guest still checks exactly one)",
        )
    return out


def _merge(base: JsonSchema, extra: JsonSchema) -> JsonSchema:
    out = dict(base)
    for key, value in extra.items():
        if key == "properties" and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        elif key == "required" and isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = out[key] + [r for r in value if r not in out[key]]
        elif key not in out:
            out[key] = value
    return out
