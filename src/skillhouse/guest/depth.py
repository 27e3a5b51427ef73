"""How deeply a JSON text nests, counted without parsing it: the guard before every parse of untrusted JSON.

Standard library only: this runs inside the WebAssembly guest.
"""

from __future__ import annotations

import re

_TOKENS = re.compile(r'["\\\[\]{}]')
"""The only characters that decide nesting: quotes, backslashes (inside strings) and brackets."""


def nesting_depth(text: str) -> int:
    """How deeply the JSON ``text`` nests arrays and objects, counted without parsing it.

    Checked before parsing so the refusal does not depend on the interpreter's recursion limit or
    stack, which differ between CPython in process and the WebAssembly component. Only the characters
    that decide it are visited (the regular expression engine skips the rest).
    """
    depth = deepest = 0
    in_string = False
    escaped_at = -1
    for token in _TOKENS.finditer(text):
        at = token.start()
        if at == escaped_at:
            continue  # the character a backslash escapes
        char = text[at]
        if in_string:
            if char == "\\":
                escaped_at = at + 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif char in "]}":
            depth -= 1
    return deepest


def nests_deeper_than(text: str, limit: int) -> bool:
    """Whether ``text`` nests deeper than ``limit`` (:func:`nesting_depth`); a text with no more
    opening brackets than that, in strings or not, is settled without a scan."""
    if text.count("[") + text.count("{") <= limit:
        return False
    return nesting_depth(text) > limit
