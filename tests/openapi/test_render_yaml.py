"""The operation blocks the wizard writes without PyYAML are PyYAML's text, byte for byte, and read back the same."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from skillhouse.openapi.render import _block_yaml, _dump

_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def pyyaml(data: Any) -> str:
    return str(yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1_000_000))


# Text biased towards what the block holds (names, URLs, methods) and towards what YAML reads specially.
_tricky = st.sampled_from(
    ["yes", "No", "TRUE", "off", "On", "null", "Null", "~", "y", "n", "=", "<<", "1e3", "0x1F", "12:30", "1_000",
     "2001-12-14", ".inf", ".5", "-", "- a", "a: b", "a:", "a #b", "#a", "&a", "*a", "!a", "|", ">", "'a", '"a', "%a",
     "@a", "`a", "?a", "? a", "a,b", "{a}", "[a]", "/v1/{id}", "https://x.test/a?b=c&d=e", "_x", "a" * 130, "é",
     "a\u2028b", "a\x85b", "\ufeffa", "a\nb", " a", "a ", "", "---", "...", "a\tb", "x-y.z", "GET", "N", "Y", "y", "nULL", "tRUE", "True", "1.0.0", "1001.0.0-SNAPSHOT", "1.0", "1.2.x",
     "2018-11-08", "2018-11-8", "12:30:00.1.2", "Stripe API: The Stripe REST API.", "A 'quoted' word", "ends with space ",
     "a - b", "- a b", "?a b", "a ? b", "it's", "x:y z", "a :b", "a#b c", "see https://x.test/#frag"]
)
_text = _tricky | st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12) | st.text(max_size=6)
_scalar = _text | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
_flat = st.dictionaries(_text, _scalar, max_size=3) | st.lists(_scalar, max_size=3) | _scalar
_block = st.dictionaries(_text, _flat | st.dictionaries(_text, _flat, max_size=2), max_size=5)


@settings(max_examples=1500, deadline=None)
@given(_block)
def test_a_block_written_without_pyyaml_is_pyyamls_text(block: dict[str, Any]) -> None:
    data = {"operation": block}
    fast = _block_yaml(data)
    if fast is not None:
        assert fast == pyyaml(data)
    assert _dump(data) == pyyaml(data)
    assert yaml.safe_load(_dump(data)) == data


def test_a_manifests_frontmatter_takes_the_fast_way() -> None:
    data = {"name": "stripe-api", "description": "Stripe API: it's the Stripe REST API. See https://stripe.com/docs #api",
            "metadata": {"source": "openapi", "version": "2018-11-08"}}
    assert _block_yaml(data) == pyyaml(data)
    assert yaml.safe_load(pyyaml(data)) == data
    for version in ("1.0.0", "1001.0.0-SNAPSHOT", "v2"):
        data["metadata"]["version"] = version
        assert _block_yaml(data) == pyyaml(data)


@pytest.mark.parametrize(
    "block",
    [
        {"method": "GET", "url": "https://x.test/v1/items/{id}", "query": ["limit", "starting_after"]},
        {"method": "POST", "url": "https://x.test/a", "names": {"id_body": "id"}, "style": {"meta": "deepObject"}, "encoding": "form"},
        {"method": "PUT", "url": "https://x.test/a", "header": ["X-Id"], "payload": "body", "content_type": "application/octet-stream"},
        {"method": "GET", "url": "https://x.test/a", "query": [], "names": {}, "defaults": {"limit": 10, "on": True}},
    ],
)
def test_the_usual_blocks_take_the_fast_way(block: dict[str, Any]) -> None:
    data = {"operation": block}
    if "on" in block.get("defaults", {}):  # a key YAML 1.1 reads as a boolean: PyYAML quotes it
        assert _block_yaml(data) is None
    else:
        assert _block_yaml(data) == pyyaml(data)
