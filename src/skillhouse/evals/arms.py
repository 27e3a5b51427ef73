"""The two arms of an evaluation: each is a tool profile, the tools and skill view a turn's guest is given.

``tools``: what a turn gets today, ``load_tools``, ``read_object`` and ``fetch_url`` from the first
step and every bound operation as a deferred tool that ``load_tools`` loads.

``raw``: the agent interface as it was before operations existed, ``read_object`` and ``fetch_url``
only. The guest is handed the skills with no declared operations; each operation file becomes a
document whose "The call" section says the method, URL, where each argument goes and an example body
(the reference :func:`skillhouse.export.reference_file` writes for agents outside skillhouse), so
the model reads how to make a request and composes it with ``fetch_url``. The guest's system prompt
opens by telling the model to load operations; in the raw arm its opening says to read the files and
use ``fetch_url`` instead (:meth:`Arm.system`, applied to every completion the model is asked for).

Only what the guest offers differs. The gateway is given the real releases in both arms, so its
egress rule, approval gates and idempotency keys treat a request the same whichever arm composed it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from skillhouse.compiler.eager_tools import EAGER_TOOLS
from skillhouse.export import reference_file
from skillhouse.host import TurnHost
from skillhouse.host.turn import Complete, Fetch
from skillhouse.json_types import ReleaseDocument

RAW_INTRO = (
    "You act for the user through tools. Each skill below describes HTTP requests in its files. Read a\n"
    "skill's instructions and files with read_object, then make each request yourself with fetch_url,\n"
    "as the file describes it: the method, the URL, the headers and the body."
)
SKILLS_HEADING = "\nSkills:\n"
"""Where the guest's system prompt turns from how to use the tools to the skills bound (``guest/loop.py``)."""


@dataclass(frozen=True)
class Arm:
    """A tool profile: the eager tools offered, whether operations are tools, how the system prompt opens."""

    name: str
    eager: tuple[str, ...]
    operations_as_tools: bool
    intro: str | None = None
    """The system prompt's opening, instead of the guest's (which tells the model to load operations)."""

    def system(self, guest_system: str) -> str:
        """The system prompt this arm's model reads, from the one the guest's loop wrote.

        The guest's prompt opens with how operations become calls, then lists the skills; an arm
        with an ``intro`` keeps the list and opens with its own lines instead."""
        if self.intro is None or SKILLS_HEADING not in guest_system:
            return guest_system
        return self.intro + "\n" + guest_system[guest_system.index(SKILLS_HEADING):]

    def guest_releases(self, releases: Iterable[ReleaseDocument]) -> list[ReleaseDocument]:
        """The releases as this arm's guest sees them."""
        return [dict(r) if self.operations_as_tools else _without_operations(r) for r in releases]

    def host(self, releases: Iterable[ReleaseDocument], fetch: Fetch, complete: Complete) -> TurnHost:
        """The turn host of this arm over ``releases`` (the real ones: the view is made here)."""
        return ArmHost(self.guest_releases(releases), fetch, complete, self.eager)


ARMS: dict[str, Arm] = {
    "tools": Arm("tools", ("load_tools", "read_object", "fetch_url"), operations_as_tools=True),
    "raw": Arm("raw", ("read_object", "fetch_url"), operations_as_tools=False, intro=RAW_INTRO),
}


class ArmHost(TurnHost):
    """A :class:`TurnHost` whose ``eager-tools`` answer offers only the arm's eager tools."""

    def __init__(self, releases: Iterable[ReleaseDocument], fetch: Fetch, complete: Complete,
                 eager: tuple[str, ...]) -> None:
        super().__init__(releases, fetch, complete)
        self._arm_eager = json.dumps([t for t in EAGER_TOOLS if t["name"] in eager], ensure_ascii=False)

    def eager_tools(self) -> str:
        return self._arm_eager


def _without_operations(release: ReleaseDocument) -> ReleaseDocument:
    view = dict(release)
    operations = [op for op in release.get("operations", []) if isinstance(op, dict)]
    view["operations"] = []
    view["documents"] = [
        *release.get("documents", []),
        *({"path": str(op["file"]), "text": reference_file(op)} for op in operations),
    ]
    return view
