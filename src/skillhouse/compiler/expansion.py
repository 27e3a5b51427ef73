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

from skillhouse.compiler.canonical import compact_encoder
from skillhouse.errors import CallerError
from skillhouse.records import record

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonSchema

    _Walked = tuple[Any, int, frozenset[str]]
    """What walking a node gives: its expansion, its node count, and the type names cut inside it (as :class:`_Expanded`).

    A tuple, not a record, and scalars are no call of their own: with a record for every value walked,
    expanding (the wizard measuring each operation, then the compile) was 3% of Jira's import
    (1389M instructions, 1349M so; Twilio's 950M, 916M)."""

TYPE_PREFIX = "#/types/"
SCHEMA_LIMIT = 24_576
NODE_BUDGET = SCHEMA_LIMIT * 2
"""Nodes an expansion may build: every JSON value takes at least one byte, so more can never fit."""
# Keywords whose value is data (a "$ref" key in an example is not a reference), and maps of names to schemas.
DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples", "example"})
NAMED_KEYWORDS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas", "definitions"})
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
    reach: frozenset[str] | None = None
    """The type names ``value``'s type refers to, itself through others included, once asked (see :func:`_reusable`)."""


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
    return _expand(schema, types, (), memo, budget)[0]


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
    value, nodes, _ = _expand(schema, types, (), expansions, [NODE_BUDGET])
    if own is None:
        own = len(compact_json(schema))  # the schema's own part: at least one character per node of it
    if expansions.by_value and own * 2 < nodes:
        try:
            return _sized(value, expansions.by_value, [own])
        except _WalkTooLong:
            pass
    return compact_size(value)


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


def _reusable(kept: _Expanded, name: str, stack: tuple[str, ...], types: dict[str, JsonSchema]) -> bool:
    """Whether the kept expansion of type ``name`` (made with no type around it) is what expanding it inside
    the types of ``stack`` gives: only when it refers to none of them. A type refers to one around it
    when they are in a cycle, and there it must be cut where it is met again (``{"type": "object"}``); the
    kept one has that type expanded inside, so reusing it made a type's expansion depend on which
    operation met it first (B in A → B → A was B → A → B → A when A had been kept before)."""
    if kept.reach is None:
        kept.reach = _refers_to(name, types)
    return kept.reach.isdisjoint(stack)


def _refers_to(name: str, types: dict[str, JsonSchema]) -> frozenset[str]:
    """The type names type ``name`` refers to, directly or through others (every ``#/types/`` reference
    in them, data keywords included: more names only means a kept expansion is reused less)."""
    found: set[str] = set()
    pending: list[Any] = [types[name]]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(TYPE_PREFIX):
                target = ref[len(TYPE_PREFIX) :]
                if target not in found and target in types:
                    found.add(target)
                    pending.append(types[target])
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return frozenset(found)


def _spend(budget: list[int], nodes: int) -> None:
    budget[0] -= nodes
    if budget[0] < 0:
        raise TooLarge


