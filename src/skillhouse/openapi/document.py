"""Reading an OpenAPI or Swagger document and following its ``$ref``s.

A spec is JSON or YAML (JSON is tried first: it is much faster and some JSON specs hold escapes
YAML refuses). References point inside the file (``#/components/schemas/Pet``), to files beside
it (``common.yaml#/Pet``) or, when allowed, further (``references.py`` says where they may lead);
each document is read once. A reference that cannot be followed is recorded with its reason.
Nothing here converts: it only finds nodes.
"""

from __future__ import annotations

import codecs
import functools
import json
import os
import re
import stat
from json.encoder import encode_basestring_ascii
from pathlib import Path
from urllib.parse import unquote

from skillhouse.errors import CallerError
from skillhouse.openapi.references import (
    BAD_POINTER,
    CYCLE,
    MAX_FILES,
    MISSING_FILE,
    NOT_A_REFERENCE,
    REMOTE_FAILED,
    TOO_MANY_FILES,
    UNREADABLE_FILE,
    RefPolicy,
    RefProblem,
    Spot,
    Target,
    locate,
    walk_pointer,
)
from skillhouse.records import field, record

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonObject

MAX_SPEC_BYTES = 64 * 1024 * 1024


class SpecError(CallerError):
    """The spec itself cannot be read (``invalid-spec``): the only failure that stops a whole import; the
    message says where and what to do. An operation that cannot become a tool is skipped and reported instead."""

    code = "invalid-spec"


