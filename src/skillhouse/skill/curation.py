"""``curation.yaml``: a team's changes to an imported skill, kept beside it so they survive re-import.

The overlay names operations by their stable identity in the spec (``operationId``, or ``METHOD
/path`` as the spec writes it) and says, per operation: ``name`` (the operation's new name, so its
tool's), ``description``, ``hide: true``, ``consequential: true`` (or a reason: the operation gets an
approval gate) and ``arguments`` (per argument: ``description``, ``default``, or ``pin``). The wizard
applies it on every import and leaves ``curation.applied.json`` beside it: the spec's operations, the
argument names each had, the overlay's digest and the problems the import found. Checking a package
(``check``, ``compile``, publish) holds the overlay against that record, so an entry whose operation
left the spec, an overlay edited after the import, or a problem the import reported refuses the
package at its line of ``curation.yaml``.

Everything here is pure: parsing, resolving entries to operations, and the package check.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from skillhouse.records import field, record
from skillhouse.skill.errors import INVALID_CURATION, STALE_CURATION, SkillError, close_matches
from skillhouse.skill.files import CURATION_FILE, RECORD_FILE
from skillhouse.skill.frontmatter import decode_utf8, parse_yaml_mapping

RECORD_FORMAT: Final = "skillhouse.curation-applied/1"
ENTRY_KEYS: Final = ("name", "description", "hide", "consequential", "arguments")
ARGUMENT_KEYS: Final = ("description", "default", "pin")
HTTP_METHODS: Final = ("GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE")
OPERATION_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
RESERVED_NAMES: Final = frozenset({"skill"})
_ABSENT: Any = object()


@record(frozen=True)
class ArgumentCuration:
    """What the overlay says about one argument of an operation."""

    name: str
    line: int
    description: str | None = None
    default: Any = _ABSENT
    pin: Any = _ABSENT

    @property
    def has_default(self) -> bool:
        return self.default is not _ABSENT

    @property
    def has_pin(self) -> bool:
        return self.pin is not _ABSENT


@record(frozen=True)
class OperationCuration:
    """One entry of the overlay: the operation it names and what changes."""

    key: str
    """The identity as written: an ``operationId`` or ``METHOD /path``."""
    line: int
    name: str | None = None
    description: str | None = None
    hide: bool = False
    consequential: bool | str = False
    """``True``, or the approval gate's reason."""
    arguments: tuple[ArgumentCuration, ...] = ()
    lines: dict[str, int] = field(default_factory=dict)
    """The line of each key of the entry."""

    def line_of(self, key: str) -> int:
        return self.lines.get(key, self.line)


@record(frozen=True)
class Curation:
    """A parsed ``curation.yaml``: its entries (the valid ones) and its digest."""

    shown: str
    """How errors name the file (``petstore/curation.yaml``)."""
    digest: str
    entries: tuple[OperationCuration, ...] = ()

    def error(self, line: int, code: str, message: str) -> SkillError:
        return SkillError(self.shown, line, code, message)


@record(frozen=True)
class OperationIdentity:
    """An operation of the spec as the overlay can name it."""

    method: str
    path: str
    operation_id: str | None

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}" + (f" ({self.operation_id})" if self.operation_id else "")


def curation_digest(text: str) -> str:
    """``sha256:<hex>`` of the overlay's text with line ends normalized (an upload may change them)."""
    normal = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return "sha256:" + hashlib.sha256(normal.encode("utf-8")).hexdigest()


def read_curation(shown: str, raw: bytes | str) -> tuple[Curation, list[SkillError]]:
    """Parse ``curation.yaml``: the valid entries, and a located error for everything else."""
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    text = decode_utf8(shown, data)
    if isinstance(text, SkillError):
        return Curation(shown, curation_digest("")), [text]
    curation = Curation(shown, curation_digest(text))
    parsed, yaml_errors = parse_yaml_mapping(shown, text, first_line=1)
    if parsed is None:
        return curation, [SkillError(e.file, e.line, INVALID_CURATION, e.message) for e in yaml_errors]
    root, lines, _ = parsed
    errors: list[SkillError] = []
    for key in root:
        if key != "operations":
            errors.append(curation.error(lines[(key,)], INVALID_CURATION, f"unknown key {key!r}{_hint(key, ['operations'])}; "
                                         "the overlay is 'operations:' with an entry per operation"))  # fmt: skip
    operations = root.get("operations")
    if operations is None:
        return curation, errors
    if not isinstance(operations, dict):
        errors.append(curation.error(lines[("operations",)], INVALID_CURATION,
                                     "operations must map an operationId or 'METHOD /path' to its changes"))  # fmt: skip
        return curation, errors
    entries = []
    for key, value in operations.items():
        entry = _entry(curation, key, value, lines, errors)
        if entry is not None:
            entries.append(entry)
    return Curation(curation.shown, curation.digest, tuple(entries)), errors


