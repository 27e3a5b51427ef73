"""The compiler's quick acceptance of a plain URL template agrees with the canonical form the gateway sends."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from skillhouse.compiler import urls
from skillhouse.compiler.context import OperationContext
from skillhouse.compiler.url_form import NotCanonical, canonical_path
from skillhouse.skill.frontmatter import Frontmatter

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


def _context() -> OperationContext:
    front = Frontmatter({"operation": {}}, {("operation",): 2, ("operation", "url"): 4}, 1, "", 6)
    return OperationContext(skill="shop", file="book.md", shown="book.md", front=front, text="", types={})


_url_texts = st.text(alphabet="aZ09-._~!$&'()*+,=:@;%/{}?#[] \t\\é\n", max_size=8)
_odd_segments = st.sampled_from(["{id}", "{id}.json", "v{id}", "{a}{b}", "{é}", ".", "..", "...", "{}", "p"])
_plain_segments = st.text(alphabet="aZ09-._~!$&'()*+,=:@", max_size=4)
_usual_segments = st.sampled_from(["{id}", "{id}.json", "v{id}", "v{n}x", "{a}{b}", ".", "..", "{x-y_1}", "%41"])


def _url(scheme: str, host: str, segments: list[str], tail: str) -> str:
    return f"{scheme}://{host}" + "".join("/" + s for s in segments) + tail


_urls = st.one_of(
    st.builds(
        _url,
        st.sampled_from(["http", "https", "HTTP", "ftp", "https:"]),
        st.sampled_from(["api.example.com", "h:8080", "h:", "[::1]", "a@b", "é.com", "", "x{y}", "h.com/"]),
        st.lists(st.one_of(_url_texts, _odd_segments), max_size=5),
        st.sampled_from(["", "/", "?q=1", "#f", "//", "\n", " "]),
    ),
    st.builds(  # mostly what the one match takes
        _url,
        st.sampled_from(["http", "https"]),
        st.sampled_from(["api.example.com", "h:8080", "h-1.io"]),
        st.lists(st.one_of(_plain_segments, _usual_segments), max_size=5),
        st.sampled_from(["", "", "/", "?", "#"]),
    ),
    st.text(alphabet="htps:/{}a.", max_size=20),
)


@settings(max_examples=3000, deadline=None)
@given(_urls, st.booleans())
def test_a_url_taken_in_one_match_is_checked_as_the_full_check_would(url: str, affixes: bool) -> None:
    quick, full = _context(), _context()
    assert urls.check_url(quick, url, affixes) == urls._checked_url(full, url, affixes)
    assert quick.errors == full.errors


def test_the_one_match_takes_the_usual_templates_and_leaves_the_rest_to_the_full_check() -> None:
    taken = ["https://api.twilio.com/2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json", "http://h:8080", "https://h/a/.../b/"]
    for url in taken:
        assert urls._CANONICAL_AFFIXED_URL.fullmatch(url)
    left = ["https://h/a/../b", "https://h/a//b", "https://h/a%20b", "https://h/a?b=1", "https://h/{a}{b}", "https://h/é", "HTTPS://h/a"]
    for url in left:
        assert not urls._CANONICAL_AFFIXED_URL.fullmatch(url) and not urls._CANONICAL_URL.fullmatch(url)
    assert not urls._CANONICAL_URL.fullmatch("https://h/v{id}")  # the flat form takes whole-segment parameters only
    repeated = _context()
    assert urls.check_url(repeated, "https://h/{id}/x/{id}", affixes=False) == ["id"]
    assert [e.code for e in repeated.errors] == ["path-parameter"]