_NO_CUT: frozenset[str] = frozenset()
_NOTHING: frozenset[str] = frozenset()
_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Leaf types taken inline by their container: one node each, never a call of their own."""


def _expand(node: Any, types: dict[str, JsonSchema], stack: tuple[str, ...], memo: dict[str, _Expanded], budget: list[int]) -> _Walked:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if ref is not None:
            value, nodes, cut = _resolve(ref, types, stack, memo, budget)
            if len(node) == 1:  # the reference alone
                return value, nodes, cut
            rest, rest_nodes, rest_cut = _expand({k: v for k, v in node.items() if k != "$ref"}, types, stack, memo, budget)
            merged = {**value, **rest} if isinstance(value, dict) else {"allOf": [value], **rest}
            return merged, nodes + rest_nodes, cut | rest_cut
        return _object(node, DATA_KEYWORDS, NAMED_KEYWORDS, types, stack, memo, budget)
    if isinstance(node, list):
        return _array(node, types, stack, memo, budget)
    _spend(budget, 1)
    return node, 1, _NO_CUT


def _object(
    node: dict[str, Any],
    data: frozenset[str],
    named: frozenset[str],
    types: dict[str, JsonSchema],
    stack: tuple[str, ...],
    memo: dict[str, _Expanded],
    budget: list[int],
) -> _Walked:
    """A schema object (keys in ``data`` hold data, keys in ``named`` maps of names to schemas), or with
    both empty a map of names to schemas (``properties``), whose keys are names: one called ``$ref`` is not a reference.

    The object itself is the result until a member changes, and only then copied. Scalars are counted
    where they are met; the budget is spent from that count before anything that could raise is walked,
    so an expansion over the budget is refused exactly where spending one node at a time refused it.
    """
    if type(node) is not dict:  # a subclass: the expansion is a plain dict, as a changed one is
        node = dict(node.items())
    out: dict[str, Any] | None = None
    nodes = 1
    pending = 0  # nodes counted and not yet spent
    cut = _NO_CUT
    for key, value in node.items():
        if type(value) in _SCALARS:
            nodes += 1
            pending += 1
            continue
        if key in data:  # data is shared as is, never expanded
            count = _count(value)
            nodes += count
            pending += count
            continue
        if pending:
            _spend(budget, pending)
            pending = 0
        if key in named and isinstance(value, dict):
            child, count, child_cut = _object(value, _NOTHING, _NOTHING, types, stack, memo, budget)
        else:
            child, count, child_cut = _expand(value, types, stack, memo, budget)
        if child is not value:
            if out is None:
                out = dict(node)
            out[key] = child
        nodes += count
        if child_cut:
            cut = cut | child_cut
    _spend(budget, pending + 1)
    return node if out is None else out, nodes, cut


def _array(node: list[Any], types: dict[str, JsonSchema], stack: tuple[str, ...], memo: dict[str, _Expanded], budget: list[int]) -> _Walked:
    """A list of schemas (``allOf``...), kept as it is until an item changes; spent as :func:`_object` spends."""
    if type(node) is not list:
        node = list(node)
    out: list[Any] | None = None
    nodes = 1
    pending = 0
    cut = _NO_CUT
    for index, item in enumerate(node):
        if type(item) in _SCALARS:
            nodes += 1
            pending += 1
            if out is not None:
                out.append(item)
            continue
        if pending:
            _spend(budget, pending)
            pending = 0
        child, count, child_cut = _expand(item, types, stack, memo, budget)
        if out is None and child is not item:
            out = node[:index]
        if out is not None:
            out.append(child)
        nodes += count
        if child_cut:
            cut = cut | child_cut
    _spend(budget, pending + 1)
    return node if out is None else out, nodes, cut


def _count(value: Any) -> int:
    """Nodes of a data value (``enum``, ``default``...); data is shared as is, never expanded."""
    nodes, stack = 0, [value]
    while stack:
        item = stack.pop()
        nodes += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return nodes


def _resolve(ref: Any, types: dict[str, JsonSchema], stack: tuple[str, ...], memo: dict[str, _Expanded], budget: list[int]) -> _Walked:
    if not isinstance(ref, str) or not ref.startswith(TYPE_PREFIX):
        raise UnknownType(str(ref), f"reference {ref!r} is not supported; refer to shared types as '#/types/Name'")
    name = ref[len(TYPE_PREFIX) :]
    if name not in types:
        known = ", ".join(sorted(types)[:10]) or "none: add types.json"
        raise UnknownType(ref, f"type {name!r} is not in types.json (known: {known})")
    if name in stack:
        _spend(budget, 3)
        return {"type": "object"}, 3, frozenset({name})
    cached = memo.get(name)
    if cached is not None and (not stack or _reusable(cached, name, stack, types)):
        _spend(budget, cached.nodes)
        return cached.value, cached.nodes, _NO_CUT
    value, nodes, cut = _expand(types[name], types, (*stack, name), memo, budget)
    # Only an expansion that does not depend on the outer stack can be reused elsewhere.
    if cut <= {name}:
        kept = memo[name] = _Expanded(value, nodes, _NO_CUT)
        if isinstance(memo, Expansions):
            memo.by_value.setdefault(id(kept.value), kept)
        return value, nodes, _NO_CUT
    return value, nodes, cut - {name}
