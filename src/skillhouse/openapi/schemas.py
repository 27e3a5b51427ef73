"""OpenAPI schemas to the JSON Schema a skill holds, with shared components as ``#/types/Name``.

Each referenced schema is converted once, when an operation first reaches it, and becomes an entry
of ``types.json``; the compiler expands the references per tool. Only the keywords JSON Schema
2020-12 knows are kept, each checked for the shape the metaschema demands, so a sloppy spec gives a
schema that still compiles. OpenAPI's dialect is translated: 3.0 ``nullable`` and boolean
``exclusiveMinimum``, Swagger's ``type: file``, ``example``; ``allOf`` of objects is merged;
``readOnly`` properties are left out of requests; a discriminator becomes a ``const`` per branch.
"""

from __future__ import annotations

import math
import re

from skillhouse.openapi.document import SpecDocument
from skillhouse.openapi.references import WRONG_KIND, RefProblem, non_schema_place

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonObject, JsonSchema

TYPE_PREFIX = "#/types/"
JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
_TYPE_NAMES = {name: name for name in JSON_TYPES}
"""Each type name as one string: a parsed JSON spec has its own ``"string"`` wherever a schema says so."""
_COUNTS = ("minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties")
_NUMBERS = ("minimum", "maximum")
_TEXTS = ("title", "description", "format", "contentMediaType", "contentEncoding")
_MAX_DEPTH = 64
_SAFE_INT = 2**53 - 1
_DROPPED = object()