@functools.cache
def spec_loader() -> Any:
    """PyYAML's safe loader (the C one where libyaml is built in) without timestamp resolution:
    ``2020-01-01`` stays the string the spec wrote. Made on first use: a JSON spec never loads PyYAML."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader: Any = type("SpecLoader", (base,), {"__doc__": spec_loader.__doc__})
    loader.yaml_implicit_resolvers = {
        first: [(tag, regex) for tag, regex in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return loader


def parse_spec_text(data: bytes, where: str) -> Any:
    """Parse ``data`` as JSON, or as YAML when it is not JSON; :class:`SpecError` when neither."""
    if len(data) > MAX_SPEC_BYTES:
        raise SpecError(f"{where}: the file is larger than {MAX_SPEC_BYTES} bytes")
    start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    escaped = _ascii_json(data, start, where) if _JSON_START.match(data, start) else None
    if escaped is not None:
        text, escapes = escaped
        del data, escaped
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            pass  # YAML is a superset of JSON in practice; let it explain the problem
        return _parse_yaml(_unescaped(text, escapes).encode("utf-8"), where)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{where}: not UTF-8 (byte {exc.start})") from None
    # The caller hands the bytes over, so only one copy of the spec is held beside the data being built:
    # the text for JSON; for YAML the UTF-8 bytes, which libyaml reads as they are (given the text, it
    # would make them again, and one non-Latin-1 character makes the text two or four bytes a character).
    if text.lstrip().startswith(("{", "[")):
        del data
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            pass  # YAML is a superset of JSON in practice; let it explain the problem
        encoded = text.encode("utf-8")
    else:
        del text
        encoded = data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data  # the text's exact UTF-8
        del data
    return _parse_yaml(encoded, where)


def _parse_yaml(encoded: bytes, where: str) -> Any:
    import yaml  # here: a JSON spec never needs it

    from skillhouse.openapi import yaml_events

    try:
        try:
            return yaml_events.load(encoded)
        except yaml_events.Unsupported:
            return yaml.load(encoded.decode("utf-8"), Loader=spec_loader())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise SpecError(f"{where}{line}: malformed YAML or JSON: {exc.problem or exc.context}") from None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        raise SpecError(f"{where}: malformed YAML or JSON: {exc}") from None


_JSON_START = re.compile(rb"[ \t\n\r\x0b\x0c]*[{\[]")
_CHUNK = 4096
_BEYOND_ASCII = re.compile(r"[^\x00-\x7f]+")


def _ascii_json(data: bytes, start: int, where: str) -> tuple[str, list[tuple[int, int, str]]] | None:
    """``data[start:]`` (UTF-8 JSON) as text with every character beyond ASCII written as a JSON escape, and
    where the text was changed (each changed stretch's offset and length, and what it was).

    One character beyond Latin-1 makes a decoded text two or four bytes a character (Jira's spec: 3.4 MB
    for 1.7 MB of UTF-8), and the text is held while the spec is parsed, the import's peak then; escaped,
    it is ASCII, and parses to the same value (outside a string, such a character is no JSON either way).
    The bytes are taken a few kilobytes at a time, so only the stretches with such characters are decoded
    and searched. :class:`SpecError` names the first byte that is not UTF-8, as decoding the whole would.

    ``None`` when such a character is escaped by a backslash: that is no JSON (an escape is ASCII), and the
    escaped text would be, spelling a backslash and a ``u`` where there was neither; such a text is
    decoded and parsed as it is.
    """
    if data.isascii():
        return data.decode("ascii"), []
    escapes: list[tuple[int, int, str]] = []
    with memoryview(data) as view:
        parts: list[bytes | memoryview] = []
        size, position, length = 0, start, len(data)
        while position < length:
            end = min(position + _CHUNK, length)
            while end < length and data[end] >= 0x80:  # a character (or a run of them) is never split
                end += 1
            piece = data[position:end]
            if piece.isascii():
                parts.append(view[position:end])
                size += end - position
            else:
                try:
                    chars = piece.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise SpecError(f"{where}: not UTF-8 (byte {position - start + exc.start})") from None
                if any(_escaping(chars, run.start(), data, position, start) for run in _BEYOND_ASCII.finditer(chars)):
                    parts.clear()  # the views into data go before the memoryview is released
                    return None
                escaped = _BEYOND_ASCII.sub(lambda run: encode_basestring_ascii(run.group())[1:-1], chars).encode("ascii")
                escapes.append((size, len(escaped), chars))
                parts.append(escaped)
                size += len(escaped)
            position = end
        joined = b"".join(parts)
        del parts
    # decoded before any large block is freed: freeing one raises the allocator's threshold for mapping a
    # block of its own, and the text, then made in the heap, would leave a hole of its size there once parsed
    text = joined.decode("ascii")
    del joined
    return text, escapes


def _escaping(chars: str, index: int, data: bytes, position: int, start: int) -> bool:
    """Whether the character at ``index`` of ``chars`` (the text of ``data[position:]``) follows an odd run of
    backslashes, so it would be escaped by the last of them (counted back into ``data`` down to ``start``)."""
    at, count = index - 1, 0
    while at >= 0 and chars[at] == "\\":
        at, count = at - 1, count + 1
    if at < 0:  # the run reaches the stretch's start: the bytes before it are ASCII, a backslash one byte
        at = position - 1
        while at >= start and data[at] == 0x5C:
            at, count = at - 1, count + 1
    return count % 2 == 1


def _unescaped(text: str, escapes: list[tuple[int, int, str]]) -> str:
    """The text :func:`_ascii_json` was given, back from its result and the runs it escaped."""
    parts, position = [], 0
    for offset, length, chars in escapes:
        parts += [text[position:offset], chars]
        position = offset + length
    parts.append(text[position:])
    return "".join(parts)


class Unresolved(Exception):
    """A reference the operation cannot do without (its operation, path item, parameter or body) could not be followed."""

    def __init__(self, problem: RefProblem, what: str) -> None:
        super().__init__(f"{what}: {problem.text()}")
        self.problem = problem


@record
class SpecDocument:
    """The root spec and any documents its references reach, keyed by path relative to the spec's directory ("" for the root)."""

    root: JsonObject
    base: Path | None
    """Directory that relative file references start from; ``None`` for an in-memory spec."""
    files: JsonObject = field(default_factory=dict)
    policy: RefPolicy = field(default_factory=RefPolicy)
    spec_file: Path | None = None
    problems: list[RefProblem] = field(default_factory=list)
    """Every reference that could not be followed, in the order met (a reference met twice is listed twice)."""
    _failed: dict[str, RefProblem] = field(default_factory=dict)
    _located: dict[tuple[str, str], str | RefProblem] = field(default_factory=dict)
    _found: dict[tuple[str, str], tuple[Any, str, str]] = field(default_factory=dict)
    """Each reference followed, by the document it is written in: a spec refers to the same few
    components (an error response, a shared schema) hundreds of times."""
    _stamp: tuple[int, int, int] | None = None
    """The spec file's inode, size and modification time as read, when it is a regular file: only such a
    file's path items are released (a pipe cannot be read again), and only while the file is unchanged.
    ``None`` too once a reference into ``paths`` had the spec read again: path items are kept from then on."""
    _dropped: bool = False
    """Whether :meth:`release_path_item` has dropped a path item from :attr:`root` (since it was read)."""

    @property
    def version(self) -> str:
        """``"2.0"``, ``"3.0"`` or ``"3.1"``."""
        if str(self.root.get("swagger", "")).startswith("2"):
            return "2.0"
        return "3.1" if str(self.root.get("openapi", "")).startswith("3.1") else "3.0"

    def resolve(self, ref: Any, doc: str) -> tuple[Any, str, str] | None:
        """The node ``ref`` (written in document ``doc``) points to, its document, and its canonical key.

        Returns ``None`` when the reference cannot be followed; the reason is added to :attr:`problems`.
        """
        found = self.locate(ref, doc)
        if isinstance(found, RefProblem):
            self.problems.append(found)
            return None
        return found

    def locate(self, ref: Any, doc: str, at: str = "") -> tuple[Any, str, str] | RefProblem:
        """As :meth:`resolve`, with the reason instead of ``None`` (and nothing recorded).

        ``at`` is the JSON pointer of the object holding the reference, for the problem's location.
        """
        if isinstance(ref, str):
            known = self._found.get((doc, ref))
            if known is not None:
                return known
        where = self.label(doc)
        if not isinstance(ref, str):
            return RefProblem(NOT_A_REFERENCE, where, repr(ref)[:80], "is not a string, so it is not a reference", at)
        file_part, _, pointer = ref.partition("#")
        target_doc = doc
        if file_part:
            target = self._load(file_part, doc)
            if isinstance(target, RefProblem):  # located where this reference is written, whoever met the file first
                return RefProblem(target.code, where, ref, target.message, at)
            target_doc = target
        if pointer and not pointer.startswith("/"):
            return RefProblem(BAD_POINTER, where, ref, f"has the fragment {pointer!r}, which is not a JSON pointer (anchors are not followed)", at)
        if target_doc == "" and self._dropped and _reaches_paths(pointer):
            self._read_root_again()
        node, missing = walk_pointer(self.root if target_doc == "" else self.files[target_doc], pointer)
        if missing is not None:
            return RefProblem(BAD_POINTER, where, ref, f"points at nothing: {self.label(target_doc)} has no {missing!r} on the way to {pointer!r}", at)
        found = self._found[(doc, ref)] = (node, target_doc, f"{target_doc}#{pointer}")
        return found

    def release_path_item(self, path: str) -> None:
        """Drop path item ``path`` from the root spec read from :attr:`spec_file`, its operations converted.

        The import holds the parsed spec while every operation's files pile up, and the path items are
        most of many specs (Jira's: three quarters), so each is freed once done with. A reference that
        later leads into ``paths`` (or to the whole spec) reads the spec from its file again and finds
        what it always would; path items are then kept.
        """
        paths = self.root.get("paths")
        if self._stamp is not None and isinstance(paths, dict) and path in paths:
            del paths[path]
            self._dropped = True

    def _read_root_again(self) -> None:
        assert self.spec_file is not None  # only a spec read from a file has path items released
        try:
            root, stamp = _parse_file(self.spec_file)
        except OSError as exc:
            raise SpecError(f"{self.spec_file}: cannot read it again: {exc.strerror or exc}") from None
        if stamp != self._stamp:  # what was dropped is not what the file holds now
            raise SpecError(f"{self.spec_file}: the file changed while it was being imported; import it again")
        self.root, self._stamp, self._dropped = root, None, False

    def deref(self, node: Any, doc: str, limit: int = 32) -> tuple[Any, str]:
        """Follow ``$ref`` chains from ``node`` to a node that is not a reference (or ``{}``, recorded in :attr:`problems`)."""
        try:
            found, spot = self.follow(node, Spot(doc), "reference", limit)
        except Unresolved as exc:
            self.problems.append(exc.problem)
            return {}, doc
        return found, spot.doc

    def follow(self, node: Any, spot: Spot, what: str, limit: int = 32) -> tuple[Any, Spot]:
        """The node ``node`` (found at ``spot``) is or refers to, and where that is.

        Raises :class:`Unresolved` (naming ``what`` was referred to, and where) when a reference fails.
        """
        first, start = (node.get("$ref") if isinstance(node, dict) else None), spot
        for _ in range(limit):
            if not (isinstance(node, dict) and "$ref" in node):
                return node, spot
            found = self.locate(node["$ref"], spot.doc, spot.at)
            if isinstance(found, RefProblem):
                raise Unresolved(found, what)
            node, doc, key = found
            spot = Spot(doc, key.partition("#")[2])
        cycle = RefProblem(CYCLE, self.label(start.doc), str(first), f"is a chain of more than {limit} references (a cycle?)", start.at)
        raise Unresolved(cycle, what)

    def label(self, doc: str) -> str:
        """How the report names document ``doc``."""
        if doc:
            return doc
        return self.spec_file.name if self.spec_file is not None else "spec"

    def _load(self, document_part: str, from_doc: str) -> str | RefProblem:
        """The key of the document ``document_part`` (written in ``from_doc``) names, read on first use."""
        known = self._located.get((from_doc, document_part))
        if known is None:  # the same reference from the same file resolves the same way: no path work again
            known = self._located[(from_doc, document_part)] = self._open(document_part, from_doc)
        return known

    def _open(self, document_part: str, from_doc: str) -> str | RefProblem:
        target = locate(document_part, from_doc, self.base, self.spec_file, self.policy)
        if isinstance(target, RefProblem) or target.key == "" or target.key in self.files:
            return target if isinstance(target, RefProblem) else target.key
        if target.key in self._failed:
            return self._failed[target.key]
        where = self.label(from_doc)
        try:
            if len(self.files) >= MAX_FILES:
                raise _Refused(TOO_MANY_FILES, f"would be document number {MAX_FILES + 1}; a spec may reach at most {MAX_FILES}")
            self.files[target.key] = parse_spec_text(self._read(target), target.key)
        except _Refused as exc:
            self._failed[target.key] = RefProblem(exc.code, where, document_part, exc.message)
            return self._failed[target.key]
        except SpecError as exc:
            self._failed[target.key] = RefProblem(UNREADABLE_FILE, where, document_part, f"names a document that cannot be parsed: {exc}")
            return self._failed[target.key]
        return target.key

    def _read(self, target: Target) -> bytes:
        if target.url is not None:
            assert self.policy.fetch is not None  # locate refuses remote references without a fetcher
            try:
                return self.policy.fetch(target.url)
            except (OSError, ValueError) as exc:
                raise _Refused(REMOTE_FAILED, f"could not be fetched from {target.url}: {exc}") from None
        assert target.path is not None
        try:
            return target.path.read_bytes()
        except FileNotFoundError:
            raise _Refused(MISSING_FILE, f"names the file {target.key}, which does not exist") from None
        except OSError as exc:
            raise _Refused(MISSING_FILE, f"names the file {target.key}, which cannot be read: {exc.strerror or exc}") from None


def _reaches_paths(pointer: str) -> bool:
    """Whether JSON pointer ``pointer`` in the root spec is the whole spec, or leads into its ``paths``."""
    first = pointer.split("/", 2)[1] if pointer.startswith("/") else ""
    return not pointer or unquote(first).replace("~1", "/").replace("~0", "~") == "paths"


class _Refused(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def load_spec(path: str | Path, policy: RefPolicy | None = None) -> SpecDocument:
    """Read the spec at ``path``; :class:`SpecError` when it is not an OpenAPI or Swagger document.

    ``policy`` says where its references may lead beyond its own directory tree (nowhere by default).
    """
    source = Path(path)
    try:
        root, stamp = _parse_file(source)
    except OSError as exc:
        raise SpecError(f"{source}: cannot read: {exc.strerror or exc}") from None
    document = spec_from_data(root, source.resolve().parent, str(source))
    document.policy = policy or RefPolicy()
    document.spec_file = source.resolve()
    document._stamp = stamp
    return document


def _parse_file(source: Path) -> tuple[Any, tuple[int, int, int] | None]:
    """The spec in ``source`` parsed, and the file's inode, size and modification time when it is a regular
    file read whole (else ``None``). The bytes are handed straight over, so the parse can free them."""
    with open(source, "rb") as file:
        status = os.fstat(file.fileno())
        root = parse_spec_text(file.read(), str(source))
        regular = stat.S_ISREG(status.st_mode) and file.tell() == status.st_size
    return root, (status.st_ino, status.st_size, status.st_mtime_ns) if regular else None


def spec_from_data(root: Any, base: Path | None = None, where: str = "spec") -> SpecDocument:
    """Wrap an already-parsed document; :class:`SpecError` when it is not OpenAPI 2.0/3.x."""
    if not isinstance(root, dict):
        raise SpecError(f"{where}: an OpenAPI document is a mapping at the top level")
    if not ("openapi" in root or "swagger" in root):
        raise SpecError(f"{where}: neither 'openapi' nor 'swagger' is set; is this an OpenAPI document?")
    version = str(root.get("openapi", root.get("swagger", "")))
    if not version.startswith(("2", "3.0", "3.1")):
        raise SpecError(f"{where}: OpenAPI version {version!r} is not supported (2.0, 3.0 and 3.1 are)")
    if not isinstance(root.get("paths", {}), dict):
        raise SpecError(f"{where}: 'paths' must be a mapping of paths to operations")
    return SpecDocument(root, base)
