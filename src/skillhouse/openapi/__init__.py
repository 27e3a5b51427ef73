"""The OpenAPI wizard: Swagger 2.0 and OpenAPI 3.0/3.1 specs to skill packages the compiler accepts."""

from __future__ import annotations

from skillhouse.openapi.document import SpecDocument, SpecError, load_spec, spec_from_data
from skillhouse.openapi.references import RefPolicy, RefProblem
from skillhouse.openapi.report import ImportReport, OperationOutcome
from skillhouse.openapi.wizard import ImportResult, import_openapi, write_skill

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.openapi.curation import CurationRun, curation_of


def __getattr__(name: str) -> Any:
    # The curation run is loaded when asked for: an import without a curation.yaml never needs it.
    if name in ("CurationRun", "curation_of"):
        from skillhouse.openapi import curation

        return getattr(curation, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CurationRun",
    "ImportReport",
    "ImportResult",
    "OperationOutcome",
    "RefPolicy",
    "RefProblem",
    "SpecDocument",
    "SpecError",
    "curation_of",
    "import_openapi",
    "load_spec",
    "spec_from_data",
    "write_skill",
]
