"""The expansion walk (scalars taken inline, a container copied only once a member changes, the budget
spent in batches) gives what the plain recursive definition gives: the same expansion, node count,
cut types, refusals and the same objects shared with the input."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillhouse.compiler import expansion
from skillhouse.compiler.expansion import NODE_BUDGET, TooLarge, UnknownType, expand_types, new_expansions

_TYPE_PREFIX = "#/types/"


class _Reference:
    """The definition, one call and one spent node per value (what the walk did before it was made cheaper)."""

    def __init__(self, types: dict[str, Any], budget: int, keep: bool = True) -> None:
        self.types, self.budget, self.memo = types, budget, {}  # type: dict[str, Any], int, dict[str, tuple[Any, int]]
        self.keep = keep
        """Whether expansions are kept for reuse; without, every type is expanded where it is met (the definition)."""

    def refers_to(self, name: str) -> set[str]:
        found, pending = set(), [self.types[name]]  # type: set[str], list[Any]
        while pending:
            node = pending.pop()
            if isinstance(node, dict):
                ref = node.get("$ref")
                target = ref[len(_TYPE_PREFIX) :] if isinstance(ref, str) and ref.startswith(_TYPE_PREFIX) else None
                if target in self.types and target not in found:
                    found.add(target)
                    pending.append(self.types[target])
                pending.extend(node.values())
            elif isinstance(node, list):
                pending.extend(node)
        return found

    def spend(self, nodes: int) -> None:
        self.budget -= nodes
        if self.budget < 0:
            raise TooLarge

    def expand(self, node: Any, stack: tuple[str, ...]) -> tuple[Any, int, frozenset[str]]:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if ref is not None:
                value, nodes, cut = self.resolve(ref, stack)
                siblings = {k: v for k, v in node.items() if k != "$ref"}
                if not siblings:
                    return value, nodes, cut
                rest, more, rest_cut = self.expand(siblings, stack)
                merged = {**value, **rest} if isinstance(value, dict) else {"allOf": [value], **rest}
                return merged, nodes + more, cut | rest_cut
            return self.members(node, stack, named=False)
        if isinstance(node, list):
            items = [self.expand(item, stack) for item in node]
            self.spend(1)
            values = [value for value, _, _ in items]
            unchanged = type(node) is list and all(a is b for a, b in zip(values, node, strict=True))
            return node if unchanged else values, 1 + sum(n for _, n, _ in items), frozenset().union(*(c for _, _, c in items))
        self.spend(1)
        return node, 1, frozenset()

    def members(self, node: dict[str, Any], stack: tuple[str, ...], named: bool) -> tuple[Any, int, frozenset[str]]:
        out, nodes, cut, unchanged = {}, 1, frozenset(), type(node) is dict  # type: dict[str, Any], int, frozenset[str], bool
        for key, value in node.items():
            if not named and key in ("enum", "const", "default", "examples", "example"):
                count = self.count(value)
                child: tuple[Any, int, frozenset[str]] = (value, count, frozenset())
            elif not named and key in ("properties", "patternProperties", "$defs", "dependentSchemas", "definitions") and isinstance(value, dict):
                child = self.members(value, stack, named=True)
            else:
                child = self.expand(value, stack)
            out[key] = child[0]
            unchanged = unchanged and child[0] is value
            nodes += child[1]
            cut |= child[2]
        self.spend(1)
        return node if unchanged else out, nodes, cut

    def count(self, value: Any) -> int:
        nodes, stack = 0, [value]
        while stack:
            item = stack.pop()
            nodes += 1
            if isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        self.spend(nodes)
        return nodes

    def resolve(self, ref: Any, stack: tuple[str, ...]) -> tuple[Any, int, frozenset[str]]:
        if not isinstance(ref, str) or not ref.startswith(_TYPE_PREFIX) or ref[len(_TYPE_PREFIX) :] not in self.types:
            raise UnknownType(str(ref), "unknown")
        name = ref[len(_TYPE_PREFIX) :]
        if name in stack:
            self.spend(3)
            return {"type": "object"}, 3, frozenset({name})
        if name in self.memo and self.refers_to(name).isdisjoint(stack):  # kept with no type around it
            value, nodes = self.memo[name]
            self.spend(nodes)
            return value, nodes, frozenset()
        value, nodes, cut = self.expand(self.types[name], (*stack, name))
        if cut <= {name} and self.keep:
            self.memo[name] = (value, nodes)
            return value, nodes, frozenset()
        return value, nodes, cut - {name}


def _outcome(walk: Any) -> Any:
    try:
        return walk()
    except TooLarge:
        return "too-large"
    except UnknownType:
        return "unknown-type"


_NAMES = ["A", "B", "C"]
_SCALARS = st.one_of(st.text(max_size=4), st.integers(min_value=-(2**70), max_value=2**70), st.floats(), st.booleans(), st.none())
_REF = st.builds(lambda name: {"$ref": _TYPE_PREFIX + name}, st.sampled_from([*_NAMES, "Missing"]))
_LEAVES = st.one_of(
    _SCALARS,
    _REF,
    st.builds(lambda ref, note: {**ref, "description": note}, _REF, st.text(alphabet="aé\u2028\x00", max_size=3)),
    st.fixed_dictionaries({"$ref": st.one_of(st.none(), st.integers())}),
    st.fixed_dictionaries({"enum": st.lists(st.one_of(_SCALARS, _REF), max_size=3)}),
    st.fixed_dictionaries({"properties": st.fixed_dictionaries({"$ref": _REF})}),
)
_SCHEMAS = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.dictionaries(st.sampled_from(["type", "items", "not", "x-note", "default", "properties", "$defs", "allOf"]), inner, max_size=4),
        st.fixed_dictionaries({"type": st.just("object"), "properties": st.dictionaries(st.text(max_size=3), inner, max_size=4)}),
        st.lists(inner, max_size=3),
    ),
    max_leaves=14,
)


@settings(max_examples=1500, deadline=None)
@given(types=st.fixed_dictionaries({name: _SCHEMAS for name in _NAMES}), schemas=st.lists(_SCHEMAS, min_size=1, max_size=4),
       budget=st.integers(0, 60))  # fmt: skip
def test_the_walk_gives_what_the_recursive_definition_gives(types: dict[str, Any], schemas: list[Any], budget: int) -> None:
    # one store for the schemas, as one package's operations share it; a small budget reaches every refusal point
    reference, memo = _Reference(types, budget), new_expansions()
    for schema in schemas:
        reference.budget = budget
        expected = _outcome(lambda: reference.expand(schema, ()))  # noqa: B023 - called at once
        got = _outcome(lambda: expansion._expand(schema, types, (), memo, [budget]))  # noqa: B023
        assert repr(got) == repr(expected)  # key order and value types included
        if isinstance(got, tuple):
            assert (got[0] is schema) == (expected[0] is schema)  # a schema without a reference is its own expansion
    assert {name: (kept.value, kept.nodes) for name, kept in memo.items()} == reference.memo


@settings(max_examples=600, deadline=None)
@given(types=st.fixed_dictionaries({name: _SCHEMAS for name in _NAMES}), schemas=st.lists(_SCHEMAS, min_size=1, max_size=4),
       order=st.randoms(use_true_random=False))  # fmt: skip
def test_a_kept_expansion_never_changes_what_a_schema_expands_to_whatever_the_order(types: dict[str, Any], schemas: list[Any], order: Any) -> None:
    # The store is an optimisation: each schema expands as it would alone, with nothing kept, in any order of the
    # schemas (a package's operations); a type in a cycle is cut where it is met again, never expanded inside itself.
    order.shuffle(schemas)
    memo = new_expansions()
    for schema in schemas:
        alone = _outcome(lambda: _Reference(types, NODE_BUDGET, keep=False).expand(schema, ()))  # noqa: B023 - called at once
        got = _outcome(lambda: expansion._expand(schema, types, (), memo, [NODE_BUDGET]))  # noqa: B023
        assert repr(got[:2] if isinstance(got, tuple) else got) == repr(alone[:2] if isinstance(alone, tuple) else alone)


def test_a_type_in_a_cycle_expands_the_same_whichever_operation_met_it_first() -> None:
    types = {"A": {"type": "array", "items": {"$ref": "#/types/B"}}, "B": {"anyOf": [{"$ref": "#/types/A"}, {"type": "string"}]}}
    a, b = {"$ref": "#/types/A"}, {"$ref": "#/types/B"}
    alone = expand_types(a, types), expand_types(b, types)
    assert alone[1] == {"anyOf": [{"type": "array", "items": {"type": "object"}}, {"type": "string"}]}
    shared = new_expansions()
    assert (expand_types(a, types, shared), expand_types(b, types, shared)) == alone  # A kept first: B was B → A → B → A
    shared = new_expansions()
    assert (expand_types(b, types, shared), expand_types(a, types, shared))[::-1] == alone


def test_the_budget_refuses_at_the_node_it_was_refused_at_before_an_unknown_type_is_met() -> None:
    # every scalar is a node spent before the reference after it is resolved: one node more and the
    # expansion is too large before it learns the type is unknown
    with pytest.raises(UnknownType):
        expand_types({"allOf": [*[1] * NODE_BUDGET, {"$ref": "#/types/Missing"}]}, {})
    with pytest.raises(TooLarge):
        expand_types({"allOf": [*[1] * (NODE_BUDGET + 1), {"$ref": "#/types/Missing"}]}, {})
    with pytest.raises(UnknownType):
        expand_types({"enum": [1] * (NODE_BUDGET - 1), "not": {"$ref": "#/types/Missing"}}, {})  # data counted, not walked
    with pytest.raises(TooLarge):
        expand_types({"enum": [1] * NODE_BUDGET, "not": {"$ref": "#/types/Missing"}}, {})


def test_a_changed_object_keeps_its_key_order_and_shares_what_did_not_change() -> None:
    note = {"type": "string", "description": "Un café, s'il vous plaît"}
    types: dict[str, Any] = {"Note": note, "Loop": {"type": "object", "properties": {"next": {"$ref": "#/types/Loop"}, "size": 2**64, "ratio": 0.5}}}
    schema = {"type": "object", "properties": {"first": note, "second": {"$ref": "#/types/Note"}, "loop": {"$ref": "#/types/Loop"}},
              "required": ["first"], "additionalProperties": False}  # fmt: skip
    expanded = expand_types(schema, types, new_expansions())
    assert list(expanded) == list(schema) and list(expanded["properties"]) == ["first", "second", "loop"]
    assert expanded["properties"]["first"] is note and expanded["properties"]["second"] is note
    assert expanded["required"] is schema["required"]
    # a type inside itself stops at {"type": "object"}
    assert expanded["properties"]["loop"] == {"type": "object", "properties": {"next": {"type": "object"}, "size": 2**64, "ratio": 0.5}}


def test_subclasses_of_dict_and_list_expand_to_plain_copies() -> None:
    class Mapping(dict[str, Any]):
        pass

    class Items(list[Any]):
        pass

    schema = Mapping({"type": "object", "allOf": Items([{"type": "string"}])})
    expanded = expand_types(schema, {})
    assert type(expanded) is dict and type(expanded["allOf"]) is list and expanded == schema
