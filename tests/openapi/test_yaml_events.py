"""The event-built YAML loader gives exactly what PyYAML's safe loader (without timestamps) gives."""

from __future__ import annotations

import codecs
import math
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.corpus import CORPUS

from skillhouse.openapi import yaml_events
from skillhouse.openapi.document import SpecError, parse_spec_text, spec_loader


def same(one: Any, two: Any) -> bool:
    if isinstance(one, float) and isinstance(two, float) and math.isnan(one) and math.isnan(two):
        return True
    if type(one) is not type(two):
        return False
    if isinstance(one, dict):
        return list(one) == list(two) and all(same(one[k], two[k]) for k in one)
    if isinstance(one, list):
        return len(one) == len(two) and all(same(a, b) for a, b in zip(one, two, strict=True))
    return bool(one == two)


def pyyaml(text: str) -> Any:
    return yaml.load(text, Loader=spec_loader())


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.yaml")), ids=lambda p: p.name)
def test_every_corpus_yaml_spec_loads_the_same(path: Any) -> None:
    text = path.read_text()
    assert same(yaml_events.load(text), pyyaml(text))


PLAIN = ["yes", "No", "on", "OFF", "true", "~", "null", "", "0", "-0", "+12", "0o17", "017", "0x1F", "0b101",
         "1_000", "1:30", "-1:30:15", "1.5", ".5", "1.", "1e5", "1.0e+5", ".inf", "-.Inf", ".NaN", "2020-01-01",
         "0.1_1", "=", "text", "12abc", "-", "+", ".", "0x", "1:60", "190:20:30.15"]
scalars = st.sampled_from(PLAIN) | st.text(max_size=8)
keys = st.sampled_from(PLAIN[:20]) | st.text(max_size=5)
values = st.recursive(scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(keys, c, max_size=3), max_leaves=12)


def render(value: Any, plain: bool) -> str:
    """YAML whose scalars are written plain where YAML allows it, so resolution is exercised."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{" + ", ".join(f"{render(k, plain)}: {render(v, plain)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(render(v, plain) for v in value) + "]"
    if (plain and value in PLAIN and value not in ("", "-", "+", "=") and not value.startswith(("-", ".", "+"))) or value in ("0", "1.5", "yes", "1:30"):
        return value
    return yaml.safe_dump(value, default_style='"').strip().removesuffix("...").strip()


@settings(max_examples=300, deadline=None)
@given(values, st.booleans())
def test_generated_documents_load_the_same(value: Any, plain: bool) -> None:
    text = render(value, plain)
    try:
        expected = pyyaml(text)
    except yaml.YAMLError:
        with pytest.raises((yaml.YAMLError, yaml_events.Unsupported)):
            yaml_events.load(text)
        return
    try:
        got = yaml_events.load(text)
    except yaml_events.Unsupported:
        return  # left to PyYAML, which the caller falls back to
    assert same(got, expected), text


@settings(max_examples=200, deadline=None)
@given(values)
def test_block_style_documents_load_the_same(value: Any) -> None:
    text = yaml.safe_dump(value, default_flow_style=False, allow_unicode=True)
    assert same(yaml_events.load(text), pyyaml(text))
    # parse_spec_text hands libyaml the file's UTF-8 bytes rather than the text
    assert same(yaml_events.load(text.encode("utf-8")), pyyaml(text))
    assert same(parse_spec_text(codecs.BOM_UTF8 + text.encode("utf-8"), "spec.yaml"), pyyaml(text))


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.yaml")), ids=lambda p: p.name)
def test_every_corpus_yaml_spec_loads_the_same_from_its_bytes(path: Any) -> None:
    assert same(parse_spec_text(path.read_bytes(), path.name), pyyaml(path.read_text(encoding="utf-8")))


def test_rarer_yaml_falls_back_to_pyyaml_with_the_same_answer() -> None:
    text = "base: &b {a: 1}\nderived:\n  <<: *b\n  c: !!binary aGVsbG8=\n"
    with pytest.raises(yaml_events.Unsupported):
        yaml_events.load(text)
    assert parse_spec_text(text.encode(), "spec.yaml") == pyyaml(text)


def test_malformed_yaml_is_a_located_spec_error() -> None:
    with pytest.raises(SpecError) as error:
        parse_spec_text(b"openapi: 3.0.0\npaths: [\n", "spec.yaml")
    assert str(error.value).startswith("spec.yaml:")
    with pytest.raises(SpecError):
        parse_spec_text(b"a: *missing\n", "spec.yaml")
    with pytest.raises(SpecError):
        parse_spec_text(b"a: 1\n---\nb: 2\n", "spec.yaml")


def test_every_plain_scalar_form_resolves_as_pyyaml_resolves_it() -> None:
    listed = [value for value in PLAIN if value not in ("=",)]
    text = "items:\n" + "".join(f"  - {value}\n" for value in listed)
    assert same(yaml_events.load(text), pyyaml(text))
    keyed = "".join(f"{value}: {index}\n" for index, value in enumerate(("yes", "0x1F", "1:30", "1.5", "~", "12abc")))
    assert same(yaml_events.load(keyed), pyyaml(keyed))


def test_a_yaml_parse_holds_one_string_per_distinct_text() -> None:
    # a spec repeats values ("string", a shared description) thousands of times; one copy each is kept
    data = b"a: {type: string, description: Shared text}\nb: {type: string, description: 'Shared text'}\nc: [string, Shared text]\n"
    parsed = parse_spec_text(data, "spec.yaml")
    a, b, c = parsed["a"], parsed["b"], parsed["c"]
    assert a["type"] is b["type"] is c[0]
    assert a["description"] is b["description"] is c[1]
