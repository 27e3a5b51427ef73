"""What adapting one neutral tool to one provider produced, and the bookkeeping every profile shares.

An :class:`Adaptation` is the provider's wire form of a tool (or ``None`` when refused) together with
every change made to fit, each with the JSON Pointer (RFC 6901) of what changed in the *neutral*
definition (``/name``, ``/description``, ``/parameters/properties/note``). Profiles record changes
through a :class:`Rewrite` while they walk a schema; the changes end up, in walk order, in the
release's compatibility report, which is hashed, so the walk must be deterministic (it follows the
schema's own key order, which the compiler fixes).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from skillhouse.compiler.naming import cap, sanitize
from skillhouse.records import field, record

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonObject, JsonSchema, ProviderTool, ToolDefinition


class Refused(Exception):
    """The tool cannot be offered to the provider without losing what it means."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class Unexpressible(Exception):
    """A schema node the provider cannot express; the nearest optional property holding it is dropped."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(reason)


@record(frozen=True)
class Adaptation:
    """One neutral tool adapted to one profile."""

    profile: str
    name: str
    """The neutral tool name (the provider may see another one: see ``tool``)."""
    tool: ProviderTool | None
    """The provider's wire form; ``None`` when refused."""
    changes: tuple[dict[str, str], ...] = ()
    refusal: str | None = None

    @property
    def status(self) -> str:
        if self.refusal is not None:
            return "refused"
        return "adapted" if self.changes else "ok"

    def report(self) -> JsonObject:
        """The compatibility report entry: ``ok``, ``adapted`` with its changes, or ``refused`` with why."""
        if self.refusal is not None:
            return {"status": "refused", "reason": self.refusal}
        if self.changes:
            return {"status": "adapted", "changes": [dict(c) for c in self.changes]}
        return {"status": "ok"}


@record
class Rewrite:
    """The changes made so far while adapting one tool."""

    changes: list[dict[str, str]] = field(default_factory=list)

    def change(self, path: str, what: str) -> None:
        self.changes.append({"path": path, "change": what})


def pointer(path: str, key: str) -> str:
    """``path`` extended by ``key``, escaped as RFC 6901 requires."""
    if "~" in key or "/" in key:  # rare: most keys need no escape, and a test is cheaper than two replaces
        key = key.replace("~", "~0").replace("/", "~1")
    return f"{path}/{key}"


@record(frozen=True)
class ToolRules:
    """A provider's published rules for a tool's name and description."""

    name_pattern: re.Pattern[str]
    name_max: int
    description_max: int | None = None
    description_min: int = 0
    property_name: re.Pattern[str] | None = None
    """Pattern every property name must match anywhere in the schema, or ``None`` when unrestricted."""


def fit_name(rw: Rewrite, name: str, rules: ToolRules) -> str:
    """``name`` as the provider accepts it; a renamed tool is recorded (the host maps the call back)."""
    if rules.name_pattern.fullmatch(name) and len(name) <= rules.name_max:
        return name
    fitted = sanitize(name) or "tool"
    if not rules.name_pattern.fullmatch(fitted[:1] + "a"):
        fitted = "_" + fitted
    fitted = cap(fitted, rules.name_max)
    if not rules.name_pattern.fullmatch(fitted):
        raise Refused(f"tool name {name!r} cannot be made to match {rules.name_pattern.pattern}")
    rw.change(
        "/name", f"renamed to {fitted!r}: the provider's tool names must match {rules.name_pattern.pattern}"
    )
    return fitted


