"""The names of the curation files a skill package may hold beside its Markdown files and ``types.json``.

Their own module, so the package reader knows them without loading the curation module (loaded only
when a package has an overlay) and that module knows them without importing the reader.
"""

from __future__ import annotations

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final


CURATION_FILE: Final = "curation.yaml"
"""The skill's overlay on an imported spec (see :mod:`skillhouse.skill.curation`)."""
RECORD_FILE: Final = "curation.applied.json"
"""What the last import applied of it."""
