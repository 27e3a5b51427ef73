"""Expanding ``#/types/Name`` references so that each tool's schema stands alone.

Providers take each tool's schema by itself and several refuse ``$ref``. A type that contains
itself stops at ``{"type": "object"}``. Only schema positions are expanded: a property named
``$ref`` is a property, and an example holding a ``$ref`` key is data. Expansion shares already-expanded subtrees (they are never
mutated afterwards), and a subtree without a reference is the input's own object rather than a copy
(no schema or type is mutated once written, so the expanded schemas and the types they came from share
what is the same in both: for a large spec, megabytes of copies otherwise held to the end of an import).
It counts nodes, so a DAG of types that would expand to gigabytes is refused as too large long before
it is built.
"""

from __future__ import annotations

from operator import is_

from skillhouse.compiler.canonical import compact_encoder
from skillhouse.errors import CallerError
from skillhouse.records import record

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonSchema

TYPE_PREFIX = "#/types/"
SCHEMA_LIMIT = 24_576
NODE_BUDGET = SCHEMA_LIMIT * 2
"""Nodes an expansion may build: every JSON value takes at least one byte, so more can never fit."""
# Keywords whose value is data (a "$ref" key in an example is not a reference), and maps of names to schemas.
_DATA = frozenset({"enum", "const", "default", "examples", "example"})
_NAMED = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas", "definitions"})
_compact = compact_encoder(sort_keys=False, allow_nan=True)  # made once: sizes are measured often


class UnknownType(CallerError):
    """A ``$ref`` that names no shared type (``unknown-type``); ``ref`` is the reference, ``reason`` what to write."""

    code = "unknown-type"

    def __init__(self, ref: str, reason: str) -> None:
        super().__init__(reason)
        self.ref = ref
        self.reason = reason


class TooLarge(CallerError):
    """The expanded schema is over the size limit (``schema-too-large``); split the operation's arguments."""

    code = "schema-too-large"

    def __init__(self, message: str = f"the expanded schema is over {SCHEMA_LIMIT} bytes") -> None:
        super().__init__(message)


@record
class _Expanded:
    value: Any
    nodes: int
    cut: frozenset[str]
    """Type names replaced by ``{"type": "object"}`` inside: the value depends on them being on the stack."""
    size: int | None = None
    """Bytes of ``value``'s compact JSON, once measured (kept expansions only)."""


class Expansions(dict[str, _Expanded]):
    """Types already expanded, by name: pass one to :func:`expand_types` for every schema of one set of types.

    Each kept expansion is also found by the identity of its value, which every schema using the type
    shares, so :func:`expansion_size` measures a shared type once rather than once per schema.
    """

    def __init__(self) -> None:
        super().__init__()
        self.by_value: dict[int, _Expanded] = {}


def expand_types(schema: Any, types: dict[str, JsonSchema], expansions: Expansions | None = None) -> Any:
    """Return ``schema`` with every ``#/types/Name`` reference replaced by the type's schema.

    Raises :class:`UnknownType` for a reference that is not to a type in ``types`` and
    :class:`TooLarge` when the expansion cannot fit in :data:`SCHEMA_LIMIT` bytes.

    ``expansions`` (from :func:`new_expansions`) keeps each type's expansion for the next schema, so
    a package's operations expand a shared type once rather than once each; it is valid while no
    type of ``types`` changes (types may be added). Each schema still spends its own node budget
    for every type it uses, so the size limit holds exactly as without it. Expanded subtrees are
    shared between the schemas (never mutate them).
    """
    memo: dict[str, _Expanded] = {} if expansions is None else expansions
    budget = [NODE_BUDGET]
    return _expand(schema, types, (), memo, budget).value


def new_expansions() -> Expansions:
    """An empty store of expanded types for :func:`expand_types`."""
    return Expansions()


def compact_size(schema: Any) -> int:
    """Bytes of the compact UTF-8 JSON of ``schema``: the measure of the size cap."""
    return len(_compact(schema).encode("utf-8"))


class _WalkTooLong(Exception):
    pass


def expansion_size(schema: Any, types: dict[str, JsonSchema], expansions: Expansions, own: int | None = None) -> int:
    """``compact_size(expand_types(schema, types, expansions))``, measuring each kept type once.

    Compact JSON is compositional (an object is its members, each ``"key":value``, with braces and
    commas), so where the expansion is mostly kept types (a request body made of a few large shared
    types, as many specs have), the schema's own nodes are walked and each kept type's expansion adds
    the size measured the first time it was met, instead of encoding the whole expansion again for
    every operation using it. A schema mostly of its own is encoded whole, which is faster than a walk;
    so is anything but plain dicts, lists and strings. A property test holds both measures equal.
    ``own`` is the length of ``schema``'s own compact JSON, when the caller has it already. Raises as
    :func:`expand_types` does.
    """
    expanded = _expand(schema, types, (), expansions, [NODE_BUDGET])
    if own is None:
        own = len(compact_json(schema))  # the schema's own part: at least one character per node of it
    if expansions.by_value and own * 2 < expanded.nodes:
        try:
            return _sized(expanded.value, expansions.by_value, [own])
        except _WalkTooLong:
            pass
    return compact_size(expanded.value)


