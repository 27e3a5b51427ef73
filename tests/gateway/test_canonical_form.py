"""The canonical form itself: any input is canonicalized or refused with a code, and the form is a fixed point."""

from __future__ import annotations

import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillhouse.compiler.url_form import UNRESERVED
from skillhouse.gateway.canonical import canonical_request
from skillhouse.gateway.canonical_url import canonical_url
from skillhouse.gateway.errors import GatewayError
from skillhouse.gateway.exchange import UnreadRequest, read_request

URL_PIECES = st.sampled_from(
    ["/", "//", ".", "..", "%", "%2e", "%2E", "%2f", "%41", "%7e", "%7E", "%3b", "%00", ";", "?", "#", "&", "=", "\\", " ",
     "@", ":", "[", "]", "é", "\u2028", "a", "B", "~", "+", "%zz", "%c3%a9"]
)  # fmt: skip
AUTHORITIES = st.sampled_from(
    ["h", "H.example.", "h:8080", "h:0", "h:99999", "h:", "[::1]", "[::1", "u@h", "0x7f.1", "bücher.de", "straße.de", "",
     "a..b", "h%41"]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(authority=AUTHORITIES, rest=st.lists(URL_PIECES | st.text(max_size=3), max_size=12).map("".join),
       scheme=st.sampled_from(["http", "HTTPS", "ftp", "", "http:"]))  # fmt: skip
def test_any_url_is_canonical_or_refused_and_the_canonical_form_is_a_fixed_point(authority: str, rest: str, scheme: str) -> None:
    url = f"{scheme}://{authority}{rest}"
    try:
        canonical = canonical_url(url)
    except GatewayError as refusal:
        assert refusal.code in ("invalid-request", "egress-refused") and refusal.details.get("field", "url") == "url"
        return
    text = canonical.text
    assert all(c in string.printable and c not in string.whitespace for c in text), text
    assert canonical_url(text) == canonical  # canonicalizing again changes nothing
    for index in range(len(canonical.path)):
        if canonical.path[index] == "%":
            assert chr(int(canonical.path[index + 1 : index + 3], 16)) not in UNRESERVED
            assert canonical.path[index + 1 : index + 3].isupper() or canonical.path[index + 1 : index + 3].isdigit()


JUNK = st.none() | st.integers() | st.text(max_size=8) | st.lists(st.integers(), max_size=2)


@settings(max_examples=300, deadline=None)
@given(
    method=st.sampled_from(["GET", "post", "TRACE", ""]) | JUNK,
    headers=st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=4) | JUNK,
    body=st.text(max_size=20) | st.sampled_from(['{"a":1,"a":2}', '{"a":NaN}', "[1e999]", '{"a":"\ud800"}']) | JUNK,
    content_type=st.sampled_from(["application/json", "text/plain", "application/merge-patch+json; charset=utf-8"]),
)
def test_any_request_is_canonical_or_refused_with_a_code_never_an_exception(
    method: Any, headers: Any, body: Any, content_type: str
) -> None:
    if isinstance(headers, dict):
        headers = {"Content-Type": content_type, **headers}
    request = read_request({"method": method, "url": "http://h.example/a", "headers": headers, "body": body})
    if isinstance(request, UnreadRequest):  # the host reads it so; the gateway refuses it invalid-request
        assert request.field in ("method", "url", "headers", "body", "request")
        return
    try:
        canonical = canonical_request(request)
    except GatewayError as refusal:
        assert refusal.code in ("invalid-request", "duplicate-header", "duplicate-json-key")
        assert refusal.details["field"].split(".")[0] in ("method", "url", "headers", "body", "request")
        return
    assert canonical.method in ("GET", "POST")
    names = [name for name, _ in canonical.headers]
    assert names == sorted(set(names)) and all(name == name.lower() for name in names)
    assert canonical.body == body


@pytest.mark.parametrize(
    ("written", "canonical"),
    [("HTTPS://API.Example.COM.:443/v1/%7Eme/./x/../y?b=%2c&a=%41#frag", "https://api.example.com/v1/~me/y?b=%2C&a=A"),
     ("http://h:80", "http://h/"), ("https://h:8443/", "https://h:8443/"), ("http://h:0080/a?", "http://h/a"),
     ("http://B\u00dcCHER.de/", "http://xn--bcher-kva.de/"), ("http://\uff48.example/", "http://h.example/"),
     ("http://2130706433:8080/", "http://127.0.0.1:8080/"), ("http://[0:0::1]/", "http://[::1]/"),
     ("http://h/a/b/..", "http://h/a/"), ("http://h/../../a", "http://h/a"), ("http://h/a;b", None),
     ("http://h/a%2Fb", None), ("http://h/a%5cb", None), ("http://h/a\\b", None), ("http://h//a", None),
     ("http://h/%2e/a", None), ("http://h/a%00", None), ("http://h/a%", None), ("http://stra\u00dfe.de/", None),
     ("http://u@h/", None), ("http://h/\u00e9", None), ("http://h/a b", None)],
)  # fmt: skip
def test_written_urls_and_their_canonical_forms(written: str, canonical: str | None) -> None:
    if canonical is None:
        with pytest.raises(GatewayError):
            canonical_url(written)
    else:
        assert canonical_url(written).text == canonical
