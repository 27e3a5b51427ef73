"""The OpenAPI wizard: Swagger 2.0 and OpenAPI 3.0/3.1 specs to skill packages the compiler accepts."""

from skillhouse.openapi.curation import CurationRun, curation_of
from skillhouse.openapi.document import SpecDocument, SpecError, load_spec, spec_from_data
from skillhouse.openapi.references import RefPolicy, RefProblem
from skillhouse.openapi.report import ImportReport, OperationOutcome
from skillhouse.openapi.wizard import ImportResult, import_openapi, write_skill

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
