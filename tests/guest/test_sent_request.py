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