def _entry(
    curation: Curation, key: str, value: Any, lines: Mapping[tuple[str | int, ...], int], errors: list[SkillError]
) -> OperationCuration | None:
    at = ("operations", key)
    line = lines[at]
    before = len(errors)

    def fail(where: tuple[str | int, ...], message: str) -> None:
        errors.append(curation.error(lines.get((*at, *where), line), INVALID_CURATION, f"operations.{key}: {message}"))

    if " " in key.strip():
        method, _, path = key.strip().partition(" ")
        if method.upper() not in HTTP_METHODS or not path.strip().startswith("/"):
            fail((), "an operation is named by its operationId or as 'METHOD /path' (e.g. 'GET /pets/{petId}')")
    if not isinstance(value, dict) or not value:
        fail((), "each entry is a mapping of changes: " + ", ".join(ENTRY_KEYS))
        return None
    for name in value:
        if name not in ENTRY_KEYS:
            fail((name,), f"unknown key {name!r}{_hint(name, ENTRY_KEYS)}; allowed: {', '.join(ENTRY_KEYS)}")
    new_name = value.get("name")
    if new_name is not None and (not isinstance(new_name, str) or not OPERATION_NAME.match(new_name)):
        fail(("name",), "name must be 1-64 letters, digits, '_' or '-' (the tool is named <skill>_<name>)")
    elif isinstance(new_name, str) and new_name.lower() in RESERVED_NAMES:
        fail(("name",), f"name {new_name!r} is reserved (SKILL.md); choose another")
    description = value.get("description")
    if description is not None and (not isinstance(description, str) or not description.strip()):
        fail(("description",), "description must be non-empty text")
    hide = value.get("hide", False)
    if not isinstance(hide, bool):
        fail(("hide",), "hide must be true or false")
    elif hide and any(k in value for k in ENTRY_KEYS if k != "hide"):
        fail(("hide",), "a hidden operation is not a tool, so its other changes would do nothing; keep only 'hide: true'")
    consequential = value.get("consequential", False)
    if not isinstance(consequential, bool) and (not isinstance(consequential, str) or not consequential.strip()):
        fail(("consequential",), "consequential must be true, false, or the approval's reason as text")
    arguments = _arguments(value.get("arguments"), at, lines, fail)
    if len(errors) > before:
        return None
    entry_lines = {k: lines[(*at, k)] for k in value if (*at, k) in lines}
    return OperationCuration(
        key=key.strip(),
        line=line,
        name=new_name,
        description=description.strip() if isinstance(description, str) else None,
        hide=hide is True,
        consequential=consequential.strip() if isinstance(consequential, str) else consequential is True,
        arguments=arguments,
        lines=entry_lines,
    )


