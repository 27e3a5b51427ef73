"""A request the component hands back from ``call-tool`` reads back as the ``fetch_url`` text of it would."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from skillhouse.guest.host import SEND, read_sent, sent_text
from skillhouse.guest.values import json_dump

text = st.text(st.characters(codec="utf-8"), max_size=30)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)
requests = st.fixed_dictionaries(
    {
        "method": st.sampled_from(["GET", "POST"]) | text,
        "url": text,  # line breaks and NULs too: only the body is written outside the JSON
        "headers": st.dictionaries(text, text, max_size=3) | json_values,
        "body": st.none() | text | json_values,
    }
)


@given(requests)
def test_a_sent_request_reads_back_as_its_fetch_url_text_does(request: dict[str, Any]) -> None:
    sent = sent_text(request)
    assert sent.startswith(SEND)
    assert read_sent(sent) == json.loads(json_dump(request))


def test_a_body_with_line_breaks_and_quotes_crosses_as_it_is() -> None:
    request = {"method": "POST", "url": "http://x/\n", "headers": {"A": "b"}, "body": '{"a":\n"\\n"}\n'}
    sent = sent_text(request)
    assert sent.endswith("\n" + request["body"])
    assert read_sent(sent) == request


def test_text_that_is_no_sent_request_reads_as_its_json_value_for_the_host_to_refuse() -> None:
    assert read_sent(SEND + '["GET", "http://x"]') == ["GET", "http://x"]
    assert read_sent(SEND + '{"method": "GET"}') == {"method": "GET"}


@given(requests)
def test_a_sent_request_is_the_json_list_then_the_body_as_it_is(request: dict[str, Any]) -> None:
    head = (request["method"], request["url"], request["headers"])
    if type(request["body"]) is str:
        assert sent_text(request) == SEND + json_dump(head) + "\n" + request["body"]
    else:
        assert sent_text(request) == SEND + json_dump((*head, request["body"]))


def test_a_request_of_other_values_than_text_is_sent_as_one_json_list() -> None:
    request = {"method": 1, "url": ["u"], "headers": {}, "body": "b"}
    assert sent_text(request) == SEND + '[1, ["u"], {}, "b"]'


json_ish = st.text(st.sampled_from('[]{}",: 0123456789.eE-+truefalsnNIiy\\/\ufeff\t\r\u00e9'), max_size=40)


@given((st.text(st.characters(codec="utf-8"), max_size=40) | json_ish).filter(lambda head: "\n" not in head))
def test_any_head_reads_as_json_loads_reads_its_list(head: str) -> None:
    # what json.loads answers or raises, the very same, whatever a guest gone wrong hands back
    _assert_read_as_json_loads_reads(head)


def test_odd_heads_read_or_fail_as_json_loads_would() -> None:
    for head in (' ["GET", "u", {}, null] ', '["GET", "u", {}, null] x', "\ufeff[]", "", "[NaN, 1e999, -0.0, 12345678901234567890123]",
                 '["G\u00e9T", "\U0001f600", {"k": "\\u00e9"}, 1.5]', "[" * 10000):
        _assert_read_as_json_loads_reads(head)


def _assert_read_as_json_loads_reads(head: str) -> None:
    try:
        expected: Any = json.loads(head)
    except (ValueError, RecursionError) as exc:
        expected = (type(exc), str(exc))
    try:
        read: Any = read_sent(SEND + head)
    except (ValueError, RecursionError) as exc:
        read = (type(exc), str(exc))
    else:
        if isinstance(expected, list) and len(expected) == 4:
            expected = dict(zip(("method", "url", "headers", "body"), expected, strict=True))
    assert repr(read) == repr(expected)  # repr: NaN is not equal to itself
