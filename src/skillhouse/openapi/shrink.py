"""Fitting a tool schema into the compiler's 24 KB cap, deterministically, saying what was dropped.

The order is fixed: first the descriptions, titles and examples below the arguments themselves;
then nested schemas are cut, deepest level first, to the types they allow (``{"type": "object"}``,
``"array"``, ``["string", "null"]``, or none when unknown) with a short note; last, the arguments' own descriptions. The result is written inline (no ``#/types``
references): it is a shortened copy, not the shared type. ``None`` means it cannot fit.
"""

from __future__ import annotations

from skillhouse.compiler.expansion import (
    DATA_KEYWORDS,
    NAMED_KEYWORDS,
    SCHEMA_LIMIT,
    Expansions,
    TooLarge,
    UnknownType,
    compact_json,
    compact_size,
    expand_types,
    expansion_size,
)

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonObject, JsonSchema

TYPE_PREFIX = "#/types/"
CUT_NOTE = "Nested fields not listed (tool size limit); see the API reference."
_TEXT = ("description", "title", "examples", "example")
_CHILD_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_CHILD_ONE = ("items", "additionalProperties", "not")
_COMPOSITE = frozenset(("properties", "items", "prefixItems", "allOf", "anyOf", "oneOf", "additionalProperties", "not"))
_NODE_BUDGET = 400_000


class _OutOfBudget(Exception):
    pass


def expanded_size(schema: JsonSchema, types: dict[str, JsonSchema], expansions: Expansions | None = None) -> int | None:
    """Bytes of ``schema`` as the compiler will expand it; ``None`` when far over the cap.

    ``expansions`` is kept across the operations of one import (see :func:`expand_types`): the
    converter only adds types, and a type it drops (its conversion failed) was never expanded.
    """
    text = compact_json(schema)
    if '"$ref"' not in text:  # no reference anywhere: the schema is its own expansion
        return len(text.encode("utf-8"))
    try:
        if expansions is None:
            return compact_size(expand_types(schema, types))
        size = _size_by_parts(schema, text, types, expansions)
        if size is not None:
            return size
        return expansion_size(schema, types, expansions, own=len(text))
    except TooLarge:
        return None
    except (UnknownType, RecursionError):
        return None


def _size_by_parts(schema: JsonSchema, text: str, types: dict[str, JsonSchema], expansions: Expansions) -> int | None:
    """:func:`expansion_size` of ``schema`` (whose compact JSON is ``text``) when it is within the cap,
    from its own size and the sizes of the types it refers to; else ``None``, ``expansions`` as it was.

    Compact JSON is compositional, so the expansion is the schema's own text with each ``{"$ref": ...}``
    replaced by its type's kept expansion (a reference outside every type meets no type on the stack, so
    it expands to the kept one, each type expanded and measured once). The expansion of the whole schema
    built a record per node of it for each operation, most of the work for a schema that is mostly its
    own (a long request body with a reference or two): this spares 1.1% of Jira's import and 2.1% of Twilio's.

    The walk stops once the types it met are over the cap (a schema over it goes to the expansion
    without each of its types measured first: at OpenAI's peak, their texts had cost 0.2 MB more).
    A size within the cap is exact, and so is every type kept meanwhile: its node count is within the
    expansion's budget, so the expansion of the whole would have met each type where the walk did, in
    the same order, and kept the same expansion (which one is kept for a type in a cycle depends on where
    it is first met). Anything else (a size over the cap, a reference the walk leaves to the expansion,
    a type over the budget, a lone surrogate, which UTF-8 cannot encode) forgets the types kept meanwhile,
    so the expansion then meets them as it would have, and raises what it would have.
    """
    known = len(expansions)
    try:
        own = len(text.encode("utf-8"))
        room = [SCHEMA_LIMIT - own]
        grown = _growth(schema, types, expansions, room)
    except (TooLarge, UnknownType, RecursionError, UnicodeEncodeError):
        grown = None
    if grown is not None and room[0] >= 0:
        return own + grown
    for name in list(expansions)[known:]:
        kept = expansions.pop(name)
        if expansions.by_value.get(id(kept.value)) is kept:
            del expansions.by_value[id(kept.value)]
    return None


