"""The turn guest: a turn's tools, argument validation, call-to-request translation, the agent loop.

Standard library only: it is compiled into the WebAssembly component, whose only way out is the
host functions of :class:`Host`.
"""

# The names load on first use (PEP 562), as skillhouse.compiler's do: a host that needs one module of the
# guest (the wasm runner needs `Host` and the values, never the loop, the translation or the validation)
# does not import them all; they were a third of a new process's warm wasm start. (Not `from typing import
# TYPE_CHECKING`, nor `importlib.import_module`: neither module is loaded at start-up.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from skillhouse.guest.catalogue import BoundSkill, Catalogue
    from skillhouse.guest.guest import Guest
    from skillhouse.guest.host import Host
    from skillhouse.guest.results import model_result
    from skillhouse.guest.translation import InvalidArguments, build_request, translate
    from skillhouse.guest.validation import Violation, validate

_FROM = {
    "BoundSkill": "skillhouse.guest.catalogue",
    "Catalogue": "skillhouse.guest.catalogue",
    "Guest": "skillhouse.guest.guest",
    "Host": "skillhouse.guest.host",
    "model_result": "skillhouse.guest.results",
    "InvalidArguments": "skillhouse.guest.translation",
    "build_request": "skillhouse.guest.translation",
    "translate": "skillhouse.guest.translation",
    "Violation": "skillhouse.guest.validation",
    "validate": "skillhouse.guest.validation",
}


def __getattr__(name: str) -> object:
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(__import__(module, fromlist=[name]), name)
    globals()[name] = value  # once: later lookups find it without coming here
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
