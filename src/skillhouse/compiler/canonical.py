"""RFC 8785 canonical JSON, with a fast path for the documents skillhouse hashes most.

The ``rfc8785`` package is exact and pure Python: about 5 µs per value, half a second for a Stripe
release. For a value whose object keys are all ASCII (so UTF-16 and code-point order agree), whose
integers are within ±2**53 and whose floats are whole or written without an exponent (see
:func:`_plain_float`), the standard library's C encoder with sorted keys and no whitespace writes the
same bytes; strings are escaped the
same way (``\\"``, ``\\\\``, the short escapes, ``\\u00xx`` for other controls, everything else as is).
Anything else goes to ``rfc8785``. A property test holds the two to byte equality.
"""

from __future__ import annotations

import json
from typing import Any

import rfc8785

_LIMIT = 2**53 - 1  # what rfc8785 accepts
_encode = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False).encode


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


def _prepared(value: Any) -> Any:
    """``value`` ready for the C encoder (floats made plain), or :class:`_Slow`."""
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if -_LIMIT <= value <= _LIMIT:
            return value
        raise _Slow
    if isinstance(value, float):
        return _plain_float(value)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str) or not key.isascii():
                raise _Slow  # UTF-16 and code-point order may differ
            out[key] = _prepared(item)
        return out
    if isinstance(value, list | tuple):
        return [_prepared(item) for item in value]
    raise _Slow


def canonical_json(value: Any) -> bytes:
    """RFC 8785 canonical JSON bytes of ``value``."""
    try:
        return _encode(_prepared(value)).encode("utf-8")
    except (_Slow, UnicodeEncodeError, RecursionError):
        # exponents, non-ASCII keys, big integers, a lone surrogate: the exact encoder decides
        return bytes(rfc8785.dumps(value))