def _growth(node: Any, types: dict[str, JsonSchema], expansions: Expansions, room: list[int]) -> int | None:
    """Bytes that expanding ``node`` adds to its compact JSON, walking its own nodes as :func:`expand_types`
    does (its own keyword sets say which values are data and which are maps of names to schemas), each
    taken from ``room``; ``None`` for what only the expansion can tell (a reference with keywords beside
    it, or to no type), or once ``room`` is below zero."""
    kind = type(node)
    if kind is dict:
        ref = node.get("$ref")
        if ref is not None:
            if len(node) != 1 or type(ref) is not str or not ref.startswith(TYPE_PREFIX) or ref[len(TYPE_PREFIX) :] not in types:
                return None
            grown = expansion_size(node, types, expansions) - compact_size(node)
            room[0] -= grown
            return grown if room[0] >= 0 else None
        children: Any = []
        for key, value in node.items():
            held = type(value)
            if held is dict:
                if key in NAMED_KEYWORDS:
                    children.extend(value.values())
                elif key not in DATA_KEYWORDS:
                    children.append(value)
            elif held is list:
                if key not in DATA_KEYWORDS:
                    children.append(value)
            elif isinstance(value, dict | list):
                return None  # a subclass: left to the expansion
    elif kind is list:
        children = node
    else:
        return None if isinstance(node, dict | list) else 0
    grown = 0
    for child in children:
        held = type(child)
        if held is dict or held is list:
            more = _growth(child, types, expansions, room)
            if more is None:
                return None
            grown += more
        elif isinstance(child, dict | list):
            return None
    return grown


def fits_as_written(text: str) -> bool:
    """Whether a schema whose :func:`~skillhouse.openapi.json_block.indented_json` text is ``text`` is surely
    within :data:`SCHEMA_LIMIT` once expanded, so :func:`expanded_size` need not measure it.

    Without a reference it is its own expansion, and its compact UTF-8 JSON is never longer than this
    text: the same tokens without the indentation, each string's ASCII the same, and each other character
    of the basic plane at most three bytes for its six-character escape. A surrogate is an escape starting
    ``\\ud``: a lone one, which UTF-8 cannot encode (measuring it raises), or half of a pair for a character
    beyond the basic plane, which the text does not tell apart; such a text is measured.
    The wizard renders an operation's schema before measuring it, and most schemas (Jira's: 418 of 468)
    are then never encoded a second time: 1.3% of Jira's import, 1.5% of Twilio's.
    """
    return len(text) <= SCHEMA_LIMIT and '"$ref"' not in text and "\\ud" not in text


def fit_schema(schema: JsonSchema, types: dict[str, JsonSchema], limit: int = SCHEMA_LIMIT) -> tuple[JsonSchema, list[str]] | None:
    """A copy of ``schema`` within ``limit`` bytes once expanded, and what was dropped; or ``None``."""
    tree: JsonSchema | None = None
    for max_level in (16, 10, 6, 4, 3, 2, 1):
        try:
            tree = _Build(types, max_level).node(schema, 0, ())
            break
        except (_OutOfBudget, RecursionError):
            continue
    if tree is None:
        return None
    notes = ["dropped descriptions and examples below the arguments"]
    savings: dict[int, int] = {}
    deepest, size = _cut_savings(tree, 0, savings)  # the tree's size, and what each cut level saves
    if size <= limit:
        return tree, notes
    for level in range(deepest - 1, 0, -1):
        if size - savings.get(level, 0) <= limit:
            return _cut(tree, 0, level), [*notes, f"cut schemas nested deeper than {level} level(s) to their bare type"]
    bare = _strip_arguments(_cut(tree, 0, 1))
    if compact_size(bare) <= limit:
        return bare, [*notes, "cut every nested schema to its bare type", "dropped the arguments' descriptions"]
    return None


