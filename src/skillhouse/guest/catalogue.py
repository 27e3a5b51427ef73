"""The tools of a turn: the eager ones, each bound operation as a deferred tool, and resolving names.

A model asks ``load_tools`` for a tool by its full name (``hollowbrook_create_booking``) or by the
name its skill lists it under (``create_booking``) when exactly one bound operation has that name.
Two skills with the same short name make it ambiguous: the answer names both full names. An unknown
name gets the nearest names, never the whole list (a small model handed forty names picks a wrong one).

Standard library only: this runs inside the WebAssembly guest.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from skillhouse.guest.values import JsonObject, OperationDocument, ToolDefinition

NEAREST = 3


@dataclass(frozen=True)
class BoundSkill:
    """One skill version bound to the turn, as ``skill-operations`` hands it over."""

    name: str
    version: str
    description: str
    instructions: str
    operations: list[OperationDocument]
    documents: list[JsonObject]

    @classmethod
    def from_document(cls, doc: JsonObject) -> BoundSkill:
        return cls(
            name=str(doc["skill"]),
            version=str(doc.get("version", "")),
            description=str(doc.get("description") or ""),
            instructions=str(doc.get("instructions") or ""),
            operations=list(doc.get("operations") or []),
            documents=list(doc.get("documents") or []),
        )


@dataclass(frozen=True)
class Resolution:
    """What a name asked of ``load_tools`` comes to: one tool, or a code with the candidates."""

    asked: str
    tool: str | None = None
    code: str | None = None
    candidates: list[str] = field(default_factory=list)


class Catalogue:
    """The bound operations of a turn, indexed by full tool name and by the short name skills use."""

    def __init__(self, skills: list[BoundSkill], eager: list[ToolDefinition]) -> None:
        # the eager definitions come from the host (``eager-tools``): the guest implements the three
        # tools but keeps no copy of how they are described
        self.skills = {s.name: s for s in skills}
        self.eager = eager
        self.operations: dict[str, OperationDocument] = {}
        self.skill_of: dict[str, str] = {}
        self.by_short: dict[str, list[str]] = {}
        for skill in skills:
            for op in skill.operations:
                self.operations[op["tool_name"]] = op
                self.skill_of[op["tool_name"]] = skill.name
                self.by_short.setdefault(op["name"], []).append(op["tool_name"])

    def definition(self, tool: str) -> ToolDefinition:
        """The neutral definition of a bound operation's tool."""
        op = self.operations[tool]
        return {"name": tool, "description": op["description"], "parameters": op["schema"]}

    def listed_name(self, tool: str) -> str:
        """The name a manifest shows: the short one where it is unambiguous, else the full one."""
        short = str(self.operations[tool]["name"])
        return short if len(self.by_short.get(short, [])) == 1 and short not in self.operations else tool

    def resolve(self, asked: str) -> Resolution:
        """``asked`` as a full tool name, else as an unambiguous short name, else the nearest names."""
        if asked in self.operations:
            return Resolution(asked, tool=asked)
        owners = self.by_short.get(asked, [])
        if len(owners) == 1:
            return Resolution(asked, tool=owners[0])
        if len(owners) > 1:
            return Resolution(asked, code="ambiguous-name", candidates=sorted(owners))
        if any(tool["name"] == asked for tool in self.eager):
            return Resolution(asked, code="already-offered", candidates=[asked])
        return Resolution(asked, code="unknown-tool", candidates=self.nearest(asked))

    def nearest(self, asked: str) -> list[str]:
        """At most :data:`NEAREST` full tool names close to ``asked`` (by full or short name)."""
        names = {
            **{t: t for t in self.operations},
            **{s: o[0] for s, o in self.by_short.items() if len(o) == 1},
        }
        lowered = {n.lower(): n for n in names}
        close = difflib.get_close_matches(asked.lower(), list(lowered), n=NEAREST, cutoff=0.5)
        out: list[str] = []
        for match in close:
            tool = names[lowered[match]]
            if tool not in out:
                out.append(tool)
        for short, owners in self.by_short.items():
            # an ambiguous short name still points somewhere useful
            if len(owners) > 1 and difflib.SequenceMatcher(None, asked.lower(), short.lower()).ratio() >= 0.5:
                out.extend(o for o in sorted(owners) if o not in out)
        return out[:NEAREST]
