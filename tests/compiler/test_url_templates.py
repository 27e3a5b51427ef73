"""The compiler's quick acceptance of a plain URL template agrees with the canonical form the gateway sends."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from skillhouse.compiler import urls
from skillhouse.compiler.url_form import NotCanonical, canonical_path

_segments = st.lists(st.text(alphabet="aZ09-._~!$&'()*+,=:@;%/{}é \\\"?#", max_size=6), max_size=5)


@settings(max_examples=2000, deadline=None)
@given(_segments, st.booleans())
def test_a_path_taken_as_plain_is_its_own_canonical_form(segments: list[str], trailing: bool) -> None:
    path = "/" + "/".join(segments) + ("/" if trailing else "")
    if urls._PLAIN_PATH.fullmatch(path) and not any(s in (".", "..") for s in path.split("/")):
        assert canonical_path(path) == path


@settings(max_examples=500, deadline=None)
@given(_segments)
def test_a_path_refused_or_rewritten_is_never_taken_as_plain(segments: list[str]) -> None:
    path = "/" + "/".join(segments)
    try:
        canonical = canonical_path(path)
    except NotCanonical:
        canonical = None
    if canonical != path:
        assert not (urls._PLAIN_PATH.fullmatch(path) and not any(s in (".", "..") for s in path.split("/")))