class _Build:
    """One expansion of a schema for :func:`fit_schema`, cutting composites at ``max_level``.

    A type reached again at the same level is built once: its copy is shared (nothing mutates it),
    and the nodes it took are spent from the budget again, so the budget runs out exactly where a
    full copy would. A type's copy is kept only when it does not depend on the types being expanded
    around it (a type that contains one of those stops there at ``{"type": "object"}``): ``low`` is
    the outermost place on the stack that such a stop reached while the type was built.
    """

    def __init__(self, types: dict[str, JsonSchema], max_level: int) -> None:
        self.types = types
        self.max_level = max_level
        self.budget = _NODE_BUDGET
        self.built: dict[tuple[str, int], tuple[Any, int]] = {}
        self.low = _NOWHERE

    def node(self, node: Any, level: int, stack: tuple[str, ...]) -> Any:
        self.budget -= 1
        if self.budget < 0:
            raise _OutOfBudget
        if isinstance(node, list):
            return [self.node(v, level, stack) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(TYPE_PREFIX):
            target = self.type(ref[len(TYPE_PREFIX) :], level, stack)
            rest = {k: v for k, v in node.items() if k != "$ref"}
            if not rest:
                return target
            built_rest = self.node(rest, level, stack)
            return {**target, **built_rest} if isinstance(target, dict) else {"allOf": [target], **built_rest}
        if level >= self.max_level and _is_composite(node):
            return _bare(node)
        out: JsonSchema = {}
        deep = level >= 2
        for key, value in node.items():
            kind = _BUILD_KEYS.get(key)
            if kind is not None:
                if kind is _TEXT_KEY:
                    if deep:
                        continue
                elif kind is _DATA or kind is _EXAMPLES:
                    if deep and kind is _EXAMPLES:
                        continue
                    out[key] = value  # data, not schema: shared as is
                    continue
                elif kind is _MAP:
                    if isinstance(value, dict):
                        out[key] = {k: self.node(v, level + 1, stack) for k, v in value.items()}
                        continue
                elif kind is _ONE:
                    if isinstance(value, dict):
                        out[key] = self.node(value, level + 1, stack)
                        continue
                elif isinstance(value, list):
                    below = level + 1 if kind is _ITEMS_LIST else level
                    out[key] = [self.node(v, below, stack) for v in value]
                    continue
            held = type(value)
            if held is str or held is bool or held is int or value is None:
                # what node() does with a scalar, without the call: one node spent, the value kept
                self.budget -= 1
                if self.budget < 0:
                    raise _OutOfBudget
                out[key] = value
            else:
                out[key] = self.node(value, level, stack)
        return out

    def type(self, name: str, level: int, stack: tuple[str, ...]) -> Any:
        if name in stack:
            self.low = min(self.low, stack.index(name))
            return {"type": "object"}
        if name not in self.types:
            return {"type": "object"}
        kept = self.built.get((name, level))
        if kept is not None:
            value, nodes = kept
            self.budget -= nodes
            if self.budget < 0:
                raise _OutOfBudget
            return value
        outer, self.low, before = self.low, _NOWHERE, self.budget
        value = self.node(self.types[name], level, (*stack, name))
        inner, self.low = self.low, min(outer, self.low)
        if inner >= len(stack):  # every stop inside is at this type or below it
            self.built[(name, level)] = (value, before - self.budget)
        return value


_NOWHERE = 1 << 30
"""Deeper than any stack: no stop reached."""


def _is_composite(node: JsonSchema) -> bool:
    return not _COMPOSITE.isdisjoint(node)


def _bare(node: JsonSchema) -> JsonSchema:
    """``node`` cut to the types it allows, with the note; no type when they are not known (an
    ``anyOf`` over references, say): a cut never claims a type the API does not take."""
    kinds = _kinds(node)
    if kinds is None:
        return {"description": CUT_NOTE}
    return {"type": kinds if len(kinds) > 1 else kinds[0], "description": CUT_NOTE}


def _kinds(node: Any) -> list[str] | None:
    if not isinstance(node, dict):
        return None
    kind = node.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)] or None
    if "properties" in node or "additionalProperties" in node:
        return ["object"]
    if "items" in node or "prefixItems" in node:
        return ["array"]
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and branches:
            out: list[str] = []
            for branch in branches:
                found = _kinds(branch)
                if found is None:
                    return None
                out.extend(k for k in found if k not in out)
            return out
    branches = node.get("allOf")
    if isinstance(branches, list):
        for branch in branches:
            found = _kinds(branch)
            if found is not None:
                return found
    return None


_Walk = dict[tuple[int, int], tuple[int, int, dict[int, int]]]