def _sized(node: Any, shared: dict[int, _Expanded], budget: list[int]) -> int:
    entry = shared.get(id(node))
    if entry is not None:
        if entry.size is None:
            entry.size = compact_size(entry.value)
        return entry.size
    budget[0] -= 1
    if budget[0] < 0:
        raise _WalkTooLong
    kind = type(node)
    if kind is str:
        return len(_compact(node).encode("utf-8"))
    if kind is dict:
        if not node:
            return 2
        total = len(node) + 1  # the braces and the commas between members, and a colon each below
        for key, item in node.items():
            if type(key) is not str:
                raise _WalkTooLong  # the encoder's own rules for other keys: measured whole
            total += len(_compact(key).encode("utf-8")) + 1 + _sized(item, shared, budget)
        return total
    if kind is list:
        if not node:
            return 2
        return len(node) + 1 + sum(_sized(item, shared, budget) for item in node)
    return len(_compact(node).encode("utf-8"))  # numbers, booleans, null: as the encoder writes them


def compact_json(schema: Any) -> str:
    """The compact JSON text of ``schema`` (non-ASCII as is) that :func:`compact_size` measures."""
    return str(_compact(schema))


def _spend(budget: list[int], nodes: int) -> None:
    budget[0] -= nodes
    if budget[0] < 0:
        raise TooLarge


def _expand(node: Any, types: dict[str, JsonSchema], stack: tuple[str, ...], memo: dict[str, _Expanded], budget: list[int]) -> _Expanded:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if ref is not None:
            resolved = _resolve(ref, types, stack, memo, budget)
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if not siblings:
                return resolved
            rest = _expand(siblings, types, stack, memo, budget)
            value = resolved.value
            merged = {**value, **rest.value} if isinstance(value, dict) else {"allOf": [value], **rest.value}
            return _Expanded(merged, resolved.nodes + rest.nodes, resolved.cut | rest.cut)
        out: JsonSchema = {}
        nodes = 1
        cut: frozenset[str] = frozenset()
        unchanged = type(node) is dict
        for key, value in node.items():
            if key in _DATA:
                child = _Expanded(value, _count(value, budget), frozenset())
            elif key in _NAMED and isinstance(value, dict):
                child = _named(value, types, stack, memo, budget)
            else:
                child = _expand(value, types, stack, memo, budget)
            out[key] = child.value
            unchanged = unchanged and child.value is value
            nodes += child.nodes
            cut |= child.cut
        _spend(budget, 1)
        return _Expanded(node if unchanged else out, nodes, cut)
    if isinstance(node, list):
        items = [_expand(item, types, stack, memo, budget) for item in node]
        _spend(budget, 1)
        cut = frozenset().union(*(i.cut for i in items)) if items else frozenset()
        values = [i.value for i in items]
        unchanged = type(node) is list and all(map(is_, values, node))
        return _Expanded(node if unchanged else values, 1 + sum(i.nodes for i in items), cut)
    _spend(budget, 1)
    return _Expanded(node, 1, frozenset())


def _named(node: dict[str, Any], types: dict[str, Any], stack: tuple[str, ...], memo: dict[str, _Expanded], budget: list[int]) -> _Expanded:
    """A map of names to schemas (``properties``): its keys are names, so one called ``$ref`` is not a reference."""
    out: dict[str, Any] = {}
    nodes = 1
    cut: frozenset[str] = frozenset()
    unchanged = type(node) is dict
    for name, value in node.items():
        child = _expand(value, types, stack, memo, budget)
        out[name] = child.value
        unchanged = unchanged and child.value is value
        nodes += child.nodes
        cut |= child.cut
    _spend(budget, 1)
    return _Expanded(node if unchanged else out, nodes, cut)


def _count(value: Any, budget: list[int]) -> int:
    """Nodes of a data value (``enum``, ``default``...), spent from the budget; data is shared as is, never expanded."""
    nodes, stack = 0, [value]
    while stack:
        item = stack.pop()
        nodes += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    _spend(budget, nodes)
    return nodes


def _resolve(ref: Any, types: dict[str, JsonSchema], stack: tuple[str, ...], memo: dict[str, _Expanded], budget: list[int]) -> _Expanded:
    if not isinstance(ref, str) or not ref.startswith(TYPE_PREFIX):
        raise UnknownType(str(ref), f"reference {ref!r} is not supported; refer to shared types as '#/types/Name'")
    name = ref[len(TYPE_PREFIX) :]
    if name not in types:
        known = ", ".join(sorted(types)[:10]) or "none: add types.json"
        raise UnknownType(ref, f"type {name!r} is not in types.json (known: {known})")
    if name in stack:
        _spend(budget, 3)
        return _Expanded({"type": "object"}, 3, frozenset({name}))
    cached = memo.get(name)
    if cached is not None:
        _spend(budget, cached.nodes)
        return cached
    expanded = _expand(types[name], types, (*stack, name), memo, budget)
    # Only an expansion that does not depend on the outer stack can be reused elsewhere.
    if expanded.cut <= {name}:
        kept = memo[name] = _Expanded(expanded.value, expanded.nodes, frozenset())
        if isinstance(memo, Expansions):
            memo.by_value.setdefault(id(kept.value), kept)
        return kept
    return _Expanded(expanded.value, expanded.nodes, expanded.cut - {name})
