"""The fit to the size cap measures every cut level in one walk (``shrink._cut_savings``): each level's
saving held to the size of the copy actually cut at that level, on generated schemas with shared
types and on the corpus operations the wizard shrinks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.corpus import unpacked_corpus

from skillhouse.compiler.expansion import compact_size
from skillhouse.openapi import shrink

_NAMES = ["A", "B", "C"]
_SCALARS = st.one_of(st.text(max_size=6), st.integers(), st.booleans(), st.none())
_LEAF = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["string", "integer"])}, optional={"description": st.text(max_size=12)}),
    st.builds(lambda name: {"$ref": f"#/types/{name}"}, st.sampled_from(_NAMES)),
    st.fixed_dictionaries({"enum": st.lists(_SCALARS, max_size=3)}),
    st.booleans(),
)
_SCHEMAS = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.dictionaries(st.text(max_size=5), inner, max_size=4)},
            optional={"additionalProperties": st.one_of(st.booleans(), inner), "description": st.text(max_size=8)},
        ),
        st.fixed_dictionaries({"type": st.just("array"), "items": inner}),
        st.fixed_dictionaries({"prefixItems": st.lists(inner, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"allOf": st.lists(inner, min_size=1, max_size=2), "not": inner}),
    ),
    max_leaves=12,
)


def _check(tree: Any) -> None:
    savings: dict[int, int] = {}
    deepest, size = shrink._cut_savings(tree, 0, savings)
    assert size == compact_size(tree)
    for level in range(1, deepest + 1):
        assert size - savings.get(level, 0) == compact_size(shrink._cut(tree, 0, level)), level


@settings(max_examples=300, deadline=None)
@given(types=st.fixed_dictionaries({name: _SCHEMAS for name in _NAMES}), schema=_SCHEMAS)
def test_every_cut_level_measures_as_the_copy_cut_there(types: dict[str, Any], schema: Any) -> None:
    for max_level in (16, 3, 1):
        try:
            # the build shares a type's copy where it meets the type again at the same level
            tree = shrink._Build(types, max_level).node(schema, 0, ())
        except RecursionError:
            continue
        if isinstance(tree, dict):
            _check(tree)


@pytest.mark.parametrize("spec", ["openai.yaml"])
def test_the_corpus_schemas_the_wizard_shrinks_measure_the_same(spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillhouse.openapi import wizard

    fitted: list[int] = []
    fit = wizard.fit_schema

    def checked(schema: Any, types: Any, *rest: Any) -> Any:
        _check(shrink._Build(types, 16).node(schema, 0, ()))
        fitted.append(1)
        return fit(schema, types, *rest)

    monkeypatch.setattr(wizard, "fit_schema", checked)
    wizard.import_openapi(unpacked_corpus() / spec)
    assert len(fitted) > 10
