"""Located errors: every problem in a skill package is reported as ``FILE:LINE: CODE: message``.

Codes are stable (tests and tools match on them); messages are for people and may change.
"""

from __future__ import annotations

from collections.abc import Iterable

from skillhouse.errors import CallerError
from skillhouse.records import record

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

INVALID_FRONTMATTER: Final = "invalid-frontmatter"
INVALID_SKILL_MANIFEST: Final = "invalid-skill-manifest"
INVALID_OPERATION: Final = "invalid-operation"
UNKNOWN_QUALIFIER: Final = "unknown-qualifier"
NAME_IN_TWO_PLACES: Final = "name-in-two-places"
BODY_ON_GET: Final = "body-on-get"
PATH_PARAMETER: Final = "path-parameter"
INVALID_SCHEMA: Final = "invalid-schema"
UNKNOWN_TYPE: Final = "unknown-type"
SCHEMA_TOO_LARGE: Final = "schema-too-large"
GATE_MISMATCH: Final = "gate-mismatch"
UNKNOWN_IDENTITY_FIELD: Final = "unknown-identity-field"
TOOL_NAME_COLLISION: Final = "tool-name-collision"
INVALID_CURATION: Final = "invalid-curation"
STALE_CURATION: Final = "stale-curation"

ALL_CODES: Final = frozenset(
    {
        INVALID_FRONTMATTER,
        INVALID_SKILL_MANIFEST,
        INVALID_OPERATION,
        UNKNOWN_QUALIFIER,
        NAME_IN_TWO_PLACES,
        BODY_ON_GET,
        PATH_PARAMETER,
        INVALID_SCHEMA,
        UNKNOWN_TYPE,
        SCHEMA_TOO_LARGE,
        GATE_MISMATCH,
        UNKNOWN_IDENTITY_FIELD,
        TOOL_NAME_COLLISION,
        INVALID_CURATION,
        STALE_CURATION,
    }
)


@record(frozen=True, order=True)
class SkillError:
    """One problem found in a skill package, with the file and line it is on."""

    file: str
    """Path of the file, relative to the package's parent directory (``hollowbrook/charge.md``)."""
    line: int
    """1-based line number; the line of the offending key for frontmatter problems."""
    code: str
    """One of the stable codes above."""
    message: str
    """What is wrong and what to do about it."""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.code}: {self.message}"

    def as_dict(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "code": self.code, "message": self.message}


class SkillPackageError(CallerError):
    """Raised by functions that cannot return a result because the package has errors (``check-failed``);
    :attr:`errors` lists every one with its file, line and code."""

    code = "check-failed"

    def __init__(self, errors: list[SkillError]) -> None:
        self.errors = sorted(errors)
        super().__init__("\n".join(str(e) for e in self.errors))


def close_matches(word: str, choices: Iterable[str], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """``difflib.get_close_matches``, imported on the first misspelling: the import is a noticeable
    part of a clean compile's start-up, which never needs it."""
    from difflib import get_close_matches

    return get_close_matches(word, list(choices), n=n, cutoff=cutoff)
