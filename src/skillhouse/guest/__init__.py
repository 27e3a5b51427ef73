"""The turn guest: a turn's tools, argument validation, call-to-request translation, the agent loop.

Standard library only: it is compiled into the WebAssembly component, whose only way out is the
host functions of :class:`Host`.
"""

# Not `from typing import TYPE_CHECKING`: the names are loaded on first use (PEP 562), so a host that needs
# one module of the guest (the wasm runner needs `Host` and the values, never the translation or the loop)
# does not import them all: the guest's modules were a third of a new process's warm wasm start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from skillhouse.guest.catalogue import BoundSkill, Catalogue
    from skillhouse.guest.guest import Guest
    from skillhouse.guest.host import Host
    from skillhouse.guest.results import model_result
    from skillhouse.guest.translation import InvalidArguments, build_request, translate
    from skillhouse.guest.validation import Violation, validate

_MODULES = {
    "BoundSkill": "catalogue",
    "Catalogue": "catalogue",
    "Guest": "guest",
    "Host": "host",
    "model_result": "results",
    "InvalidArguments": "translation",
    "build_request": "translation",
    "translate": "translation",
    "Violation": "validation",
    "validate": "validation",
}
"""Each name this package offers, by the module of it that defines it."""


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
    globals()[name] = value  # found directly from now on
    return value


__all__ = [
    "BoundSkill",
    "Catalogue",
    "Guest",
    "Host",
    "InvalidArguments",
    "Violation",
    "build_request",
    "model_result",
    "translate",
    "validate",
]