def _arguments(
    value: Any, at: tuple[str, ...], lines: Mapping[tuple[str | int, ...], int], fail: Callable[[tuple[str | int, ...], str], None]
) -> tuple[ArgumentCuration, ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or not value:
        fail(("arguments",), "arguments must map argument names to {description, default or pin}")
        return ()
    out = []
    for name, change in value.items():
        where = ("arguments", name)
        if not isinstance(change, dict) or not change:
            fail(where, f"argument {name!r}: give a mapping with one of {', '.join(ARGUMENT_KEYS)}")
            continue
        for key in change:
            if key not in ARGUMENT_KEYS:
                fail((*where, key), f"argument {name!r}: unknown key {key!r}{_hint(key, ARGUMENT_KEYS)}; "
                     f"allowed: {', '.join(ARGUMENT_KEYS)}")  # fmt: skip
        if "default" in change and "pin" in change:
            fail((*where, "pin"), f"argument {name!r}: a pinned value is always sent, so it has no default; keep one")
        if "pin" in change and "description" in change:
            fail((*where, "description"), f"argument {name!r}: a pinned argument leaves the tool, so nobody reads its description")
        described = change.get("description")
        if described is not None and (not isinstance(described, str) or not described.strip()):
            fail((*where, "description"), f"argument {name!r}: description must be non-empty text")
        for key in ("default", "pin"):
            if key in change and not json_value(change[key]):
                fail((*where, key), f"argument {name!r}: {key} must be a JSON value (YAML reads unquoted dates and "
                     "times as timestamps: quote them)")  # fmt: skip
        out.append(
            ArgumentCuration(
                name=name,
                line=lines.get((*at, *where), lines.get(at, 1)),
                description=described.strip() if isinstance(described, str) else None,
                default=change.get("default", _ABSENT),
                pin=change.get("pin", _ABSENT),
            )
        )
    return tuple(out)


def json_value(value: Any) -> bool:
    """Whether ``value`` is plain JSON (what YAML gives for dates and times is not)."""
    if value is None or isinstance(value, bool | str | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and json_value(v) for k, v in value.items())
    return False


def resolve(
    curation: Curation, operations: Sequence[OperationIdentity]
) -> tuple[dict[int, OperationCuration], list[SkillError]]:
    """Each entry's operation (by index in ``operations``), and a located error for each entry that names none."""
    by_id = {op.operation_id: index for index, op in enumerate(operations) if op.operation_id}
    by_route = {(op.method, op.path): index for index, op in enumerate(operations)}
    found: dict[int, OperationCuration] = {}
    errors: list[SkillError] = []
    for entry in curation.entries:
        index = _lookup(entry.key, by_id, by_route)
        if index is None:
            errors.append(curation.error(entry.line, STALE_CURATION, stale_operation_message(entry.key, operations)))
        elif index in found:
            first = found[index]
            errors.append(curation.error(entry.line, INVALID_CURATION,
                                         f"operations.{entry.key} names {operations[index].label}, as "
                                         f"operations.{first.key} (line {first.line}) does; merge the two entries"))  # fmt: skip
        else:
            found[index] = entry
    return found, errors


def _lookup(key: str, by_id: dict[str, int], by_route: dict[tuple[str, str], int]) -> int | None:
    if key in by_id:
        return by_id[key]
    method, _, path = key.partition(" ")
    return by_route.get((method.upper(), path.strip()))


def stale_operation_message(key: str, operations: Sequence[OperationIdentity]) -> str:
    method, _, path = key.partition(" ")
    if path:  # a route is suggested only with its own method: another method is another operation
        names = [f"{op.method} {op.path}" for op in operations if op.method == method.upper()]
    else:
        names = [op.operation_id for op in operations if op.operation_id]
    near = close_matches(key, names, n=1, cutoff=0.75)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return (
        f"operations.{key}: the spec has no operation {key!r}{hint}; it was removed or renamed. "
        "Remove the entry, or key it by the operation's new operationId or 'METHOD /path'"
    )


def unknown_argument_message(key: str, argument: str, arguments: Iterable[str]) -> str:
    known = sorted(arguments)
    near = close_matches(argument, known, n=1)
    hint = f"did you mean {near[0]!r}? " if near else ""
    return (
        f"operations.{key}.arguments.{argument}: the operation has no argument {argument!r}; {hint}"
        f"its arguments: {', '.join(known) or 'none'}"
    )


def check_curation(files: Mapping[str, bytes | str], where: Callable[[str], str]) -> list[SkillError]:
    """The package's overlay held against the record of its last import; ``[]`` for a package without one.

    ``where`` names a file of the package as errors show it.
    """
    if CURATION_FILE not in files:
        return []
    curation, errors = read_curation(where(CURATION_FILE), files[CURATION_FILE])
    rerun = "re-import the spec into this skill's directory (skillhouse import-openapi SPEC --out DIR) to apply it"
    raw = files.get(RECORD_FILE)
    record = _record(raw)
    if record is None:
        state = "has no record of being applied" if raw is None else f"has an unreadable {RECORD_FILE}"
        return [*errors, curation.error(1, STALE_CURATION, f"{CURATION_FILE} {state}; {rerun}")]
    changed = record["curation"] != curation.digest
    if changed:
        errors.append(curation.error(1, STALE_CURATION, f"{CURATION_FILE} changed since the skill was imported; {rerun}"))
    operations = [OperationIdentity(op["method"], op["path"], op.get("operationId")) for op in record["operations"]]
    resolved, resolve_errors = resolve(curation, operations)
    errors.extend(resolve_errors)
    for index, entry in resolved.items():
        known = record["operations"][index].get("arguments")
        if known is None:
            continue  # not built (filtered out, hidden or skipped): nothing to hold the arguments against
        for argument in entry.arguments:
            if argument.name not in known:
                errors.append(curation.error(argument.line, STALE_CURATION, unknown_argument_message(entry.key, argument.name, known)))
    # the import's problems are at lines of the overlay it read; once edited, only a re-import says
    for problem in [] if changed else record["problems"]:
        errors.append(curation.error(int(problem["line"]), str(problem["code"]), str(problem["message"])))
    return sorted(set(errors))


def _record(raw: bytes | str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT or not isinstance(data.get("curation"), str):
        return None
    operations, problems = data.get("operations"), data.get("problems")
    if not isinstance(operations, list) or not isinstance(problems, list):
        return None
    for op in operations:
        if not isinstance(op, dict) or not isinstance(op.get("method"), str) or not isinstance(op.get("path"), str):
            return None
        if not isinstance(op.get("operationId"), str | None) or not isinstance(op.get("arguments"), list | None):
            return None
    if not all(isinstance(p, dict) and isinstance(p.get("line"), int) and isinstance(p.get("message"), str)
               and p.get("code") in (INVALID_CURATION, STALE_CURATION) for p in problems):  # fmt: skip
        return None
    return data


def record_text(curation: Curation, operations: Sequence[dict[str, Any]], problems: Iterable[SkillError]) -> str:
    """``curation.applied.json``: what the check holds the overlay against."""
    document = {
        "format": RECORD_FORMAT,
        "curation": curation.digest,
        "operations": list(operations),
        "problems": [{"line": p.line, "code": p.code, "message": p.message} for p in sorted(set(problems))],
    }
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def _hint(word: str, choices: Iterable[str]) -> str:
    near = close_matches(word, list(choices), n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""
