"""The turn guest: a turn's tools, argument validation, call-to-request translation, the agent loop.

Standard library only: it is compiled into the WebAssembly component, whose only way out is the
host functions of :class:`Host`.
"""

from skillhouse.guest.catalogue import BoundSkill, Catalogue
from skillhouse.guest.guest import Guest
from skillhouse.guest.host import Host
from skillhouse.guest.results import model_result
from skillhouse.guest.translation import InvalidArguments, build_request, translate
from skillhouse.guest.validation import Violation, validate

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
