"""The tools of a turn: the eager ones, each bound operation as a deferred tool, and resolving names.

A model asks ``load_tools`` for a tool by its full name (``hollowbrook_create_booking``) or by the
name its skill lists it under (``create_booking``) when exactly one bound operation has that name.
Two skills with the same short name make it ambiguous: the answer names both full names. An unknown
name gets the nearest names, never the whole list (a small model handed forty names picks a wrong one).

The host hands the turn's skills over as one text (:func:`skills_text`, read by :func:`read_skills`): a
JSON line with each skill's fields and, per operation, its tool name, its short name and the lengths of
two JSON texts that follow the line, the operation document (its schema left out, as ``null``) and its
tool definition, written exactly as ``list_tools`` writes it. A turn start reads the line alone: an
operation is decoded when a call or a document needs it, and ``list_tools`` puts the definitions'
texts together without decoding or encoding them. In the WebAssembly guest, decoding and encoding
every schema of a large catalogue was most of what a turn start cost.

Standard library only: this runs inside the WebAssembly guest.
"""

from __future__ import annotations

import difflib
import json
import json.encoder
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast, overload

from skillhouse.guest.values import JsonObject, OperationDocument, ToolDefinition, json_dump

NEAREST = 3
_SCHEMA = "schema"


def _dump(value: object) -> str:
    return json_dump(value)


def skills_text(skills: Iterable[JsonObject]) -> str:
    """The ``skill-operations`` text of ``skills`` (entries as :meth:`BoundSkill.from_document` reads them)."""
    header: list[JsonObject] = []
    body: list[str] = []
    dump = json_dump  # its C encoder is made once: the catalogue writes many small texts
    for skill in skills:
        entries: list[list[object]] = []
        for op in skill.get("operations") or []:
            # the schema is written once, in the definition; the document keeps its place as null
            rest = dump({**op, _SCHEMA: None} if _SCHEMA in op else op)
            definition = dump({"name": op["tool_name"], "description": op.get("description"),
                                "parameters": op.get(_SCHEMA)})  # fmt: skip
            entries.append([op["tool_name"], op["name"], len(rest), len(definition)])
            body += (rest, definition)
        header.append({**{k: v for k, v in skill.items() if k != "operations"}, "operations": entries})
    return _dump(header) + "\n" + "".join(body)


class OperationTexts:
    """The operation documents and definitions of a :func:`skills_text`, each decoded on first use."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._decoded: dict[int, tuple[OperationDocument, ToolDefinition]] = {}

    def decoded(self, span: tuple[int, int, int]) -> tuple[OperationDocument, ToolDefinition]:
        """The operation and definition whose texts start at ``span[0]`` (lengths ``span[1]``, ``span[2]``)."""
        found = self._decoded.get(span[0])
        if found is None:
            start, rest, length = span
            op: OperationDocument = json.loads(self.text[start : start + rest])
            definition: ToolDefinition = json.loads(self.text[start + rest : start + rest + length])
            if _SCHEMA in op:
                op[_SCHEMA] = definition["parameters"]  # one object, as in the document the host holds
            found = self._decoded[start] = (op, definition)
        return found

    def definition_text(self, span: tuple[int, int, int]) -> str:
        start, rest, length = span
        return self.text[start + rest : start + rest + length]


class _SkillOperations(Sequence[OperationDocument]):
    """A skill's operation documents in order, decoded as they are read."""

    def __init__(self, texts: OperationTexts, spans: list[tuple[int, int, int]]) -> None:
        self._texts = texts
        self._spans = spans

    def __len__(self) -> int:
        return len(self._spans)

    @overload
    def __getitem__(self, index: int) -> OperationDocument: ...

    @overload
    def __getitem__(self, index: slice) -> list[OperationDocument]: ...

    def __getitem__(self, index: int | slice) -> OperationDocument | list[OperationDocument]:
        if isinstance(index, slice):
            return [self._texts.decoded(span)[0] for span in self._spans[index]]
        return self._texts.decoded(self._spans[index])[0]


class _Operations(Mapping[str, OperationDocument]):
    """Tool name to operation document, decoded on first lookup."""

    def __init__(self, texts: OperationTexts, spans: dict[str, tuple[int, int, int]]) -> None:
        self._texts = texts
        self.spans = spans

    def __getitem__(self, tool: str) -> OperationDocument:
        return self._texts.decoded(self.spans[tool])[0]

    def __contains__(self, tool: object) -> bool:
        return tool in self.spans

    def __iter__(self) -> Iterator[str]:
        return iter(self.spans)

    def __len__(self) -> int:
        return len(self.spans)


@dataclass(frozen=True)
class BoundSkill:
    """One skill version bound to the turn, as ``skill-operations`` hands it over."""

    name: str
    version: str
    description: str
    instructions: str
    operations: Sequence[OperationDocument]
    documents: list[JsonObject]

    @classmethod
    def from_document(cls, doc: JsonObject) -> BoundSkill:
        return cls(
            name=str(doc["skill"]),
            version=str(doc.get("version", "")),
            description=str(doc.get("description") or ""),
            instructions=str(doc.get("instructions") or ""),
            operations=_operations(doc.get("operations")),
            documents=list(doc.get("documents") or []),
        )


def _operations(value: object) -> Sequence[OperationDocument]:
    return value if isinstance(value, _SkillOperations) else list(cast(Iterable[OperationDocument], value or []))


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
        self.operations: Mapping[str, OperationDocument] = {}
        self.skill_of: dict[str, str] = {}
        self.by_short: dict[str, list[str]] = {}
        self._texts: OperationTexts | None = None
        operations: dict[str, OperationDocument] = {}
        for skill in skills:
            for op in skill.operations:
                operations[op["tool_name"]] = op
                self._index(skill.name, op["tool_name"], op["name"])
        self.operations = operations

    @classmethod
    def from_text(cls, text: str, eager: list[ToolDefinition]) -> Catalogue:
        """The catalogue of a :func:`skills_text`: its line decoded now, each operation when it is first used."""
        line, _, _ = text.partition("\n")
        texts = OperationTexts(text)
        catalogue = cls([], eager)
        catalogue._texts = texts
        spans: dict[str, tuple[int, int, int]] = {}
        skills: list[BoundSkill] = []
        start = len(line) + 1
        for doc in json.loads(line):
            listed: list[tuple[int, int, int]] = []
            for tool, short, rest, length in doc.get("operations") or []:
                span = (start, rest, length)
                start += rest + length
                listed.append(span)
                spans[tool] = span
                catalogue._index(str(doc["skill"]), tool, short)
            skills.append(BoundSkill.from_document({**doc, "operations": _SkillOperations(texts, listed)}))
        catalogue.skills = {s.name: s for s in skills}
        catalogue.operations = _Operations(texts, spans)
        return catalogue

    def _index(self, skill: str, tool: str, short: str) -> None:
        self.skill_of[tool] = skill
        self.by_short.setdefault(short, []).append(tool)

    def definition(self, tool: str) -> ToolDefinition:
        """The neutral definition of a bound operation's tool."""
        if isinstance(self.operations, _Operations) and self._texts is not None:
            return dict(self._texts.decoded(self.operations.spans[tool])[1])  # a copy, as below: callers may change it
        op = self.operations[tool]
        return {"name": tool, "description": op["description"], "parameters": op["schema"]}

    def definition_text(self, tool: str) -> str:
        """:meth:`definition` as the JSON ``list_tools`` writes, taken as the host wrote it when it did."""
        if isinstance(self.operations, _Operations) and self._texts is not None:
            return self._texts.definition_text(self.operations.spans[tool])
        return _dump(self.definition(tool))

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
