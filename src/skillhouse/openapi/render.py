"""The text of the files the wizard writes: SKILL.md, one operation file each, ``types.json``.

The operation block is YAML; its schema is a block of JSON (ASCII only, so no character YAML
refuses can reach the parser). Prose comes from the operation's summary and description.
"""

from __future__ import annotations

import re

from skillhouse.compiler.expansion import compact_json
from skillhouse.compiler.forms import written_plain
from skillhouse.openapi.json_block import indented_json
from skillhouse.openapi.operations import BuiltOperation
from skillhouse.openapi.schemas import carried_text
from skillhouse.skill.frontmatter import Frontmatter, MarkdownFile, RenderedJson

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonObject, JsonSchema

MAX_DESCRIPTION = 1024
_HANDED_AS_DATA = 16_384
"""Characters of schema text up to which the compile is handed the schema's data; a larger one (a schema
fitted to the size cap, expanded inline) is handed its text, and parsed when compiled."""


def clean_text(value: Any) -> str:
    """``value`` as text that encodes as UTF-8 (lone surrogates replaced), without NUL characters, its
    line breaks ``\n`` (the package reader reads a CR as one, so a written file reads back as rendered)."""
    text = carried_text(value).replace("\x00", "") if isinstance(value, str) else ""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def skill_name(title: str) -> str:
    """A skill name from the spec's title: lowercase letters, digits and single hyphens, at most 64."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:64].strip("-")
    return slug or "api"


def spec_skill_name(root: dict[str, Any], name: str | None) -> str:
    """The skill name the wizard gives a spec, so its overlay can be read before the import."""
    info = root.get("info")
    return name or skill_name(clean_text(info.get("title") if isinstance(info, dict) else None))


def operation_markdown(
    filename: str, built: BuiltOperation, summary: Any, description: Any, deprecated: bool, schema_text: str | None = None
) -> MarkdownFile:
    """The operation file ``filename``: frontmatter with the block and its JSON schema, then the prose.

    ``schema_text`` is ``indented_json(built.schema)`` when the caller has it already.

    It comes with the frontmatter data the reader would parse from the text, so the wizard's compile
    need not parse what it has just written.
    The data is what the text was rendered from: the block, and the schema as the value its JSON text
    (a literal block scalar) was written from (:class:`RenderedJson`). Key lines are not known without
    parsing, so they are left empty: a compile that reports errors reads the text again to place them.
    """
    block = built.block()
    schema = indented_json(built.schema) if schema_text is None else schema_text
    # ASCII JSON has no line break but "\n" (the others are escaped), so this indents every line.
    schema_lines = "    " + schema.replace("\n", "\n    ")
    prose = _prose(clean_text(summary).strip(), clean_text(description).strip(), built)
    if deprecated:
        prose += "\n\nDeprecated by the API provider."
    head = f"---\n{_dump({'operation': block})}  schema: |-\n{schema_lines}\n---\n"
    body = f"{prose}\n"
    plain = written_plain(schema)
    if len(schema) <= _HANDED_AS_DATA:
        handed = RenderedJson(built.schema, plain)
    else:  # compact, its text is under half the indented one in the file, and parses to the same value
        handed = RenderedJson.parsed_when_used(compact_json(built.schema), plain)
    front = Frontmatter({"operation": {**block, "schema": handed}}, {}, 1, body, head.count("\n") + 1, {})
    return MarkdownFile(filename, head + body, front)


def _prose(summary: str, description: str, built: BuiltOperation) -> str:
    first = " ".join(summary.split())
    if not first and not description:
        return f"{built.method} {built.url}"
    if not first:
        return description
    if not description or description.startswith(first):
        return description or first
    return f"{first}\n\n{description}"


def manifest_file(
    name: str, info: JsonObject, base_urls: list[str], security: list[str], listing: list[tuple[str, str]]
) -> MarkdownFile:
    """SKILL.md: Agent Skills frontmatter and instructions drawn from the spec's ``info``.

    It comes with the frontmatter data its text was rendered from, as operation files do (see
    :func:`operation_markdown`), so the wizard's compile need not parse it (nor load PyYAML to).
    """
    title = " ".join(clean_text(info.get("title")).split()) or name
    about = clean_text(info.get("description")).strip()
    first = next((p for p in re.split(r"\n\s*\n", about) if p.strip()), "")
    description = " ".join(first.split()) or f"Call the {title} API: {len(listing)} operations."
    if not description.lower().startswith(title.lower()):
        description = f"{title}: {description}"
    if len(description) > MAX_DESCRIPTION:
        description = description[: MAX_DESCRIPTION - 3].rstrip() + "..."
    metadata = {"source": "openapi"}
    version = info.get("version")
    if isinstance(version, str | int | float) and not isinstance(version, bool):
        metadata["version"] = clean_text(str(version))[:64]
    data: JsonObject = {"name": name, "description": description, "metadata": metadata}
    front = _dump(data)
    parts = [f"# {title}", about] if about else [f"# {title}"]
    if base_urls:
        parts.append("Requests go to " + ", ".join(f"`{u}`" for u in base_urls) + ".")
    if security:
        parts.append(
            "The API authenticates with " + ", ".join(security) + ". Credentials are bound to the host in the "
            "gateway; never ask for them or put them in arguments."
        )
    if listing:
        parts.append("## Operations\n\n" + "\n".join(f"- `{stem}`: {summary}" if summary else f"- `{stem}`" for stem, summary in listing))
    head = f"---\n{front}---\n"
    body = "\n\n".join(parts) + "\n"
    return MarkdownFile("SKILL.md", head + body, Frontmatter(data, {}, 1, body, head.count("\n") + 1, {}))


def types_file(types: dict[str, JsonSchema]) -> str:
    return indented_json(types, sort_keys=True, end="\n")


def types_as_read(types: Any) -> Any:
    """What reading :func:`types_file`'s text back gives: ``types`` with every object's keys sorted.

    The wizard hands the compiler this rather than the text to parse: parsing made a second string of
    every name and description in the types beside the ones the converter holds (and two copies of the
    text while it was decoded), 0.7 MB more at the import's peak on OpenAI's spec. Like the parse,
    it shares no container with ``types`` (the converter's schemas are written in their own key order).
    A test holds it equal to the parse, key order and value types included.
    """
    kind = type(types)
    if kind is dict:
        return {key: types_as_read(types[key]) for key in sorted(types)}
    if kind is list:
        return [types_as_read(item) for item in types]
    return types


def _dump(data: JsonObject) -> str:
    fast = _block_yaml(data)
    if fast is not None:
        return fast
    import yaml  # here: most files are written without it (below), and its import is slow

    dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return str(yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1_000_000))


# PyYAML's dumper builds events and runs its resolver on every scalar: about a fifth of an import's
# rendering, and importing PyYAML about a tenth of a small import. The blocks the wizard dumps are
# nearly always mappings of mappings, lists and scalars whose text is known without it, following
# the rules PyYAML's resolver and libyaml's emitter apply to a one-line printable ASCII string:
# - whether the resolver would read it back plain as a string: yes when it starts with a letter, "/"
#   or "_" and is none of the words YAML 1.1 reads as a boolean or null (those are quoted), or when it
#   starts with a digit and has two dots or more (no number or timestamp of YAML 1.1 has two), as
#   versions do; a date (2018-11-08) is a timestamp, so it is quoted; any other start is left to PyYAML;
# - then libyaml writes it plain unless a space leads or ends it, it starts with an indicator
#   ("#,[]{}&*!|>'\"%@`", or "-", "?", ":" before a space or at the end, or "---", "..."), or it holds
#   ": ", " #" or ends in ":"; otherwise in single quotes, each quote doubled (the width is too large
#   for a line to be folded).
# Anything else is dumped by PyYAML itself, so the text is always byte for byte its own (a test holds
# the two equal on generated data).
_NOT_STRINGS = frozenset(
    f(word) for word in ("yes", "no", "true", "false", "on", "off", "null") for f in (str.lower, str.title, str.upper)
)
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_SAFE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,99}")
_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
_MAX_SCALAR = 4096


def _plain(value: object) -> str | None:
    """``value`` as PyYAML writes it in a block mapping or sequence, or ``None`` when this cannot be sure of it."""
    if type(value) is str:
        return _string(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return str(value)
    return None


def _string(value: str) -> str | None:
    if not value or len(value) > _MAX_SCALAR or not value.isascii() or not value.isprintable():
        return None
    first = value[0]
    if value in _NOT_STRINGS or _DATE.fullmatch(value):
        return "'" + value + "'"
    if not (first.isalpha() or first in "/_" or (first.isdigit() and value.count(".") >= 2)):
        return None
    if (
        first in _INDICATORS
        or first == " "
        or value[-1] in " :"
        or value.startswith(("---", "..."))
        or (first in "-?:" and (len(value) == 1 or value[1] == " "))
        or ": " in value
        or " #" in value
    ):
        return "'" + value.replace("'", "''") + "'"
    return value


def _block_yaml(data: JsonObject, indent: str = "") -> str | None:
    """``data`` as ``yaml.dump(data, default_flow_style=False, sort_keys=False)`` writes it, or ``None``."""
    lines: list[str] = []
    for key, value in data.items():
        if type(key) is not str or not _SAFE_KEY.fullmatch(key) or key in _NOT_STRINGS:
            return None
        kind = type(value)
        if kind is dict:
            if not value:
                lines.append(f"{indent}{key}: {{}}\n")
                continue
            inner = _block_yaml(value, indent + "  ")
            if inner is None:
                return None
            lines.append(f"{indent}{key}:\n{inner}")
        elif kind is list:
            if not value:
                lines.append(f"{indent}{key}: []\n")
                continue
            lines.append(f"{indent}{key}:\n")
            for item in value:
                text = _plain(item)
                if text is None:
                    return None
                lines.append(f"{indent}- {text}\n")
        else:
            text = _plain(value)
            if text is None:
                return None
            lines.append(f"{indent}{key}: {text}\n")
    return "".join(lines)