def fit_description(rw: Rewrite, name: str, description: str, rules: ToolRules) -> str:
    """``description`` cut to the provider's maximum at a word boundary, or filled where one is required."""
    if len(description) < rules.description_min:
        rw.change("/description", "was empty; the provider requires one, so the tool name is used")
        return name
    limit = rules.description_max
    if limit is None or len(description) <= limit:
        return description
    cut = description[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    rw.change(
        "/description",
        f"truncated from {len(description)} to {len(cut) + 1} characters (provider maximum {limit})",
    )
    return cut.rstrip() + "…"


def check_property_names(schema: Any, rules: ToolRules, path: str = "/parameters") -> None:
    """Refuse the tool when a property name anywhere in ``schema`` breaks the provider's pattern."""
    global _last_match
    pattern = rules.property_name
    held, held_pattern = _last_match  # read once: another thread may replace it between two reads
    if pattern is None or (held is schema and held_pattern is pattern):
        return
    if all(pattern.fullmatch(name) for name in property_names(schema)):
        _last_match = (schema, pattern)
        return  # the usual case, settled without building a pointer per property
    for where, key in _property_names(schema, path):
        if not pattern.fullmatch(key):
            raise Refused(
                f"property name {key!r} at {where} does not match {pattern.pattern}; "
                "map it to another argument name (the wire name can stay)"
            )


_last_match: tuple[object, re.Pattern[str] | None] = (None, None)
"""The schema whose property names all matched a pattern last, held, and that pattern (Anthropic's and
Bedrock's are one: the compatibility report checks one tool for both in a row)."""
_last_names: tuple[object, frozenset[str]] = (None, frozenset())
"""The schema whose names were collected last, held (so its identity cannot be reused), and its names."""


def property_names(schema: Any) -> frozenset[str]:
    """Every property name anywhere in ``schema`` (as :func:`_property_names` walks it).

    The compatibility report asks for one tool's names once per profile in a row, so the last
    schema's names are kept: profiles never change the schema they adapt.
    """
    global _last_names
    held, names = _last_names
    if held is schema:
        return names
    found: list[str] = []
    stack = [schema]
    push = stack.append  # loops rather than generators: a fifth fewer instructions on Jira's tools
    while stack:
        node = stack.pop()
        if type(node) is dict:
            for key, value in node.items():
                kind = type(value)
                if kind is dict:
                    if key == "properties":  # a map of names to schemas: its keys are names, never keywords
                        found.extend(value)
                        for sub in value.values():
                            kind = type(sub)
                            if kind is dict or kind is list:
                                push(sub)
                    else:
                        push(value)
                elif kind is list:
                    push(value)
        elif type(node) is list:
            for item in node:
                kind = type(item)
                if kind is dict or kind is list:
                    push(item)
    names = frozenset(found)
    _last_names = (schema, names)
    return names


def _property_names(node: Any, path: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            child = pointer(path, key)
            if key == "properties" and isinstance(value, dict):
                for prop, sub in value.items():
                    found.append((pointer(child, prop), prop))
                    found.extend(_property_names(sub, pointer(child, prop)))
            else:
                found.extend(_property_names(value, child))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found.extend(_property_names(item, f"{path}/{index}"))
    return found


def root_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot be a tool's input root for providers that need a plain object, or ``None``."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return "the parameters root must be a JSON Schema of type 'object'"
    for keyword in ("anyOf", "oneOf", "allOf"):
        if keyword in schema:
            return f"the parameters root cannot use {keyword!r}"
    return None


if TYPE_CHECKING:
    SchemaRewrite = Callable[[Rewrite, JsonSchema], Any]
    WireForm = Callable[[str, str, Any, ToolDefinition], ProviderTool]


def adapt_with(
    profile: str, tool: ToolDefinition, rules: ToolRules, schema: SchemaRewrite, wire: WireForm
) -> Adaptation:
    """Adapt ``tool``: name, description, property names and root checked, schema rewritten, wire form built.

    ``wire`` gets the fitted name, description, rewritten schema and the neutral tool.
    """
    rw = Rewrite()
    name = str(tool.get("name", ""))
    try:
        fitted, description, rewritten = _fit(rw, name, tool, rules, schema)
    except Refused as refused:
        return Adaptation(profile, name, None, (), refused.reason)
    return Adaptation(profile, name, wire(fitted, description, rewritten, tool), tuple(rw.changes))


def verdict_with(tool: ToolDefinition, rules: ToolRules, schema: SchemaRewrite) -> JsonObject:
    """``adapt_with(...).report()`` without the wire form or the :class:`Adaptation`: what the release's
    compatibility report needs of every tool and profile."""
    rw = Rewrite()
    try:
        _fit(rw, str(tool.get("name", "")), tool, rules, schema)
    except Refused as refused:
        return {"status": "refused", "reason": refused.reason}
    return _changed_or_ok(rw)


def takes_as_declared(name: str, description: str, rules: ToolRules, matched: dict[re.Pattern[str], bool]) -> bool:
    """Whether :func:`fit_name` and :func:`fit_description` leave ``name`` and ``description`` as they are.

    ``matched`` holds the name patterns tried on ``name`` so far: profiles that share a pattern
    match it once per tool."""
    pattern = rules.name_pattern
    if pattern not in matched:
        matched[pattern] = pattern.fullmatch(name) is not None
    limit = rules.description_max
    return (
        matched[pattern]
        and len(name) <= rules.name_max
        and len(description) >= rules.description_min
        and (limit is None or len(description) <= limit)
    )


def schema_verdict(parameters: JsonSchema, rules: ToolRules, schema: SchemaRewrite) -> JsonObject:
    """:func:`verdict_with` for a tool whose name and description the provider takes as they are
    (:func:`takes_as_declared`) and whose parameters root has no :func:`root_problem`.

    Of ``rules`` it reads only the property-name pattern: the compatibility report gives profiles alike
    in that and in ``schema`` one verdict."""
    if schema is unchanged and rules.property_name is None:
        return {"status": "ok"}  # nothing left to judge
    rw = Rewrite()
    try:
        check_property_names(parameters, rules)
        schema(rw, parameters)
    except Refused as refused:
        return {"status": "refused", "reason": refused.reason}
    return _changed_or_ok(rw)


def _changed_or_ok(rw: Rewrite) -> JsonObject:
    return {"status": "adapted", "changes": rw.changes} if rw.changes else {"status": "ok"}


def _fit(rw: Rewrite, name: str, tool: ToolDefinition, rules: ToolRules, schema: SchemaRewrite) -> tuple[str, str, Any]:
    fitted = fit_name(rw, name, rules)
    description = fit_description(rw, fitted, str(tool.get("description") or ""), rules)
    parameters = tool.get("parameters")
    problem = root_problem(parameters)
    if problem is not None:
        raise Refused(problem)
    assert isinstance(parameters, dict)
    check_property_names(parameters, rules)
    return fitted, description, schema(rw, parameters)


def unchanged(rw: Rewrite, schema: JsonSchema) -> JsonSchema:
    """The schema as declared: the provider takes full JSON Schema."""
    return schema
