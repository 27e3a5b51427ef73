"""Markdown files with YAML frontmatter, parsed once with the line of every key kept.

The positions are what let the compiler say ``create_booking.md:7: unknown-qualifier`` instead of
naming only the file. PyYAML's C loader composes the node graph (which carries marks) and constructs
the plain data from it, so the file is read one time.
"""

from __future__ import annotations

import json

from skillhouse.records import field, record
from skillhouse.skill.errors import INVALID_FRONTMATTER, SkillError

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import yaml

    from skillhouse.json_types import JsonObject

# PyYAML is imported where a file is parsed, not with this module: its import (the resolver's and the
# reader's expressions compiled) is about a tenth of a clean OpenAPI import that never parses YAML.

KeyPath = tuple[str | int, ...]


class RenderedJson:
    """In frontmatter data the wizard hands over, an operation's schema: the value its JSON text was written from.

    The OpenAPI wizard writes each operation's schema as JSON text and hands the compiler the data it
    rendered (see :func:`skillhouse.openapi.render.operation_markdown`); the compiler takes ``value``
    where reading the file gives the text to parse (a test holds ``value`` equal to that parse, key order
    and value types included). Only a large schema comes as its text (:meth:`parsed_when_used`): a
    second copy of every schema's text beside its data, held until the compile, was 0.3 MB more at a
    large import's peak memory. ``plain`` is what the compiler would have read from the text: whether it holds
    no reference to expand (:func:`skillhouse.compiler.forms.written_plain`).
    """

    __slots__ = ("_text", "_value", "plain")

    def __init__(self, value: Any, plain: bool, text: str | None = None) -> None:
        self._value = value
        self._text = text
        self.plain = plain

    @classmethod
    def parsed_when_used(cls, text: str, plain: bool) -> RenderedJson:
        """The schema as its JSON text, parsed each time its value is asked for (once, by the compile).

        A large schema's data takes several times the memory of its text, and it would wait for the
        compile beside every other operation's file; the text parses to exactly the value.
        """
        return cls(None, plain, text)

    @property
    def value(self) -> Any:
        return json.loads(self._text) if self._text is not None else self._value


@record(frozen=True)
class Frontmatter:
    """The frontmatter's data, the line of each key, and the Markdown body below it."""

    data: JsonObject
    lines: dict[KeyPath, int]
    """1-based file line of each mapping key (and each sequence item) by its path."""
    start_line: int
    """File line of the opening ``---`` (1), or 0 when the file has no frontmatter."""
    body: str
    body_line: int
    """File line where the body starts."""
    value_lines: dict[KeyPath, int] = field(default_factory=dict)
    """1-based file line where each key's value starts (for block scalars: the indicator line)."""

    def line_of(self, *path: str | int) -> int:
        """The line of the deepest known key on ``path``; the frontmatter's first line otherwise."""
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return max(self.start_line, 1)


@record(frozen=True)
class MarkdownFile:
    """A Markdown file of a skill package: frontmatter (or none) and body."""

    path: str
    text: str
    frontmatter: Frontmatter | None


def decode_utf8(path: str, raw: bytes) -> str | SkillError:
    """``raw`` decoded as UTF-8 (a leading BOM is dropped), or the error saying on which line it is not."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return SkillError(path, line, INVALID_FRONTMATTER, f"the file is not UTF-8 (byte {exc.start}); save it as UTF-8")
    return text.removeprefix("\ufeff")


def split_markdown(path: str, text: str) -> tuple[MarkdownFile | None, list[SkillError]]:
    """Split ``text`` into frontmatter and body and parse the frontmatter.

    A file that does not start with ``---`` has no frontmatter: it is a plain document.
    """
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        return MarkdownFile(path, text, None), []
    end = None
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n").rstrip() in ("---", "..."):
            end = index
            break
    if end is None:
        return None, [
            SkillError(path, 1, INVALID_FRONTMATTER, "frontmatter opened with '---' is never closed; add a '---' line after it")
        ]
    yaml_text = "".join(lines[1:end])
    body = "".join(lines[end + 1 :])
    parsed, errors = parse_yaml_mapping(path, yaml_text, first_line=2)
    if parsed is None:
        return None, errors
    data, key_lines, value_lines = parsed
    front = Frontmatter(data, key_lines, 1, body, end + 2, value_lines)
    return MarkdownFile(path, text, front), errors


def parse_yaml_mapping(
    path: str, yaml_text: str, first_line: int
) -> tuple[tuple[JsonObject, dict[KeyPath, int], dict[KeyPath, int]] | None, list[SkillError]]:
    """Parse YAML that must be a mapping with string keys; keep key and value lines."""
    import yaml

    loader_class: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader where libyaml is built in
    loader = loader_class(yaml_text)
    try:
        node = loader.get_single_node()
        if node is None:
            return ({}, {}, {}), []
        if not isinstance(node, yaml.MappingNode):
            return None, [
                SkillError(
                    path,
                    first_line + node.start_mark.line,
                    INVALID_FRONTMATTER,
                    "frontmatter must be a mapping of keys to values (key: value)",
                )
            ]
        key_lines: dict[KeyPath, int] = {}
        value_lines: dict[KeyPath, int] = {}
        errors: list[SkillError] = []
        _index(path, node, (), first_line, key_lines, value_lines, errors, set())
        if errors:
            return None, errors
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + (mark.line if mark is not None else 0)
        problem = exc.problem or exc.context or "malformed YAML"
        return None, [SkillError(path, line, INVALID_FRONTMATTER, f"malformed YAML: {problem}")]
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        return None, [SkillError(path, first_line, INVALID_FRONTMATTER, f"malformed YAML: {exc}")]
    finally:
        loader.dispose()
    if not isinstance(data, dict):  # pragma: no cover - guarded by the node check above
        return None, [SkillError(path, first_line, INVALID_FRONTMATTER, "frontmatter must be a mapping")]
    return (data, key_lines, value_lines), []


def _index(
    path: str,
    node: yaml.Node,
    at: KeyPath,
    first_line: int,
    key_lines: dict[KeyPath, int],
    value_lines: dict[KeyPath, int],
    errors: list[SkillError],
    seen: set[int],
) -> None:
    import yaml

    # Aliases share nodes; visiting each node once keeps a "billion laughs" document cheap.
    if id(node) in seen:
        return
    seen.add(id(node))
    if len(at) > 64:
        errors.append(SkillError(path, first_line + node.start_mark.line, INVALID_FRONTMATTER, "nesting is too deep"))
        return
    if isinstance(node, yaml.MappingNode):
        names: set[str] = set()
        for key_node, value_node in node.value:
            line = first_line + key_node.start_mark.line
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != "tag:yaml.org,2002:str":
                errors.append(
                    SkillError(path, line, INVALID_FRONTMATTER, "keys must be plain strings; quote this key")
                )
                continue
            name = key_node.value
            if name == "<<":
                errors.append(SkillError(path, line, INVALID_FRONTMATTER, "YAML merge keys ('<<') are not supported"))
                continue
            if name in names:
                errors.append(
                    SkillError(path, line, INVALID_FRONTMATTER, f"key {name!r} is given twice; keep one")
                )
                continue
            names.add(name)
            key_lines[(*at, name)] = line
            value_lines[(*at, name)] = first_line + value_node.start_mark.line
            _index(path, value_node, (*at, name), first_line, key_lines, value_lines, errors, seen)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            key_lines[(*at, index)] = first_line + item.start_mark.line
            _index(path, item, (*at, index), first_line, key_lines, value_lines, errors, seen)