def _cut_savings(node: JsonSchema, level: int, savings: dict[int, int], walked: _Walk | None = None) -> tuple[int, int]:
    """The deepest level under ``node`` and its compact size; adds to ``savings[n]`` what cutting at ``n`` saves.

    Cutting at level ``n`` replaces each composite schema first reached at level ``n`` (through a
    ``properties``, ``items``, ``additionalProperties``, ``not`` or ``prefixItems`` edge; one reached
    through ``allOf``/``anyOf``/``oneOf`` sits inside a composite of its own level, which is cut first)
    by its bare type. In compact JSON a replaced value changes the size by exactly its own difference,
    so the size of every cut is known from one walk instead of one copy per level. Sizes are summed the
    same way: a node is encoded with each child schema stood in for by ``0`` (one byte), plus the
    children's own sizes, so each byte is encoded once rather than once per enclosing level.
    Only composite children are stood in for and walked: a leaf schema has nothing below it to cut,
    and a node whose children are all leaves is encoded as it is, without a copy.

    A subtree the build shares (a type reached again at the same level) is walked once: ``walked``
    keeps its figures by identity and level (the tree, alive throughout, keeps identities unique).
    """
    walked = {} if walked is None else walked
    seen = walked.get((id(node), level))
    if seen is not None:
        for at, saved in seen[2].items():
            savings[at] = savings.get(at, 0) + saved
        return seen[0], seen[1]
    own: dict[int, int] = {}
    deepest = level
    shallow: JsonSchema | None = None  # ``node`` with its composite children stood in for, once it has one
    children_bytes = 0
    for key, value in node.items():
        edge = _EDGES.get(key)
        if edge is None:
            continue
        if edge is _MAP:
            if not isinstance(value, dict):
                continue
            pairs: Any = value.items()
        elif edge is _ONE:
            if not isinstance(value, dict):
                continue
            pairs = ((None, value),)
        else:
            if not isinstance(value, list):
                continue
            pairs = enumerate(value)
        child_level = level + 1 if edge is not _LIST else level
        stood_in: Any = None  # the copy of ``value`` with walked children as 0, made at the first one
        for at, child in pairs:
            if not (isinstance(child, dict) and not _COMPOSITE.isdisjoint(child)):
                # A leaf schema has no edge to walk: it is encoded as part of this node.
                if child_level > deepest:
                    deepest = child_level
                continue
            child_deepest, child_size = _cut_savings(child, child_level, own, walked)
            children_bytes += child_size - 1
            if child_level > level:
                own[child_level] = own.get(child_level, 0) + child_size - _bare_size(child)
            if child_deepest > deepest:
                deepest = child_deepest
            if edge is _ONE:
                stood_in = 0
            else:
                if stood_in is None:
                    stood_in = dict(value) if edge is _MAP else list(value)
                stood_in[at] = 0
        if stood_in is not None:
            if shallow is None:
                shallow = dict(node)
            shallow[key] = stood_in
    size = compact_size(node if shallow is None else shallow) + children_bytes
    walked[(id(node), level)] = (deepest, size, own)
    for at, saved in own.items():
        savings[at] = savings.get(at, 0) + saved
    return deepest, size


_MAP, _ONE, _LIST, _ITEMS_LIST = "map", "one", "list", "items-list"
_EDGES = {
    "properties": _MAP, **dict.fromkeys(_CHILD_ONE, _ONE), **dict.fromkeys(_CHILD_LISTS, _LIST), "prefixItems": _ITEMS_LIST,
}
"""The keywords whose values hold schemas, by how: a map of them, one, a list at the same level, or
``prefixItems``' list a level down."""
_TEXT_KEY, _DATA, _EXAMPLES = "text", "data", "examples"
_BUILD_KEYS = {
    **_EDGES, **dict.fromkeys(_TEXT, _TEXT_KEY), "enum": _DATA, "const": _DATA, "default": _DATA, "examples": _EXAMPLES,
}
"""How the build treats a keyword: text dropped below the arguments, data shared as is (``examples``
is both), schemas built; any other keyword's value is copied."""


_BARE_SIZES: dict[tuple[str, ...] | None, int] = {}


def _bare_size(node: JsonSchema) -> int:
    """``compact_size(_bare(node))``, which depends only on the types it allows."""
    kinds = _kinds(node)
    key = tuple(kinds) if kinds is not None else None
    size = _BARE_SIZES.get(key)
    if size is None:
        size = _BARE_SIZES[key] = compact_size(_bare(node))
    return size


def _cut(node: Any, level: int, max_level: int) -> Any:
    if not isinstance(node, dict):
        return node
    if level >= max_level and _is_composite(node):
        return _bare(node)
    out: JsonSchema = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {k: _cut(v, level + 1, max_level) for k, v in value.items()}
        elif key in _CHILD_ONE and isinstance(value, dict):
            out[key] = _cut(value, level + 1, max_level)
        elif key in _CHILD_LISTS and isinstance(value, list):
            out[key] = [_cut(v, level + (key == "prefixItems"), max_level) for v in value]
        else:
            out[key] = value
    return out


def _strip_arguments(root: JsonObject) -> JsonObject:
    properties = root.get("properties", {})
    stripped = {k: {kk: vv for kk, vv in v.items() if kk not in _TEXT} if isinstance(v, dict) else v for k, v in properties.items()}
    return {**root, "properties": stripped}
