"""RFC 8785 canonical JSON, with a fast path for the documents skillhouse hashes most.

The ``rfc8785`` package is exact and pure Python: about 5 µs per value, half a second for a Stripe
release. For a value whose object keys are all ASCII (so UTF-16 and code-point order agree), whose
integers are within ±2**53 and whose floats are whole or written without an exponent (see
:func:`_plain_float`), the standard library's C encoder with sorted keys and no whitespace writes the
same bytes; strings are escaped the same way (``\\"``, ``\\\\``, the short escapes, ``\\u00xx`` for
other controls, everything else as is).

Canonical JSON is compositional (an object is its members in key order, each ``"key":value``), so a
value the fast path cannot take is split: its members or items that can go the fast way do, and only
the parts that cannot (an exponent float, a non-ASCII key, a big integer) go to ``rfc8785``, which is
imported the first time it is needed. A property test holds the result to ``rfc8785``'s bytes.

The same composition lets a digest be taken without the whole text in memory (:func:`canonical_parts`):
a release's canonical JSON is a few megabytes as one string, then again as bytes, on top of the
encoder's own pieces, and that was the import's peak.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonObject


_LIMIT = 2**53 - 1  # what rfc8785 accepts
_encode_string = json.encoder.encode_basestring


def _unencodable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def compact_encoder(*, sort_keys: bool, allow_nan: bool) -> Callable[[Any], str]:
    """``json.dumps(value, separators=(",", ":"), ensure_ascii=False, ...)`` as one C encoder made once.

    ``JSONEncoder.encode`` makes a new C encoder on every call, with a dictionary of the id of every
    container it enters (the circular-reference check); values here come from parsed JSON, which has
    no cycles (one would end in ``RecursionError`` instead of ``ValueError``).
    """
    make = getattr(json.encoder, "c_make_encoder", None)  # not in the typing stubs
    if make is None:  # pragma: no cover - an interpreter without the _json accelerator
        return json.JSONEncoder(ensure_ascii=False, sort_keys=sort_keys, separators=(",", ":"), allow_nan=allow_nan).encode
    chunks = make(None, _unencodable, _encode_string, None, ":", ",", sort_keys, False, allow_nan)

    def encode(value: Any) -> str:
        if type(value) is str:
            return str(_encode_string(value))
        return "".join(chunks(value, 0))

    return encode


_encode = compact_encoder(sort_keys=True, allow_nan=False)


class _Slow(Exception):
    """The value needs the exact encoder."""


def _plain_float(number: float) -> int | float:
    """``number`` as JSON the C encoder writes exactly as RFC 8785 does, or :class:`_Slow`.

    A whole float within ±2**53 is written as the integer (``2``, not ``2.0``), as ECMAScript does; any
    other float whose shortest form Python writes without an exponent is written alike by both (the
    same shortest digits, fixed notation); exponent forms differ (``1e-07`` against ``1e-7``).
    """
    if number.is_integer():
        if -_LIMIT <= number <= _LIMIT:
            return int(number)
        raise _Slow
    if "e" in repr(number) or number != number or number in (float("inf"), float("-inf")):
        raise _Slow
    return number


def _ready(value: Any) -> bool:
    """Whether ``value`` goes to the C encoder as it is: true when it holds no float, false at the
    first float (:func:`_prepared` then makes the floats plain); :class:`_Slow` as :func:`_prepared`.

    The same checks as :func:`_prepared` without its bookkeeping for copies (which containers
    changed), since the usual document has no float: the walk of Jira's release hash takes about 59M
    instructions instead of 70M (the whole hash about 307M instead of 318M).
    """
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or not key.isascii():
                raise _Slow  # UTF-16 and code-point order may differ
            if type(item) is not str and not _ready(item):
                return False
        return True
    if kind is list or kind is tuple:
        for item in value:  # noqa: SIM110 - a loop, not all() over a generator: this walk is the hash's hot path
            if type(item) is not str and not _ready(item):
                return False
        return True
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        if -_LIMIT <= value <= _LIMIT:
            return True
        raise _Slow
    if kind is float:
        return False
    raise _Slow  # subclasses and other types: the exact encoder decides


def _prepared(value: Any) -> Any:
    """``value`` ready for the C encoder (floats made plain), or :class:`_Slow`.

    Containers are copied only where something inside them changed (a whole float), so the usual
    document, which has none, is checked without being rebuilt.
    """
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is dict:
        changed: JsonObject | None = None
        for key, item in value.items():
            if type(key) is not str or not key.isascii():
                raise _Slow  # UTF-16 and code-point order may differ
            if type(item) is str:  # most members: settled here, without a call
                continue
            ready = _prepared(item)
            if ready is not item:
                changed = changed if changed is not None else dict(value)
                changed[key] = ready
        return value if changed is None else changed
    if kind is list or kind is tuple:
        copied: list[Any] | None = None
        for index, item in enumerate(value):
            if type(item) is str:
                continue
            ready = _prepared(item)
            if ready is not item:
                copied = copied if copied is not None else list(value)
                copied[index] = ready
        return value if copied is None else copied
    if kind is int:
        if -_LIMIT <= value <= _LIMIT:
            return value
        raise _Slow
    if kind is float:
        return _plain_float(value)
    raise _Slow  # subclasses and other types: the exact encoder decides


def canonical_json(value: Any) -> bytes:
    """RFC 8785 canonical JSON bytes of ``value``."""
    try:
        return _encode(value if _ready(value) else _prepared(value)).encode("utf-8")
    except (_Slow, UnicodeEncodeError, RecursionError):
        pass
    # Split where the parts can be ordered without the exact encoder (ASCII keys), so only the
    # members that need it (exponents, non-ASCII keys, big integers, lone surrogates) go to rfc8785.
    if type(value) is dict and all(type(key) is str and key.isascii() for key in value):
        members = (_encode_string(key).encode("utf-8") + b":" + canonical_json(value[key]) for key in sorted(value))
        return b"{" + b",".join(members) + b"}"
    if type(value) is list or type(value) is tuple:
        return b"[" + b",".join(canonical_json(item) for item in value) + b"]"
    import rfc8785  # imported here: needed only for the rare values above

    return bytes(rfc8785.dumps(value))


def canonical_parts(value: Any, depth: int = 2) -> Iterator[bytes]:
    """:func:`canonical_json` of ``value`` in pieces whose concatenation is exactly its bytes.

    Objects (whose keys are all ASCII, so their order is plain code-point order) and arrays are split
    into their members down to ``depth`` levels of containers with more than a few members (a
    wrapper such as ``{"profiles": ...}`` is passed through without counting), and below that only
    where they have many members; the rest is written whole. Hashing the pieces gives the digest of
    the whole without holding it: for a release, about one operation at a time, or a run of types or
    tool verdicts (members written whole are encoded a run at a time, see :func:`_runs`).
    (Fewer, larger pieces are also faster than one whole text: the encoder's pieces are joined once.)
    """
    kind = type(value)
    if (kind is dict and (depth > 0 or len(value) > _MANY)) and all(type(key) is str and key.isascii() for key in value):
        below = depth - 1 if len(value) > _WRAPPER else depth
        keys = sorted(value)
        if below <= 0:
            yield from _runs(keys, value.__getitem__, below)
            return
        opening = b"{"
        for key in keys:
            yield opening + _encode_string(key).encode("utf-8") + b":"
            yield from canonical_parts(value[key], below)
            opening = b","
        yield b"}" if value else b"{}"
    elif (kind is list or kind is tuple) and (depth > 0 or len(value) > _MANY):
        below = depth - 1 if len(value) > _WRAPPER else depth
        if below <= 0:
            yield from _runs(value, None, below)
            return
        opening = b"["
        for item in value:
            yield opening
            yield from canonical_parts(item, below)
            opening = b","
        yield b"]" if value else b"[]"
    else:
        yield canonical_json(value)


def _runs(members: Sequence[Any], value_of: Callable[[Any], Any] | None, below: int) -> Iterator[bytes]:
    """An object's members (``members`` its sorted keys, ``value_of`` their values) or an array's items,
    below the depth where members are split: each written whole, except one of many members of its own
    (split as :func:`canonical_parts` splits it). Consecutive members written whole go in runs: the
    canonical JSON of each run's own object or array without its brackets, one encoding per run rather
    than per member. A run starts as one member and doubles while its text stays under
    :data:`_PIECE`, and halves when a run is over twice that, so a piece, the most of the text held at
    once, stays near :data:`_PIECE` (tool verdicts of a few hundred bytes go dozens at a time).
    """
    mapping = value_of is not None
    opening, closing = (b"{", b"}") if mapping else (b"[", b"]")
    if not members:
        yield opening + closing
        return
    size, start, count = 1, 0, len(members)
    while start < count:
        member = members[start]
        item = value_of(member) if value_of is not None else member
        if (type(item) is dict or type(item) is list or type(item) is tuple) and len(item) > _MANY:
            yield opening if start == 0 else b","  # a member of many members of its own: split in turn
            if mapping:
                yield _encode_string(member).encode("utf-8") + b":"
            yield from canonical_parts(item, below)
            start += 1
            continue
        end = start + 1
        while end < count and end - start < size:
            following = value_of(members[end]) if value_of is not None else members[end]
            if (type(following) is dict or type(following) is list or type(following) is tuple) and len(following) > _MANY:
                break
            end += 1
        run = members[start:end]
        text = canonical_json({key: value_of(key) for key in run} if value_of is not None else list(run))
        yield (opening if start == 0 else b",") + text[1:-1]
        start = end
        if len(text) < _PIECE // 2 and size < _MANY:
            size *= 2
        elif len(text) > _PIECE * 2 and size > 1:
            size //= 2
    yield closing


_WRAPPER = 4
"""Containers of this many members or fewer are split without counting as a level."""
_MANY = 64
"""Containers of more members than this are split at any depth."""
_PIECE = 8192
"""About how many bytes of members written whole are encoded at once."""
