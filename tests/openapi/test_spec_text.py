"""A JSON spec's text beyond ASCII is parsed escaped (one byte a character, not two or four), to the same value.

The text is held while the spec is parsed, the import's peak memory then; these tests hold the escaped
parse to the plain one: the value, the YAML fallback when the text is no JSON, and the error for bytes
that are not UTF-8 (the byte it names).
"""

from __future__ import annotations

import codecs
import json
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from skillhouse.openapi.document import SpecError, _ascii_json, parse_spec_text, spec_loader

texts = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=30)
values = st.recursive(
    st.one_of(texts, st.integers(), st.booleans(), st.none()),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=st.dictionaries(texts, values, max_size=6), bom=st.booleans(), width=st.sampled_from([0, 1, 5000]))
def test_json_beyond_ascii_parses_to_what_the_plain_text_does(value: dict[str, Any], bom: bool, width: int) -> None:
    text = json.dumps(value, ensure_ascii=False, indent=1) + " " * width  # wide: a text of several stretches
    data = (codecs.BOM_UTF8 if bom else b"") + text.encode("utf-8")
    assert parse_spec_text(data, "spec.json") == json.loads(text)
    escaped = _ascii_json(data, len(codecs.BOM_UTF8) if bom else 0, "spec.json")
    assert escaped is not None and escaped[0].isascii()


@pytest.mark.parametrize("text", ['{a: "é", b: ’x, c: [ñ]}', '{"a": "é",}', '{"a": "\\u00e9 é", "b": "😀"} # done'])
def test_a_json_looking_text_that_is_no_json_is_read_as_the_yaml_it_is(text: str) -> None:
    expected = yaml.load(text, Loader=spec_loader())
    assert parse_spec_text(text.encode("utf-8"), "spec.yaml") == expected


@pytest.mark.parametrize(
    "data",
    [b'{"a": "\xe2\x80"}', codecs.BOM_UTF8 + b'{"a": "\xff"}', b'{"a": "ok", "b": "\xc3\xa9\xed\xa0\x80"}', b'{"a": "\xc3', b'{"a": "' + b"x" * 5000 + b'\xc3\xa9\xc3"}'],
)
def test_bytes_that_are_not_utf8_are_named_as_decoding_the_whole_file_names_them(data: bytes) -> None:
    with pytest.raises(UnicodeDecodeError) as decoding:
        data.decode("utf-8-sig")
    with pytest.raises(SpecError, match=rf"not UTF-8 \(byte {decoding.value.start}\)"):
        parse_spec_text(data, "spec.json")


@pytest.mark.parametrize("backslashes", [1, 2, 3, 4])
# the text is read in stretches of 4,096 bytes: widths put the backslashes before, across and after the first's end
@pytest.mark.parametrize("width", [0, 4085, 4086, 4087, 4088, 4089, 4090])
def test_a_character_beyond_ascii_after_backslashes_means_what_the_plain_text_means(backslashes: int, width: int) -> None:
    text = '{"a": "' + "x" * width + "\\" * backslashes + 'é"}'
    data = text.encode("utf-8")
    if backslashes % 2:  # "\é" is no escape: no JSON, and its YAML refuses it too, as before
        assert _ascii_json(data, 0, "spec.json") is None
        with pytest.raises(SpecError, match="malformed YAML or JSON"):
            parse_spec_text(data, "spec.json")
    else:
        assert parse_spec_text(data, "spec.json") == json.loads(text) == {"a": "x" * width + "\\" * (backslashes // 2) + "é"}