def carried_text(text: str) -> str:
    """``text`` as UTF-8 can carry it: a lone surrogate (an unpaired ``\\ud800``-``\\udfff`` escape in a
    JSON spec) becomes ``?``, as in the operation's prose; the release, a UTF-8 text, could not hold it."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def json_value(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON that canonical serialization accepts (no NaN, no 2**64 integers, no
    lone surrogate)."""
    if isinstance(value, str):
        return carried_text(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if -_SAFE_INT <= value <= _SAFE_INT else float(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return {carried_text(str(k)): json_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v, depth + 1) for v in value]
    return str(value)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _SAFE_INT


def _number(value: Any) -> int | float | None:
    """A finite number canonical JSON can carry (large integers become floats), or ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int):
        return value if -_SAFE_INT <= value <= _SAFE_INT else float(value)
    return value if math.isfinite(value) else None


def _valid_regex(pattern: Any) -> bool:
    try:
        re.compile(pattern)
    except (re.error, TypeError, RecursionError, OverflowError):
        return False
    return True


class SchemaConverter:
    """Converts schemas of one spec; ``types`` fills up with every component an operation reaches."""

    def __init__(self, spec: SpecDocument) -> None:
        self.spec = spec
        self.types: dict[str, JsonSchema] = {}
        self._names: dict[str, str] = {}
        self._taken: set[str] = set()
        self._converting: set[str] = set()
        self._type_notes: dict[str, list[str]] = {}
        self._where = "an inline schema"
        self._texts: dict[str, str] = {}
        """One string per distinct title, description or format kept: a JSON spec repeats a shared
        description hundreds of times, each its own string, and the types hold what they keep to the end."""
        self.notes: list[str] = []
        """What was changed or dropped while converting, for the operation being built (a type's notes again each time it is used)."""
        self.credentials: set[tuple[str, str]] | None = None
        """The spec's credential parameters (:func:`~skillhouse.openapi.parameters.credential_parameters`),
        once read without a problem: the same for every operation, and read for each one cost 0.7% of Jira's import."""

    def convert(self, node: Any, doc: str = "", depth: int = 0) -> Any:
        """The JSON Schema for OpenAPI schema ``node`` found in file ``doc``."""
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict) or depth > _MAX_DEPTH:
            return {}
        if "$ref" in node:
            return self.reference(node["$ref"], doc)
        out: JsonSchema = {}
        read_only: set[str] = set()
        for key, value in node.items():
            if key == "type":
                kind = _convert_type(value, out)
                if kind is not None:
                    out["type"] = kind
                else:
                    self.notes.append(f"{self._where}: type {str(value)[:40]!r} is not a JSON Schema type (a spec bug); any type is accepted there")
            elif key in _TEXTS:
                if isinstance(value, str):
                    text = self._texts.get(value)
                    if text is None:
                        text = self._texts[value] = carried_text(value)
                    out[key] = text
            elif key == "enum":
                if isinstance(value, list):
                    out[key] = json_value(value)
            elif key == "examples":
                listed = value if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else None
                if listed is not None:
                    out[key] = [v for v in (self._example(e, doc) for e in listed) if v is not _DROPPED]
            elif key in ("const", "default"):
                out[key] = json_value(value)
            elif key == "example":
                example = self._example(value, doc)
                if example is not _DROPPED:
                    out.setdefault("examples", [example])
            elif key == "properties" and isinstance(value, dict):
                props: dict[str, JsonSchema] = {}
                for name, sub in value.items():
                    if self._read_only(sub, doc):
                        read_only.add(str(name))
                        continue
                    if not isinstance(sub, dict | bool):
                        # e.g. ``properties: {$ref: "#/..."}``: a property named $ref, whatever was meant
                        self.notes.append(
                            f"{self._where}: property {str(name)[:40]!r} has {str(sub)[:60]!r} for a schema, which is not one "
                            "(a spec bug); it accepts any value"
                        )
                    props[str(name)] = self.convert(sub, doc, depth + 1)
                out["properties"] = props
            elif key == "required" and isinstance(value, list):
                out["required"] = list(dict.fromkeys(v for v in value if isinstance(v, str)))
            elif key in ("additionalProperties", "not"):
                if isinstance(value, bool | dict):
                    out[key] = self.convert(value, doc, depth + 1)
            elif key == "items":
                if isinstance(value, list):
                    out["prefixItems"] = [self.convert(v, doc, depth + 1) for v in value]
                elif isinstance(value, bool | dict):
                    out["items"] = self.convert(value, doc, depth + 1)
            elif key in ("allOf", "anyOf", "oneOf"):
                if isinstance(value, list) and value:
                    out[key] = [self.convert(v, doc, depth + 1) for v in value]
            elif key in _COUNTS:
                if _is_count(value):
                    out[key] = value
            elif key in _NUMBERS or key in ("exclusiveMinimum", "exclusiveMaximum"):
                number = _number(value)
                if number is not None:
                    out[key] = number
            elif key == "multipleOf":
                number = _number(value)
                if number is not None and number > 0:
                    out[key] = number
            elif key == "pattern":
                if isinstance(value, str) and _valid_regex(value):
                    out[key] = value
            elif key == "patternProperties" and isinstance(value, dict):
                out[key] = {k: self.convert(v, doc, depth + 1) for k, v in value.items() if type(k) is str and _valid_regex(k)}
            elif key in ("uniqueItems", "deprecated") and isinstance(value, bool):
                out[key] = value
        _openapi_30_bounds(node, out)
        if "allOf" in out:
            # a part may require what another part (or a part of it) declares readOnly
            read_only |= self._read_only_in_parts(node.get("allOf"), doc)
        if read_only and "required" in out:
            out["required"] = [n for n in out["required"] if n not in read_only]
        if out.get("additionalProperties") is False and "patternProperties" not in out and "allOf" not in out:
            declared = out.get("properties") or {}
            impossible = [n for n in out.get("required", []) if n not in declared]
            if impossible:
                # no object satisfies the spec's schema: what it requires, it forbids
                self.notes.append(
                    f"{self._where}: requires {', '.join(repr(n[:40]) for n in impossible)}, which it does not declare while "
                    "allowing no other property (a spec bug); left out of required"
                )
                out["required"] = [n for n in out["required"] if n in declared]
        if node.get("nullable") is True:
            out = _nullable(out)
        if "discriminator" in node and "oneOf" in out:
            self._discriminate(node["discriminator"], out, doc)
        if "allOf" in out:
            out = self._merge_all_of(out)
            if read_only and "required" in out:
                out["required"] = [n for n in out["required"] if n not in read_only]
        return out

    def _read_only(self, node: Any, doc: str) -> bool:
        """Whether a property's schema is ``readOnly`` (itself, or the schema its ``$ref`` leads to): a response-only field."""
        for _ in range(16):
            if not isinstance(node, dict):
                return False
            if node.get("readOnly") is True:
                return True
            if "$ref" not in node:
                return False
            found = self.spec.locate(node["$ref"], doc)  # a failure is reported when the reference is converted
            if isinstance(found, RefProblem):
                return False
            node, doc, _ = found
        return False

    def _read_only_in_parts(self, parts: Any, doc: str, depth: int = 0) -> set[str]:
        """Names of the ``readOnly`` properties that the ``allOf`` ``parts`` (and their own ``allOf``s) declare."""
        names: set[str] = set()
        for raw in parts if isinstance(parts, list) and depth < 8 else []:
            part, part_doc = raw, doc
            if isinstance(raw, dict) and "$ref" in raw:
                found = self.spec.locate(raw["$ref"], doc)
                if isinstance(found, RefProblem):
                    continue
                part, part_doc, _ = found
            if not isinstance(part, dict):
                continue
            properties = part.get("properties")
            for name, sub in properties.items() if isinstance(properties, dict) else ():
                if self._read_only(sub, part_doc):
                    names.add(str(name))
            names |= self._read_only_in_parts(part.get("allOf"), part_doc, depth + 1)
        return names

    def reference(self, ref: Any, doc: str) -> JsonSchema:
        """``{"$ref": "#/types/Name"}`` for the schema ``ref`` points to, converting it on first use.

        A reference that cannot be followed, or that points where no schemas are, accepts any value,
        with a located note (again for every operation that reaches it through a type).
        """
        found = self.spec.locate(ref, doc)
        if isinstance(found, RefProblem):
            self.spec.problems.append(found)
            self.notes.append(f"{found.text()}; the schema there accepts any value")
            return {}
        target, target_doc, key = found
        place = non_schema_place(key.partition("#")[2])
        if place is not None:
            wrong = RefProblem(WRONG_KIND, self.spec.label(doc), str(ref), f"points into {place}, which holds no schemas (a spec bug)")
            self.spec.problems.append(wrong)
            self.notes.append(f"{wrong.text()}; the schema there accepts any value")
            return {}
        name = self._names.get(key)
        if name is None:
            name = self._new_name(key)
            self._names[key] = name
            self.types[name] = {}
            self._converting.add(name)
            outer_notes, outer_where = self.notes, self._where
            self.notes, self._where = [], self.spec.label(target_doc) + "#" + key.partition("#")[2]
            try:
                self.types[name] = self.convert(target, target_doc)
            except BaseException:
                # half made, it would serve the next operation that reaches it as "any value"
                del self._names[key], self.types[name]
                self._taken.discard(name.lower())
                self._converting.discard(name)
                raise
            finally:
                self._type_notes[name], self.notes, self._where = self.notes, outer_notes, outer_where
            self._converting.discard(name)
        self.notes.extend(self._type_notes.get(name, ()))
        return {"$ref": TYPE_PREFIX + name}

    def _example(self, value: Any, doc: str) -> Any:
        """An example as JSON; one written as a ``$ref`` (to ``components/examples``) is replaced by the value there, or dropped."""
        if not (isinstance(value, dict) and isinstance(value.get("$ref"), str)):
            return json_value(value)
        found = self.spec.locate(value["$ref"], doc)
        if not isinstance(found, RefProblem) and isinstance(found[0], dict) and "value" in found[0]:
            self.notes.append(f"{self._where}: example $ref {value['$ref'][:80]!r} replaced by the value it names")
            return json_value(found[0]["value"])
        why = found.text() if isinstance(found, RefProblem) else "names no example value"
        self.notes.append(f"{self._where}: example $ref {value['$ref'][:80]!r} dropped ({why})")
        return _DROPPED

    def type_of(self, schema: Any) -> Any:
        """``schema`` with a ``#/types/`` reference at its root followed (one level, no expansion)."""
        for _ in range(32):
            if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
                return schema
            name = schema["$ref"][len(TYPE_PREFIX) :]
            if name in self._converting:
                return None
            schema = self.types.get(name)
        return None

    def _new_name(self, key: str) -> str:
        document, _, pointer = key.partition("#")
        # a schema under a pointer is named by its last token; a whole file by the file's name
        tail = pointer.rsplit("/", 1)[-1] if pointer else document.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        base = re.sub(r"[^A-Za-z0-9_.-]+", "_", tail).strip("_") or "Type"
        name, n = base, 2
        while name.lower() in self._taken:
            name, n = f"{base}_{n}", n + 1
        self._taken.add(name.lower())
        return name

    def _merge_all_of(self, schema: JsonSchema) -> JsonSchema:
        parts = [self.type_of(p) for p in schema["allOf"]]
        mergeable = all(
            isinstance(p, dict) and set(p) <= {"type", "properties", "required", "description", "title", "additionalProperties"}
            and p.get("type", "object") == "object"
            for p in parts
        )
        if not mergeable:
            return schema
        merged: JsonSchema = {k: v for k, v in schema.items() if k != "allOf"}
        properties: dict[str, JsonSchema] = dict(merged.get("properties", {}))
        required: list[str] = list(merged.get("required", []))
        closed = [p.get("additionalProperties") is False for p in parts]
        for part in parts:
            for name, sub in part.get("properties", {}).items():
                properties[name] = _both(properties[name], sub) if name in properties else sub
            required.extend(part.get("required", []))
            for key in ("description", "title"):
                if key in part:
                    merged.setdefault(key, part[key])
        merged["type"] = "object"
        merged["properties"] = properties
        if required:
            merged["required"] = list(dict.fromkeys(required))
        if all(closed):
            merged["additionalProperties"] = False
        return merged

    def _discriminate(self, discriminator: Any, schema: JsonSchema, doc: str) -> None:
        if not isinstance(discriminator, dict) or not isinstance(discriminator.get("propertyName"), str):
            return
        prop = discriminator["propertyName"]
        mapping: JsonObject = discriminator["mapping"] if isinstance(discriminator.get("mapping"), dict) else {}
        value_of: dict[str, str] = {}
        for value, ref in mapping.items():
            if isinstance(ref, str) and not re.search(r"[#/]|\.(json|ya?ml)$", ref):
                # a bare schema name, as OpenAPI allows in a mapping: one of the root file's components
                target = self.reference("#/components/schemas/" + ref, "")
            else:
                target = self.reference(ref, doc)
            if "$ref" in target:
                value_of.setdefault(target["$ref"], str(value))
        branches = []
        for branch in schema["oneOf"]:
            ref = branch.get("$ref") if isinstance(branch, dict) else None
            if isinstance(ref, str):
                value = value_of.get(ref, ref[len(TYPE_PREFIX) :])
                pin = {"type": "object", "properties": {prop: {"const": value}}}
                branches.append({"allOf": [branch, pin]})
            else:
                branches.append(branch)
        schema["oneOf"] = branches


def _convert_type(value: Any, out: JsonSchema) -> Any:
    if value == "file":  # Swagger 2.0
        out.setdefault("format", "binary")
        return "string"
    if isinstance(value, str):
        return _TYPE_NAMES.get(value)
    if isinstance(value, list):
        kinds = list(dict.fromkeys(_TYPE_NAMES[v] for v in value if v in JSON_TYPES))
        return kinds or None
    return None


def _openapi_30_bounds(node: JsonSchema, out: JsonSchema) -> None:
    for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if node.get(flag) is True and bound in out:
            out[flag] = out.pop(bound)


def _nullable(schema: JsonSchema) -> JsonSchema:
    kind = schema.get("type")
    if isinstance(kind, str):
        schema = {**schema, "type": [kind, "null"]}
    elif isinstance(kind, list):
        schema = {**schema, "type": [*kind, "null"] if "null" not in kind else kind}
    else:
        return {"anyOf": [schema, {"type": "null"}]}
    if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
        schema["enum"] = [*schema["enum"], None]
    return schema


def _both(first: Any, second: Any) -> Any:
    """A property two ``allOf`` parts both describe: each part's keywords hold, so one mapping when
    no keyword is given two values (``{"type": "string"}`` and ``{"example": ...}``), else ``allOf`` of both."""
    if first == second:
        return first
    if isinstance(first, dict) and isinstance(second, dict) and all(first[k] == second[k] for k in first.keys() & second.keys()):
        return {**first, **second}
    return {"allOf": [first, second]}
