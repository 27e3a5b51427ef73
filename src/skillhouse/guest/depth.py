"""How deeply a JSON text nests, counted without parsing it: the guard before every parse of untrusted JSON.

Standard library only: this runs inside the WebAssembly guest.
"""

from __future__ import annotations


def nesting_depth(text: str) -> int:
    """How deeply the JSON ``text`` nests arrays and objects, counted without parsing it.

    Checked before parsing so the refusal does not depend on the interpreter's recursion limit or
    stack, which differ between CPython in process and the WebAssembly component.
    """
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest
