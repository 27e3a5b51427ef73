"""Applying ``curation.yaml`` (:mod:`skillhouse.skill.curation`) while the wizard imports a spec.

Two hooks in the wizard: :meth:`CurationRun.select` before the operations are built (entries resolved
to the spec's operations, hidden ones left out, renames and new descriptions applied to what gets
built) and :meth:`CurationRun.finish` after each is rendered (arguments described, defaulted or
pinned, the approval gate of a consequential operation). Then :meth:`CurationRun.record` writes
what ``skillhouse check`` holds the overlay against.

A pinned argument leaves the tool's schema and its value is written into the operation: a path
parameter into the URL's segment, a query parameter into the URL's query, a header into the fixed
``headers``, each encoded as the guest would encode it. A body field stays in the schema narrowed to
the one value (``const``) and required, since the skill format sends only what the call holds.
A problem (an entry for an operation the spec no longer has, an argument the operation does not
have, a value its schema refuses, a name another operation has) is located in ``curation.yaml``,
reported, and recorded so the package is refused at check and publish until the overlay is fixed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar
from urllib.parse import quote

from skillhouse.compiler.expansion import TooLarge, UnknownType, expand_types
from skillhouse.compiler.operation import FORBIDDEN_HEADERS
from skillhouse.compiler.urls import path_of
from skillhouse.openapi.operations import BuiltOperation
from skillhouse.openapi.render import operation_markdown, spec_skill_name
from skillhouse.openapi.report import OperationOutcome
from skillhouse.records import field, record, replace
from skillhouse.skill.curation import (
    ArgumentCuration,
    Curation,
    OperationCuration,
    OperationIdentity,
    read_curation,
    record_text,
    resolve,
    unknown_argument_message,
)
from skillhouse.skill.errors import INVALID_CURATION, STALE_CURATION, SkillError
from skillhouse.skill.files import CURATION_FILE, RECORD_FILE
from skillhouse.skill.frontmatter import Frontmatter, MarkdownFile, RenderedJson

__all__ = ["CURATION_FILE", "RECORD_FILE", "CurationRun", "curation_of", "read_curation", "spec_skill_name"]

_SEPARATOR = {"comma": ",", "pipeDelimited": "|", "spaceDelimited": " "}


class _Operation(Protocol):
    """What the wizard knows of a spec operation before it is built (its ``_Found``)."""

    stem: str
    method: str
    path: str
    op: dict[str, Any]


Found = TypeVar("Found", bound=_Operation)


def curation_of(directory: Path) -> CurationRun | None:
    """A run of ``directory``'s ``curation.yaml``, or ``None`` when the skill has none."""
    path = directory / CURATION_FILE
    if not path.is_file():
        return None
    return CurationRun.of(*read_curation(f"{directory}/{CURATION_FILE}".removeprefix("./"), path.read_bytes()))


@record
class CurationRun:
    """One import's application of an overlay: changes per operation and the problems found."""

    curation: Curation
    problems: list[SkillError] = field(default_factory=list)
    changes: dict[str, list[str]] = field(default_factory=dict)
    """Per operation (its final name): what the overlay changed."""
    hidden: list[str] = field(default_factory=list)
    _entries: dict[str, OperationCuration] = field(default_factory=dict)
    _identities: list[OperationIdentity] = field(default_factory=list)
    _index: dict[str, int] = field(default_factory=dict)
    _arguments: dict[int, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, curation: Curation, errors: Sequence[SkillError] = ()) -> CurationRun:
        """A run of ``curation``, starting with the errors its reading found."""
        return cls(curation, list(errors))

    def select(self, found: list[Found], wanted: list[Found]) -> list[Found]:
        """``wanted`` without hidden operations, renamed and redescribed; entries resolved against ``found``."""
        self._identities = [OperationIdentity(f.method, f.path, _operation_id(f.op)) for f in found]
        resolved, errors = resolve(self.curation, self._identities)
        self.problems.extend(errors)
        final = {index: f.stem for index, f in enumerate(found)}
        hidden = {index for index, entry in resolved.items() if entry.hide}
        for index, entry in sorted(resolved.items(), key=lambda pair: pair[1].line):
            if entry.name is not None and entry.name != found[index].stem:
                clash = next((i for i, s in final.items() if i != index and i not in hidden and s.lower() == entry.name.lower()), None)
                if clash is not None:
                    self._problem(entry.line_of("name"), INVALID_CURATION,
                                  f"operations.{entry.key}: name {entry.name!r} is taken by {self._identities[clash].label}; "
                                  "choose another name (or rename that operation too)")  # fmt: skip
                else:
                    final[index] = entry.name
        selected = {id(item) for item in wanted}
        out: list[Found] = []
        for index, item in enumerate(found):
            if index not in hidden:  # a hidden operation has no file, so another may take its name
                self._index[final[index]] = index
            if id(item) not in selected:
                continue
            if index not in resolved:
                out.append(item)
                continue
            entry = resolved[index]
            if entry.hide:
                self.hidden.append(item.stem)
                continue
            notes: list[str] = []
            if final[index] != item.stem:
                notes.append(f"renamed from {item.stem!r}")
                item = replace(item, stem=final[index])
            if entry.description is not None:
                first = entry.description.split("\n", 1)[0].strip()
                item = replace(item, op={**item.op, "summary": first, "description": entry.description})
                notes.append("description replaced")
            self._entries[item.stem] = entry
            self.changes[item.stem] = notes
            out.append(item)
        return out

    def finish(
        self, stem: str, outcome: OperationOutcome, markdown: MarkdownFile | None, types: dict[str, Any]
    ) -> tuple[OperationOutcome, MarkdownFile | None]:
        """The operation ``stem`` with its arguments and gate curated; the outcome carries the changes."""
        entry = self._entries.get(stem)
        if entry is None:
            return outcome, markdown
        built = _built(markdown) if markdown is not None else None
        if built is not None:  # recorded for the entry's operation only: the check holds entries against it
            self._arguments[self._index[stem]] = list(built.schema.get("properties", {}))
        notes = self.changes.setdefault(stem, [])
        if built is None or markdown is None:
            if entry.arguments or entry.consequential:
                notes.append("arguments and approval not applied: the operation was skipped")
            return _noted(outcome, notes), markdown
        for argument in entry.arguments:
            self._argument(entry, argument, built, types, notes)
        approval = None
        if entry.consequential:
            approval = {"matches": f"{built.method} {path_of(built.url)}"}
            if isinstance(entry.consequential, str):
                approval["reason"] = entry.consequential
            notes.append("consequential: calls wait for approval")
        front = markdown.frontmatter
        prose = front.body.rstrip("\n") if front is not None else ""
        curated = _with_approval(operation_markdown(markdown.path, built, None, prose, False), approval)
        return _noted(outcome, notes), curated

    def record(self, files: dict[str, str]) -> str:
        """``curation.applied.json`` for the package ``files`` as the import writes them."""
        stems = {index: stem for stem, index in self._index.items()}
        operations = []
        for index, identity in enumerate(self._identities):
            stem = stems.get(index)
            written = stem is not None and f"{stem}.md" in files
            operations.append({
                "method": identity.method,
                "path": identity.path,
                "operationId": identity.operation_id,
                "file": f"{stem}.md" if written else None,
                "arguments": self._arguments.get(index),
            })  # fmt: skip
        return record_text(self.curation, operations, self.problems)

    def report(self) -> dict[str, Any]:
        """The overlay's part of the import report (``--report`` JSON)."""
        return {
            "file": self.curation.shown,
            "changes": {stem: notes for stem, notes in self.changes.items() if notes},
            "hidden": list(self.hidden),
            "problems": [p.as_dict() for p in sorted(set(self.problems))],
        }

    def summary(self) -> list[str]:
        """Lines for the import's summary: what the overlay did, then every problem located."""
        curated = [stem for stem, notes in self.changes.items() if notes]
        lines = [
            f"{CURATION_FILE}: {len(curated)} operation{'s' if len(curated) != 1 else ''} curated, "
            f"{len(self.hidden)} hidden, {len(set(self.problems))} problem{'s' if len(set(self.problems)) != 1 else ''}"
        ]
        lines.extend(str(problem) for problem in sorted(set(self.problems)))
        if self.problems:
            lines.append(f"the skill is refused at check and publish until {CURATION_FILE} is fixed and the spec re-imported")
        return lines

    def _problem(self, line: int, code: str, message: str) -> None:
        self.problems.append(self.curation.error(line, code, message))

    def _argument(
        self, entry: OperationCuration, argument: ArgumentCuration, built: BuiltOperation, types: dict[str, Any], notes: list[str]
    ) -> None:
        properties: dict[str, Any] = built.schema.setdefault("properties", {})
        required: list[str] = built.schema.get("required", [])
        where = f"operations.{entry.key}.arguments.{argument.name}"
        if argument.name not in properties:
            self._problem(argument.line, STALE_CURATION, unknown_argument_message(entry.key, argument.name, properties))
            return
        schema = properties[argument.name]
        if argument.description is not None:
            if isinstance(schema, dict):
                schema = properties[argument.name] = {**schema, "description": argument.description}
            notes.append(f"argument {argument.name!r} described")
        for key, value, present in (("default", argument.default, argument.has_default), ("pin", argument.pin, argument.has_pin)):
            if not present:
                continue
            refused = _refusal(schema, value, types)
            if refused is not None:
                self._problem(argument.line, INVALID_CURATION, f"{where}: {key} {json.dumps(value)} is not allowed by the argument's schema: {refused}")
                return
        if argument.has_default:
            if argument.name in required:
                self._problem(argument.line, INVALID_CURATION,
                              f"{where}: the argument is required, so a default would never be used; pin it to send it always")  # fmt: skip
                return
            properties[argument.name] = {**schema, "default": argument.default} if isinstance(schema, dict) else schema
            built.defaults[argument.name] = argument.default  # sent when a call leaves the argument out
            notes.append(f"argument {argument.name!r} defaults to {json.dumps(argument.default)}")
        if argument.has_pin:
            problem = _pin(built, argument.name, argument.pin)
            if problem is not None:
                self._problem(argument.line, INVALID_CURATION, f"{where}: {problem}")
            elif argument.name in properties:
                notes.append(f"argument {argument.name!r} pinned to {json.dumps(argument.pin)} (kept as const: body fields are sent from the call)")
            else:
                notes.append(f"argument {argument.name!r} pinned to {json.dumps(argument.pin)} and removed from the tool")


def _operation_id(op: dict[str, Any]) -> str | None:
    value = op.get("operationId")
    return value if isinstance(value, str) and value else None


def _noted(outcome: OperationOutcome, notes: list[str]) -> OperationOutcome:
    if not notes:
        return outcome
    return replace(outcome, notes=(*outcome.notes, *(f"{CURATION_FILE}: {note}" for note in notes)))


def _built(markdown: MarkdownFile) -> BuiltOperation | None:
    """The operation block of a rendered file, back as the value it was rendered from."""
    front = markdown.frontmatter
    block = front.data.get("operation") if front is not None else None
    if not isinstance(block, dict) or not isinstance(block.get("schema"), RenderedJson):
        return None
    return BuiltOperation(
        method=block["method"],
        url=block["url"],
        schema=json.loads(json.dumps(block["schema"].value)),  # as the file's text parses: a copy, curated in place
        query=list(block.get("query", [])),
        header=list(block.get("header", [])),
        headers=dict(block.get("headers", {})),
        names=dict(block.get("names", {})),
        style=dict(block.get("style", {})),
        allow_empty=list(block.get("allow_empty", [])),
        explode=list(block.get("explode", [])),
        defaults=dict(block.get("defaults", {})),
        encoding=block.get("encoding", "json"),
        payload=block.get("payload"),
        content_type=block.get("content_type"),
    )


def _with_approval(markdown: MarkdownFile, approval: dict[str, str] | None) -> MarkdownFile:
    """``markdown`` with an ``approval`` block in its frontmatter (and its data), when there is one."""
    front = markdown.frontmatter
    if approval is None or front is None:
        return markdown
    head, body = markdown.text[: len(markdown.text) - len(front.body)], front.body
    import yaml  # here: only a curated approval needs it

    block = yaml.safe_dump({"approval": approval}, sort_keys=False, allow_unicode=True, width=1_000_000)
    text = head.removesuffix("---\n") + block + "---\n" + body
    added = block.count("\n")
    curated = Frontmatter({**front.data, "approval": approval}, {}, 1, body, front.body_line + added, {})
    return MarkdownFile(markdown.path, text, curated)


def _refusal(schema: Any, value: Any, types: dict[str, Any]) -> str | None:
    """Why ``schema`` (which may refer to ``#/types``) refuses ``value``, or ``None``."""
    import jsonschema  # here: its import costs more than a whole small import, and only overlays need it

    try:
        expanded = expand_types(schema, types)
        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(expanded).iter_errors(value))
    except (UnknownType, TooLarge, jsonschema.exceptions.SchemaError, RecursionError) as exc:
        return f"the schema cannot be checked ({type(exc).__name__})"
    if error is None:
        return None
    at = "".join(f"[{json.dumps(p)}]" for p in error.absolute_path)
    return f"{error.message}" + (f" at {at}" if at else "")


def _pin(built: BuiltOperation, name: str, value: Any) -> str | None:
    """Write ``value`` into the operation in ``name``'s place and drop the argument; or say why not."""
    properties: dict[str, Any] = built.schema["properties"]
    wire = built.names.get(name, name)
    if "{" + name + "}" in built.url:
        if built.style.get(name) == "matrix":
            return "a matrix path parameter cannot be pinned: its ';name=' segment is written by each call"
        text = _scalar(value)
        if text is None or text in ("", ".", "..") or any(c in "/\\" or ord(c) < 0x20 or ord(c) == 0x7F for c in text):
            return "a path parameter is pinned to a string or number that is not '', '.' or '..' and has no '/', '\\' or control characters"
        prefix = "." if built.style.pop(name, None) == "label" else ""
        built.url = built.url.replace("{" + name + "}", prefix + quote(text, safe=""))
    elif name in built.query:
        pairs = _query_pairs(wire, value, built.style.get(name))
        if value == "" and name not in built.allow_empty:
            pairs = []  # as a call with "" sends: an empty value only where the spec allows it
        if name in built.allow_empty:
            built.allow_empty.remove(name)
        if pairs is None:
            return "a query parameter is pinned to a string, number, boolean or a list of them"
        if pairs:
            built.url += ("&" if "?" in built.url else "?") + "&".join(pairs)
        built.query.remove(name)
        built.style.pop(name, None)
    elif name in built.header:
        text = _scalar(value) if not isinstance(value, list) else ",".join(t for t in map(_scalar, value) if t is not None)
        if text is None or not all(c == "\t" or 0x20 <= ord(c) < 0x7F for c in text):
            return "a header is pinned to printable ASCII text (or a number or boolean)"
        if wire.lower() in FORBIDDEN_HEADERS:
            return f"header {wire!r} cannot be fixed in a skill (credentials are bound in the gateway)"
        built.headers[wire] = text
        built.header.remove(name)
    else:
        # a body field or the whole payload: the call carries the body, so the schema holds the one value
        described = properties[name].get("description") if isinstance(properties[name], dict) else None
        properties[name] = {"const": value, **({"description": described} if isinstance(described, str) else {})}
        required = built.schema.setdefault("required", [])
        if name not in required:
            required.append(name)
        return None
    built.names.pop(name, None)
    del properties[name]
    if name in built.schema.get("required", []):
        built.schema["required"].remove(name)
        if not built.schema["required"]:
            del built.schema["required"]
    return None


def _scalar(value: Any) -> str | None:
    """A scalar as the guest writes it into a URL or header; ``None`` for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else json.dumps(value)
    return None


def _query_pairs(wire: str, value: Any, style: str | None) -> list[str] | None:
    key = quote(wire, safe="")
    if isinstance(value, list):
        items = [_scalar(v) for v in value]
        if any(item is None for item in items):
            return None
        texts = [str(item) for item in items]
        separator = _SEPARATOR.get(style or "")
        if separator is not None:
            return [f"{key}={quote(separator.join(texts), safe=',')}"] if texts else []
        return [f"{key}={quote(text, safe='')}" for text in texts]
    text = _scalar(value)
    return None if text is None else [f"{key}={quote(text, safe='')}"]
