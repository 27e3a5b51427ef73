"""The canonical spelling of a URL's path and query: RFC 3986 normalization, refusing what servers disagree on.

Shared by the compiler (an operation's URL template must already be canonical, so every call the
guest builds is sent as it was built) and the gateway (every request is canonicalized; see
``gateway/canonical_url.py`` for the whole URL). Pure and standard library only.

Path: ``.`` and ``..`` segments removed (RFC 3986 5.2.4); escapes of unreserved characters
(``A-Z a-z 0-9 - . _ ~``) decoded, every other escape in upper-case hex; a trailing slash kept.
Refused (:class:`NotCanonical` with a ``reason``): characters RFC 3986 does not allow raw (non-ASCII,
``\\``, ``"``, ``<``, ...), ``%`` without two hex digits, and in the path an encoded ``/`` or ``\\``, an
encoded control character, a dot segment spelled with escapes, an empty segment and a raw ``;`` (unless
the caller reads ``;`` itself: the gateway accepts one only as an operation's matrix parameter,
``gateway/matrix.py``). Query: the same escape rules, nothing reordered.
"""

from __future__ import annotations

from skillhouse.errors import CallerError

UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_SUB_DELIMS = frozenset("!$&'()*+,;=")
_PATH_RAW = (UNRESERVED | _SUB_DELIMS | frozenset(":@/%")) - {";"}
_PATH_RAW_WITH_PARAMETERS = _PATH_RAW | {";"}
_QUERY_RAW = UNRESERVED | _SUB_DELIMS | frozenset(":@/?%")
_HEX = frozenset("0123456789abcdefABCDEF")
_SEPARATORS = (0x2F, 0x5C)


class NotCanonical(CallerError, ValueError):
    """A path or query with no one canonical spelling (``not-canonical``); ``reason`` is a stable code saying why.
    The gateway refuses such a request as ``invalid-request`` with that ``reason``."""

    code = "not-canonical"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def refuse(reason: str, message: str) -> NotCanonical:
    return NotCanonical(reason, message)


def _escapes(text: str, allowed: frozenset[str], where: str) -> list[tuple[str, int | None]]:
    """``text`` as characters and escaped bytes (``(char, None)`` or ``("%", byte)``), each checked."""
    out: list[tuple[str, int | None]] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "%":
            pair = text[index + 1 : index + 3]
            if len(pair) != 2 or any(c not in _HEX for c in pair):
                raise refuse("invalid-percent-escape", f"has % not followed by two hex digits in the {where}")
            out.append(("%", int(pair, 16)))
            index += 3
            continue
        if char not in allowed:
            if not char.isascii():
                raise refuse("non-ascii", f"has a non-ASCII character {char!r} in the {where}; percent-encode it as UTF-8")
            if char == ";":
                raise refuse("path-parameter", "has a ';' in the path (servers that strip ';parameters' disagree); "
                             "write %3B")  # fmt: skip
            raise refuse("character-not-allowed", f"has {char!r} in the {where}; percent-encode it")
        out.append((char, None))
        index += 1
    return out


def _normalized(pieces: list[tuple[str, int | None]]) -> str:
    return "".join(
        char if byte is None else chr(byte) if chr(byte) in UNRESERVED else f"%{byte:02X}" for char, byte in pieces
    )


def _segment(raw: str, parameters: bool) -> str:
    pieces = _escapes(raw, _PATH_RAW_WITH_PARAMETERS if parameters else _PATH_RAW, "path")
    for _, byte in pieces:
        if byte in _SEPARATORS:
            raise refuse("encoded-separator", "has an encoded / or \\ (%2F, %5C) in the path; servers disagree on it")
        if byte is not None and (byte < 0x20 or byte == 0x7F):
            raise refuse("encoded-control-character", f"has an encoded control character (%{byte:02X}) in the path")
    segment = _normalized(pieces)
    if segment in (".", ".."):
        raise refuse("encoded-dot-segment", f"has a dot segment spelled with escapes ({raw!r}); servers disagree on it")
    return segment


def canonical_path(raw: str, parameters: bool = False) -> str:
    """A path (starting with ``/``) in canonical form: escapes normalized, dot segments removed.

    A raw ``;`` is refused unless ``parameters``: then it is kept as written, for the caller to judge.
    """
    parts = raw.split("/")[1:]
    output: list[str] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part in (".", ".."):
            if part == ".." and output:
                output.pop()
            if last:
                output.append("")
            continue
        output.append(_segment(part, parameters))
    if "" in output[:-1]:
        raise refuse("empty-segment", "has an empty path segment (//); servers disagree on it")
    return "/" + "/".join(output)


def canonical_query(raw: str) -> str:
    """A query (without ``?``) in canonical form: escapes normalized, nothing reordered."""
    return _normalized(_escapes(raw, _QUERY_RAW, "query"))
